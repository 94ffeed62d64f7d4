package sqlite

import (
	"context"

	"github.com/sessionfix/sessionfix/store"
)

// SetFastPath turns the SQL-assisted path (fast.go) on or off; the returned func restores it.
func SetFastPath(on bool) func() {
	old := fastDisabled
	fastDisabled = !on
	return func() { fastDisabled = old }
}

// FastRows is how many rows of the scan the SQL-assisted path read.
func FastRows(snap *store.Snapshot) int64 { return store.StateOf[scanExtra](snap).fastRows }

// WriteCheck is the check Apply runs before COMMIT for a change of targets ("table.column")
// of the database at path.
func WriteCheck(ctx context.Context, path string, targets ...string) (string, error) {
	db, err := openDB(path, modeRO, DefaultBusyTimeout, store.FileID{})
	if err != nil {
		return "", err
	}
	defer db.Close()
	return writeCheck(ctx, db, targets), nil
}

// BatchRows is how many rows one batch of ScanBatches reads at most.
const BatchRows = batchRows

// SetBackupChunk sets how many bytes the backup copy reads and writes at a time; the returned
// func restores it.
func SetBackupChunk(n int) func() {
	old := backupChunk
	backupChunk = n
	return func() { backupChunk = old }
}

// SetLockWaitHook sets the hook rollBackHotJournal runs when its first read found the database
// locked, before the read that waits; it returns a function restoring the previous one.
func SetLockWaitHook(f func()) func() {
	old := lockWaitHook
	lockWaitHook = f
	return func() { lockWaitHook = old }
}
