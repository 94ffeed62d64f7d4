package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// undoRun restores the run in dir (m: its manifest, read and checked with runlog.ReadRun and
// runlog.CheckRun) through runlog.UndoRun, reopening every store with agent/all (busy: the
// SQLite write-lock wait; a hot SQLite journal is rolled back before the store is checked), the
// SQLite profile the stores are reopened with the run's (UndoProfile; profile: undo --profile
// FILE, "" without). force restores stores that changed since the run. The error is a usage
// error for a bad option, else runlog.UndoRun's (the outcomes so far are still returned).
func undoRun(ctx context.Context, dir string, m *runlog.Manifest, profile string, busy time.Duration, force bool, now func() time.Time) ([]runlog.UndoOutcome, error) {
	sopt, err := UndoProfile(m, profile, busy)
	if err != nil {
		return nil, err
	}
	sopt.SQLite.RollBack = true
	open := func(ref store.Ref) (store.Store, error) { return all.Reopen(ctx, ref, sopt) }
	outs, _, err := runlog.UndoRun(ctx, dir, m, open, force, now)
	return outs, err
}

// UndoProfile is the store options undo reopens run m's stores with (busy: the write-lock
// wait): the user SQLite profile the run was made with (fix --profile FILE; recorded in its
// manifest since issue 23 item 6), else undo's --profile FILE (profile: a run made before the
// profile was recorded, or recovered from its journal). Given both, they must be the same
// document (compared as compact JSON): another profile could read other tables as the store's
// (a usage error names both). A bad --profile is a usage error; a recorded profile that no
// longer parses (a later sessionfix's) an error.
func UndoProfile(m *runlog.Manifest, profile string, busy time.Duration) (all.Options, error) {
	sopt, err := StoreOptions(profile, busy)
	if err != nil || m.Profile == nil {
		return sopt, err
	}
	rec, err := all.ParseProfile(m.Profile.Document)
	if err != nil {
		return sopt, fmt.Errorf("run %s: the SQLite profile it recorded (from %s) cannot be read: %w", m.RunID, m.Profile.Source, err)
	}
	if profile != "" && !sameJSON(sopt.ProfileDoc, m.Profile.Document) {
		return sopt, usagef("--profile %s is not the profile run %s was made with (%s, recorded in the run): drop --profile", profile, m.RunID, m.Profile.Source)
	}
	sopt.SQLite.Profile, sopt.ProfileDoc = rec, m.Profile.Document
	return sopt, nil
}

// sameJSON reports whether a and b are the same JSON text but for white space.
func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
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
func (t *UndoTally) Add(o runlog.UndoOutcome) (status string, late bool) {
	var ce *fileio.CommittedError
	switch {
	case o.Already:
		return UndoAlready, false
	case o.Err == nil || errors.As(o.Err, &ce):
		t.Restored++
		if o.Ref.Kind.Database() {
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

// UndoRequest is one undo, its flags checked by the command: the run RunID (or a unique
// prefix) or, Last, the newest run with changes left, under StateDir (resolved). Force
// restores stores that changed since the run; Ask asks Confirm first (--force without --yes).
type UndoRequest struct {
	StateDir    string
	RunID       string
	Last        bool
	Force, Ask  bool
	BusyTimeout time.Duration    // the SQLite write-lock wait
	Now         func() time.Time // nil: time.Now
	// Profile is undo --profile FILE ("" without): for a run made with fix --profile that did
	// not record it (UndoProfile).
	Profile string
}

// UndoHooks are the command's parts of an undo: Start when the run is found, trusted and
// restored (todo stores not yet restored, todoDBs of them SQLite databases) — with Ask before
// Confirm, else once UndoRun has tried the stores, before their File calls; never for a run
// another process is using or when no store was tried; Confirm (with Ask) whether to go on;
// File for every store's outcome, in order (status one of the Undo* statuses, late: restored,
// then something failed or the agent appended).
type UndoHooks struct {
	Start   func(dir string, m *runlog.Manifest, todo, todoDBs int)
	Confirm func(m *runlog.Manifest) (bool, error)
	File    func(o runlog.UndoOutcome, status string, late bool)
}

// UndoEnd is how an undo ended. RunID and Dir name the run once its manifest was read.
// NothingToUndo (no run with changes left) and AlreadyUndone end it before Start; Declined:
// Confirm said no, nothing was changed. Tally counts the outcomes; Summary is the closing
// sentence (also of NothingToUndo and AlreadyUndone); Code the exit status (0, exitcode.Partial,
// exitcode.InUse or exitcode.Declined).
type UndoEnd struct {
	RunID, Dir                   string
	NothingToUndo, AlreadyUndone bool
	Declined                     bool
	Tally                        UndoTally
	Summary                      string
	Code                         int
}

// Undo runs an undo: the run found (runlog.FindRun), read and checked as a whole
// (runlog.ReadRun, runlog.CheckRun: a refused run is refused before Start), confirmed,
// then restored (UndoRun). A run another sessionfix process is using (runlog.ErrRunInUse:
// checked before the run is read, and again by UndoRun) is refused before Start with Code
// exitcode.InUse. A store left unrestored makes the code exitcode.InUse when one is in
// use, else exitcode.Partial; with all restored, a late in-use error exitcode.InUse, another late error
// exitcode.Partial. The error is the first of finding, reading, checking, Confirm or UndoRun; the
// UndoEnd is returned with it once the run is named (with the outcomes so far).
func Undo(ctx context.Context, req UndoRequest, h UndoHooks) (*UndoEnd, error) {
	end := &UndoEnd{}
	if req.Now == nil {
		req.Now = time.Now
	}
	dir, err := runlog.FindRun(req.StateDir, req.RunID, req.Last)
	if req.Last && (err == nil || errors.Is(err, runlog.ErrNothingToUndo)) {
		// --last passes over runs without changes to undo yet — also one a fix --apply is
		// still writing: that one is the newest, and in use.
		if busy := newerRunInUse(req.StateDir, dir); busy != nil {
			return end, runInUse(end, busy)
		}
	}
	if errors.Is(err, runlog.ErrNothingToUndo) {
		end.NothingToUndo, end.Summary = true, err.Error()+" (sessionfix runs lists the runs)"
		return end, nil
	}
	if err != nil {
		return end, err
	}
	// A run another process is still writing (a fix --apply) is in use, not damaged: its
	// manifest and backups are not final yet (a backup still shares the original's inode), so
	// ReadRun and CheckRun would refuse it as edited. UndoRun takes the lock itself later.
	if err := runlog.CheckRunFree(dir); err != nil {
		end.Dir = dir
		return end, runInUse(end, err)
	}
	m, err := runlog.ReadRun(dir)
	if err != nil {
		return end, err
	}
	end.RunID, end.Dir = m.RunID, dir
	if m.State == runlog.StateUndone {
		end.AlreadyUndone = true
		end.Summary = fmt.Sprintf("nothing to undo: run %s was already undone at %s", m.RunID, m.UndoneAt.Format("2006-01-02 15:04:05Z"))
		return end, nil
	}
	if err := runlog.CheckRun(dir, m); err != nil {
		return end, err
	}
	todo, todoDBs := 0, 0
	for _, f := range m.Files {
		if !f.Restored {
			todo++
			if f.Ref.Kind.Database() {
				todoDBs++
			}
		}
	}
	for _, mv := range m.Moves {
		if !mv.Restored {
			todo++ // a moved store, moved back (runlog.MoveEntry)
		}
	}
	if req.Ask {
		h.Start(dir, m, todo, todoDBs)
		if ok, err := h.Confirm(m); err != nil {
			return end, err
		} else if !ok {
			end.Declined, end.Summary, end.Code = true, "nothing was changed", exitcode.Declined
			return end, nil
		}
	}
	outs, err := undoRun(ctx, dir, m, req.Profile, req.BusyTimeout, req.Force, req.Now) // m: read and checked above
	if err != nil && len(outs) == 0 {
		// Nothing was tried (the run is in use, its journal cannot be opened): nothing
		// that says "undoing" is printed before the refusal.
		if errors.Is(err, runlog.ErrRunInUse) {
			return end, runInUse(end, err)
		}
		return end, err
	}
	if !req.Ask {
		h.Start(dir, m, todo, todoDBs)
	}
	t := &end.Tally
	for _, o := range outs {
		status, late := t.Add(o)
		h.File(o, status, late)
	}
	if err != nil {
		return end, undoStopped(err, t, len(outs), dir, m.RunID)
	}
	end.Summary = fmt.Sprintf("restored %s of run %s", report.StoresPhrase(t.Restored, t.RestoredDBs), m.RunID)
	if left := t.NotRestored(); left > 0 {
		end.Summary += fmt.Sprintf("; %s not restored", reports.Plural(left, "file"))
		switch {
		case t.Changed > 0 && !req.Force:
			end.Summary += " (undo the same run with --force --yes to restore changed files anyway, losing their later changes)"
		case t.InUse > 0:
			end.Summary += " (stop the agent using them and undo the same run again)"
		}
		end.Code = exitcode.Partial
		if t.InUse > 0 {
			end.Code = exitcode.InUse
		}
		return end, nil
	}
	switch {
	case t.LateInUse > 0:
		end.Code = exitcode.InUse
	case t.Late > 0:
		end.Code = exitcode.Partial
	}
	return end, nil
}

// newerRunInUse is the CheckRunFree error of a run under stateDir newer than the one in dir
// ("": every run) that another process is using, or nil.
func newerRunInUse(stateDir, dir string) error {
	runs, err := runlog.ListRuns(stateDir)
	if err != nil {
		return nil // FindRun listed them; its answer stands
	}
	found := ""
	for _, r := range runs {
		if r.Dir == dir {
			found = r.ID
		}
	}
	for _, r := range runs {
		if r.ID > found && r.Dir != dir {
			if err := runlog.CheckRunFree(r.Dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// runInUse is the refusal of an undo whose run another sessionfix process is using (a fix
// --apply still writing it, another undo): Code exitcode.InUse, nothing restored.
func runInUse(end *UndoEnd, err error) error {
	end.Code = exitcode.InUse
	return fmt.Errorf("%w (a fix --apply still writing it, or another undo); nothing was restored: undo the same run again once it has ended", err)
}

// undoStopped is the error of an undo that stopped after trying some stores (outcomes counted
// in t, of tried stores): it says how far it got and that the same run can be undone again —
// each store is restored or left as the run left it, never half — and, when the state
// directory's disk is full (ENOSPC: undo journals and backs up the current content there
// before each restore), where to free space.
func undoStopped(err error, t *UndoTally, tried int, runDir, runID string) error {
	if tried == 0 {
		return err
	}
	hint := "fix the cause and undo the same run again"
	if errors.Is(err, syscall.ENOSPC) {
		hint = "free space on the disk of the state directory (" + runDir + ") and undo the same run again"
	}
	return fmt.Errorf("%w; restored %d of %d files of run %s, the others are as the run left them: %s", err, t.Restored, tried, runID, hint)
}
