package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/all"
)

// UndoRun restores the run in dir (m: its manifest, read and checked with rewrite.ReadRun and
// rewrite.CheckRun) through rewrite.UndoRun, reopening every store with store/all (busy: the
// SQLite write-lock wait; a hot SQLite journal is rolled back before the store is checked).
// force restores stores that changed since the run. The error is a usage error for a bad
// option, else rewrite.UndoRun's (the outcomes so far are still returned).
func UndoRun(ctx context.Context, dir string, m *rewrite.Manifest, busy time.Duration, force bool, now func() time.Time) ([]rewrite.UndoOutcome, error) {
	sopt, err := StoreOptions("", busy)
	if err != nil {
		return nil, err
	}
	sopt.SQLite.RollBack = true
	open := func(ref store.Ref) (store.Store, error) { return all.Reopen(ctx, ref, sopt) }
	outs, _, err := rewrite.UndoRun(ctx, dir, m, open, force, now)
	return outs, err
}

// Undo statuses (undo --format json's files[].status).
const (
	UndoRestored = "restored" // restored (Late: then something failed, or the agent appended)
	UndoAlready  = "already"  // restored by an earlier undo
	UndoChanged  = "changed"  // refused: changed since the run (--force restores it)
	UndoInUse    = "in-use"   // refused: an agent holds it
	UndoFailed   = "failed"
)

// UndoTally counts an undo's outcomes by status. Restored includes Late (restored, then a
// *fileio.CommittedError: a directory fsync failed or a carried-over append); LateInUse are the
// Late ones whose error is store.ErrInUse; RestoredDBs the restored SQLite stores.
type UndoTally struct {
	Restored, RestoredDBs, Changed, InUse, Failed, Late, LateInUse int
}

// Add counts o and returns its status and whether it is Late.
func (t *UndoTally) Add(o rewrite.UndoOutcome) (status string, late bool) {
	var ce *fileio.CommittedError
	switch {
	case o.Already:
		return UndoAlready, false
	case o.Err == nil || errors.As(o.Err, &ce):
		t.Restored++
		if o.Ref.Kind == store.KindSQLite {
			t.RestoredDBs++
		}
		if o.Err == nil {
			return UndoRestored, false
		}
		t.Late++
		if errors.Is(o.Err, store.ErrInUse) {
			t.LateInUse++
		}
		return UndoRestored, true
	case errors.Is(o.Err, store.ErrChangedSinceRun):
		t.Changed++
		return UndoChanged, false
	case errors.Is(o.Err, store.ErrInUse):
		t.InUse++
		return UndoInUse, false
	default:
		t.Failed++
		return UndoFailed, false
	}
}

// NotRestored is the number of stores refused or failed.
func (t *UndoTally) NotRestored() int { return t.Changed + t.InUse + t.Failed }
