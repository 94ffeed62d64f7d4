package runlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
