//go:build race

package runlog

// raceEnabled: built with the race detector (it allocates for its own bookkeeping, so tests of
// what the journal and the manifest allocate are skipped).
const raceEnabled = true
