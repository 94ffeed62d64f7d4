//go:build !amd64 || purego

package jsonscan

// classify: classifyGo (no vector version on this architecture, or the purego build tag).
func classify(p []byte, nls []int) (high, ctl bool, _ []int) { return classifyGo(p, nls) }

// classifyIndex: classify, and ix (when not nil) is not to be used (ix.ok false): without
// vector instructions the bitmaps would cost more than they save.
func classifyIndex(p []byte, nls []int, ix *chunkIndex) (high, ctl bool, _ []int) {
	if ix != nil {
		ix.ok = false
	}
	return classifyGo(p, nls)
}

// hasAVX2 is false: this build has no vector classify.
const hasAVX2 = false
