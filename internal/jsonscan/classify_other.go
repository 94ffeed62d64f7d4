//go:build !amd64

package jsonscan

// classify: classifyGo (no vector version on this architecture).
func classify(p []byte, nls []int) (high, ctl bool, _ []int) { return classifyGo(p, nls) }
