package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/runlog"
)

// undoRec records an undo's hook calls.
type undoRec struct {
	started  int
	statuses []string
}

func (u *undoRec) hooks(confirm bool) UndoHooks {
	return UndoHooks{
		Start:   func(string, *runlog.Manifest, int, int) { u.started++ },
		Confirm: func(*runlog.Manifest) (bool, error) { return confirm, nil },
		File:    func(_ runlog.UndoOutcome, status string, _ bool) { u.statuses = append(u.statuses, status) },
	}
}

// Undo of a fix run: a store changed since the run is refused (exitcode.Partial, the summary says
// how to force it) and the others restored; declined at the --force question nothing
// changes (exitcode.Declined); --force restores it; then the run is already undone, and --last
// finds nothing left.
func TestUndo(t *testing.T) {
	dir := fixHome(t)
	orig := fixTree(t, dir)
	req := fixRequest(t, dir, true, true)
	end, err := Fix(context.Background(), fixEnv(t), req, FixHooks{View: &recView{}})
	require.NoError(t, err)
	require.Equal(t, 0, end.Code)
	session := filepath.Join(dir, fixSession)
	require.NoError(t, os.WriteFile(session, []byte("changed\n"), 0o640))

	ureq := UndoRequest{StateDir: req.Options.StateDir, Last: true}
	var u undoRec
	ue, err := Undo(context.Background(), ureq, u.hooks(true))
	require.NoError(t, err)
	assert.Equal(t, exitcode.Partial, ue.Code)
	assert.Equal(t, 1, u.started)
	assert.ElementsMatch(t, []string{UndoRestored, UndoRestored, UndoChanged}, u.statuses)
	assert.Equal(t, UndoTally{Restored: 2, Changed: 1}, ue.Tally)
	assert.Regexp(t, `^restored 2 files of run \S+; 1 file not restored \(undo the same run with --force --yes`, ue.Summary)
	assert.NotEmpty(t, ue.RunID)

	ureq.Force, ureq.Ask = true, true
	u = undoRec{}
	ue, err = Undo(context.Background(), ureq, u.hooks(false))
	require.NoError(t, err)
	assert.Equal(t, &UndoEnd{RunID: ue.RunID, Dir: ue.Dir, Declined: true, Summary: "nothing was changed", Code: exitcode.Declined}, ue)
	assert.Empty(t, u.statuses)
	b, err := os.ReadFile(session)
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(b))

	u = undoRec{}
	ue, err = Undo(context.Background(), ureq, u.hooks(true))
	require.NoError(t, err)
	assert.Equal(t, 0, ue.Code)
	assert.Equal(t, []string{UndoAlready, UndoRestored, UndoAlready}, u.statuses)
	assert.Equal(t, orig, fixTree(t, dir))

	ureq.Last, ureq.RunID = false, ue.RunID
	ue, err = Undo(context.Background(), ureq, u.hooks(true))
	require.NoError(t, err)
	assert.True(t, ue.AlreadyUndone)
	assert.Contains(t, ue.Summary, "was already undone at")

	ureq.Last, ureq.RunID = true, ""
	ue, err = Undo(context.Background(), ureq, u.hooks(true))
	require.NoError(t, err)
	assert.True(t, ue.NothingToUndo)
	assert.Equal(t, 0, ue.Code)
}
