package runlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// UndoOutcome is what undo did to one store.
type UndoOutcome struct {
	Ref   store.Ref
	Names int
	// Move is set when the outcome is a move undone (Ref is the store at its old path, where
	// it was moved back to).
	Move *MoveEntry
	Err  error
	// Already is set when the store already held its original content.
	Already bool
	// Kept is where a forced restore (--force, over a store that changed since the run) kept
	// the store's content from before the undo (fileio.WithKeptRecorder); "" otherwise.
	Kept string
	// Notes are what the store said about how it was restored (fileio.WithNoteRecorder: a
	// database put back row by row, not byte for byte, and why).
	Notes []string
}

// Opener reopens a recorded store for undo (agent/all.Open).
type Opener func(store.Ref) (store.Store, error)

// UndoRun restores every file of the run in dir from its backup, newest change first, through
// the store's Restorer (open reopens it): byte for byte, with the original mode and mtime;
// moves are undone first (newest first). A store that changed since the run (its content is
// not the run's "after" content) is refused unless force is set; the others are still
// restored. m is the run's manifest, which the caller read with ReadRun and checked with
// CheckRun (undo shows what it will restore before it asks; a run that fails either is refused
// as a whole, an *UntrustedError: nothing is restored, --force or not); m is updated with what
// was restored and written back to manifest.json.
func UndoRun(ctx context.Context, dir string, m *Manifest, open Opener, force bool, now func() time.Time) ([]UndoOutcome, *Manifest, error) {
	// The run's journal records undo's temp files too (see CleanLeftovers).
	j, err := openJournal(filepath.Join(dir, journalName))
	if err != nil {
		return nil, nil, err
	}
	defer j.close()
	ctx = fileio.WithTempRecorder(ctx, j.recordTemp)
	if m.dir == "" {
		m.dir = dir
	}
	er := &entryReader{dir: m.dir, run: m.RunID}
	defer er.close()
	var out []UndoOutcome
	// Moves first (newest first): a store moved and rewritten gets its bytes back at its old
	// path.
	for _, u := range undoMoves(ctx, m, force) {
		mv := u.Entry
		out = append(out, UndoOutcome{Ref: store.Ref{Path: mv.From, Kind: mv.Kind}, Move: &mv, Err: u.Err, Already: u.Already})
	}
	for i := len(m.Files) - 1; i >= 0; i-- {
		f := &m.Files[i]
		o := UndoOutcome{Ref: f.Ref, Names: f.Edits}
		if f.Restored {
			o.Already = true
			out = append(out, o)
			continue
		}
		full, err := er.full(f) // with its Sites
		var st store.Store
		if err == nil {
			st, err = open(f.Ref)
		}
		if err == nil {
			r, ok := st.(store.Restorer)
			if !ok {
				err = fmt.Errorf("%s: the %s backend cannot restore", f.Ref.Path, f.Ref.Kind)
			} else {
				rctx := fileio.WithKeptRecorder(ctx, func(kept string) { o.Kept = kept })
				rctx = fileio.WithNoteRecorder(rctx, func(n string) { o.Notes = append(o.Notes, n) })
				err = r.Restore(rctx, &full.Change, force)
			}
		}
		var ce *fileio.CommittedError
		if err == nil || errors.As(err, &ce) {
			// Restored (a CommittedError: the edits were reversed, with a late append
			// carried over).
			f.Restored = true
		}
		o.Err = err
		out = append(out, o)
	}
	restored := 0
	for _, f := range m.Files {
		if f.Restored {
			restored++
		}
	}
	for _, mv := range m.Moves {
		if mv.Restored {
			restored++
		}
	}
	if restored == len(m.Files)+len(m.Moves) {
		m.State = StateUndone
		t := now().UTC()
		m.UndoneAt = &t
	} else if restored > 0 {
		m.State = StatePartiallyUndone
	}
	if err := writeManifestFrom(dir, m, er); err != nil {
		return out, m, err
	}
	return out, m, nil
}
