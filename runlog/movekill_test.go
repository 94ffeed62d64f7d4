package runlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// TestUndoOfAMoveKilledAfterItsMkdirRemovesTheDirectory: a run killed while moving a store,
// after the move made the store's new directory and before the link (the file still at its
// old path, no "moved" line, the manifest the one written when the run started), is undone
// from its journal: the directory the move made is removed, the journal having announced it
// ("move-dir"). Before, the journal's "move" line named only from and to, and undo left the
// empty directory where the agent's newer release looks for the session.
func TestUndoOfAMoveKilledAfterItsMkdirRemovesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	require.NoError(t, os.WriteFile(a, []byte("{}\n"), 0o600))
	made := filepath.Join(dir, "a")
	now := func() time.Time { return time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC) }
	r := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), Roots: []string{dir}, Now: now})
	e, err := r.Move(context.Background(), store.Ref{Path: a, Kind: "test"}, filepath.Join(made, "events.jsonl"), "test")
	require.NoError(t, err)
	require.Equal(t, []string{made}, e.Made)
	r.j.close() // killed: no Finish, the manifest still the first one

	// Back to the instant after the mkdir: the file at its old name, the directory empty, the
	// journal without the "moved" line.
	require.NoError(t, os.Rename(filepath.Join(made, "events.jsonl"), a))
	jpath := filepath.Join(r.dir, journalName)
	j, err := os.ReadFile(jpath)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(j), "\n")
	var kept []string
	for _, line := range lines {
		if !strings.Contains(line, `"event":"moved"`) {
			kept = append(kept, line)
		}
	}
	require.Len(t, kept, len(lines)-1, "the moved line is cut")
	require.NoError(t, os.WriteFile(jpath, []byte(strings.Join(kept, "")), 0o600))

	m, err := ReadRun(r.dir)
	require.NoError(t, err)
	require.NoError(t, CheckRun(r.dir, m))
	require.Len(t, m.Moves, 1)
	assert.Equal(t, []string{made}, m.Moves[0].Made)
	outs, _, err := UndoRun(context.Background(), r.dir, m, nil, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.NoError(t, outs[0].Err)
	assert.NoDirExists(t, made, "the directory the move made is removed")
	assert.FileExists(t, a)
}

// TestMoveThatFailsAfterItsLinkIsTakenBackOrRecorded: a move whose link at the new name is
// made and whose next step fails is either taken back (the link removed, the directory made
// removed: the "move-abort" line and the skipped entry then say what is so), or, when the old
// name is already removed (the last directory fsync failed), recorded as made, with the error:
// undo moves it back. Before, both were journaled "move-abort" and listed "not moved": the
// first left the file under both names for good (undo knew of no move), the second left it
// moved with no record of the move at all.
func TestMoveThatFailsAfterItsLinkIsTakenBackOrRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(op, path, from string, n map[string]int) bool
		moved bool
	}{
		{"before the old name is removed", func(op, path, from string, _ map[string]int) bool {
			return op == "move-unlink" && path == from
		}, false},
		{"the old name's directory fsync", func(op, path, from string, n map[string]int) bool {
			if op != fileio.FaultSyncDir || path != filepath.Dir(from) {
				return false
			}
			n[path]++
			return n[path] == 2 // the first: the made directory's parent, before the unlink
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := filepath.Join(dir, "a.jsonl")
			require.NoError(t, os.WriteFile(a, []byte("{}\n"), 0o600))
			made := filepath.Join(dir, "a")
			to := filepath.Join(made, "events.jsonl")
			injected := errors.New("injected EIO")
			n := map[string]int{}
			restore := fileio.SetFaultHook(func(op, path string) error {
				if tc.fault(op, path, a, n) {
					return injected
				}
				return nil
			})
			now := func() time.Time { return time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC) }
			r := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), Roots: []string{dir}, Now: now})
			_, err := r.Move(context.Background(), store.Ref{Path: a, Kind: "test"}, to, "test")
			restore()
			require.ErrorIs(t, err, injected)
			fin, ferr := r.Finish(nil)
			require.NoError(t, ferr)
			m, err := ReadRun(fin.Dir)
			require.NoError(t, err)
			if !tc.moved {
				assert.FileExists(t, a)
				assert.NoDirExists(t, made, "the link and the directory taken back")
				assert.Empty(t, m.Moves)
				require.Len(t, m.Skipped, 1)
				return
			}
			assert.NoFileExists(t, a)
			assert.FileExists(t, to)
			require.Len(t, m.Moves, 1, "the move is recorded")
			assert.Empty(t, m.Skipped)
			require.NoError(t, CheckRun(fin.Dir, m))
			outs, _, err := UndoRun(context.Background(), fin.Dir, m, nil, false, now)
			require.NoError(t, err)
			require.Len(t, outs, 1)
			assert.NoError(t, outs[0].Err)
			assert.FileExists(t, a)
			assert.NoDirExists(t, made)
		})
	}
}
