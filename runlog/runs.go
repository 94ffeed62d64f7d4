package runlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// RunInfo is one run in a listing.
type RunInfo struct {
	ID       string    `json:"run_id"`
	Dir      string    `json:"dir"`
	Created  time.Time `json:"created"`
	State    string    `json:"state"`
	Files    int       `json:"files"`
	Names    int       `json:"names"`
	Skipped  int       `json:"skipped"`
	Command  string    `json:"command,omitempty"`
	ReadErr  string    `json:"error,omitempty"`
	Restored int       `json:"restored"`
	// Moves counts the stores the run moved (Manifest.Moves), MovesUndone those moved back.
	Moves       int `json:"moves,omitempty"`
	MovesUndone int `json:"moves_undone,omitempty"`
	// Untrusted is set when ReadErr is an *UntrustedError (a sealed manifest or journal that
	// fails its checksum: edited or damaged), so the run did record changes.
	Untrusted bool `json:"-"`
}

// ListRuns returns the runs under stateDir, oldest first. A run whose manifest cannot be read
// is listed with ReadErr set.
func ListRuns(stateDir string) ([]RunInfo, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, runsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(stateDir, runsDir, e.Name())
		ri := RunInfo{ID: e.Name(), Dir: dir}
		m, err := ReadRun(dir)
		if err != nil {
			ri.ReadErr, ri.Untrusted = err.Error(), errors.Is(err, ErrUntrustedRun)
			out = append(out, ri)
			continue
		}
		ri.Created, ri.State, ri.Command, ri.Skipped = m.Created, m.State, m.Command, len(m.Skipped)
		ri.Files = len(m.Files)
		if m.State == StateApplying && !runLive(dir) {
			// Killed before its manifest was final (no process holds its journal): what the
			// journal recorded is listed, and undone, like any partial run.
			ri.State = StatePartial
		}
		for _, f := range m.Files {
			ri.Names += f.Edits
			if f.Restored {
				ri.Restored++
			}
		}
		ri.Moves = len(m.Moves)
		for _, mv := range m.Moves {
			if mv.Restored {
				ri.MovesUndone++
			}
		}
		out = append(out, ri)
	}
	// Oldest first by creation time (to the nanosecond; ids only carry the second), then id.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// errTorn marks the torn last line of a journal.
var errTorn = errors.New("torn journal line")

// runLive reports whether a process (a fix or undo of this run) holds the run's journal lock.
func runLive(dir string) bool {
	jpath := filepath.Join(dir, journalName)
	if _, err := os.Stat(jpath); err != nil {
		return false
	}
	lk := flock.New(jpath)
	ok, err := lk.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = lk.Unlock()
		return false
	}
	return true
}

// ErrNoRun means no run matches the request.
var ErrNoRun = errors.New("no such run")

// ErrNothingToUndo means FindRun's newest-run search found no run with changes left to undo
// (none was recorded, or every one was undone): not a failure, like "nothing to change".
var ErrNothingToUndo = errors.New("nothing to undo")

// FindRun resolves a run id (or unique prefix), or with last the newest run that still has
// changes to undo. With last, a refused run (RunInfo.Untrusted: its sealed manifest or journal
// was edited or damaged) newer than that one, by id, is an error naming it: it recorded
// changes, so "nothing to undo", or undoing an older run instead, would hide them (review5).
func FindRun(stateDir, id string, last bool) (string, error) {
	runs, err := ListRuns(stateDir)
	if err != nil {
		return "", err
	}
	if last {
		found := -1
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			if r.ReadErr == "" && r.Files+r.Moves > 0 && r.State != StateUndone {
				found = i
				break
			}
		}
		var refused *RunInfo
		for i := range runs {
			r := &runs[i]
			if r.Untrusted && (found < 0 || r.ID > runs[found].ID) && (refused == nil || r.ID > refused.ID) {
				refused = r
			}
		}
		switch {
		case refused != nil:
			return "", fmt.Errorf("the newest run %s cannot be read (%s); undo --last does not pass over it (sessionfix runs lists the runs)", refused.ID, refused.ReadErr)
		case found >= 0:
			return runs[found].Dir, nil
		}
		return "", fmt.Errorf("%w: no run in %s has changes left to undo", ErrNothingToUndo, stateDir)
	}
	var match []RunInfo
	for _, r := range runs {
		if r.ID == id {
			return r.Dir, nil
		}
		if strings.HasPrefix(r.ID, id) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 1:
		return match[0].Dir, nil
	case 0:
		return "", fmt.Errorf("%w: %q in %s", ErrNoRun, id, stateDir)
	default:
		return "", fmt.Errorf("%w: %q is ambiguous (%d runs)", ErrNoRun, id, len(match))
	}
}
