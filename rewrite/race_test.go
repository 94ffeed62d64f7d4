//go:build race

package rewrite

// raceEnabled: built with the race detector (its sync.Pool drops items at random, so tests of
// what pools save are skipped).
const raceEnabled = true
