package jsonl

// SetPrefilterOff turns the literal prefilter and the scanner's shortcuts off for the external
// tests (they compare both ways).
func SetPrefilterOff(off bool) { prefilterOff = off }

// GrowSites is growSites for the tests.
var GrowSites = growSites

// SetBatchSites sets how many sites ScanBatches gathers before handing them out; it returns
// the old value.
func SetBatchSites(n int) int { was := batchSites; batchSites = n; return was }
