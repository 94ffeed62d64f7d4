//go:build !race

package rewrite

// raceEnabled: built with the race detector (see race_test.go).
const raceEnabled = false
