//go:build !race

package runlog

// raceEnabled: built with the race detector (see race_test.go).
const raceEnabled = false
