//go:build race

package postgres

// raceEnabled: built with the race detector (it allocates for its own bookkeeping, so tests of
// what a writer allocates are skipped).
const raceEnabled = true
