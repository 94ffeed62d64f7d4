//go:build !race

package postgres

// raceEnabled: built with the race detector (see race_test.go).
const raceEnabled = false
