package jsonl

// SetPrefilterOff turns the literal prefilter off for the external tests (they compare both
// ways).
func SetPrefilterOff(off bool) { prefilterOff = off }
