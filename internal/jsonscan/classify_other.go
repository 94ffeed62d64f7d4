//go:build !amd64 || purego

package jsonscan

// classify: classifyGo (no vector version on this architecture, or the purego build tag).
func classify(p []byte, nls []int) (high, ctl bool, _ []int) { return classifyGo(p, nls) }

// hasAVX2 is false: this build has no vector classify.
const hasAVX2 = false
