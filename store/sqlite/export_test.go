package sqlite

import "github.com/sessionfix/sessionfix/store"

// SetFastPath turns the SQL-assisted path (fast.go) on or off; the returned func restores it.
func SetFastPath(on bool) func() {
	old := fastDisabled
	fastDisabled = !on
	return func() { fastDisabled = old }
}

// FastRows is how many rows of the scan the SQL-assisted path read.
func FastRows(snap *store.Snapshot) int64 { return store.StateOf[scanExtra](snap).fastRows }
