package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// moveInto relocates x.jsonl to x/events.jsonl (a flat layout a newer release no longer reads).
func moveInto(ref store.Ref) (string, string) {
	if !strings.HasSuffix(ref.Path, ".jsonl") || filepath.Base(ref.Path) == "events.jsonl" {
		return "", ""
	}
	return filepath.Join(strings.TrimSuffix(ref.Path, ".jsonl"), "events.jsonl"), "test: the flat layout is not read"
}

// TestProcessMovesAfterRewritingAndUndoMovesBack: with Relocate, Process rewrites a store, then
// moves it (and moves one with nothing to rewrite); the manifest and the journal record the
// moves; undo moves both back and restores the rewritten bytes at the old path, leaving
// every byte and directory as before.
func TestProcessMovesAfterRewritingAndUndoMovesBack(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	b := writeSession(t, dir, "b.jsonl", call("1", "mcp__ok__c"))
	origA, _ := os.ReadFile(a)
	origB, _ := os.ReadFile(b)
	state := filepath.Join(t.TempDir(), "state")
	now := func() time.Time { return time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC) }
	stores := []store.Store{jsonl.Open(a, qwen.Session), jsonl.Open(b, qwen.Session)}
	res, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{Apply: true, Relocate: moveInto,
		ApplyOptions: ApplyOptions{StateDir: state, Now: now, Roots: []string{dir}}}, func(*StoreResult) error { return nil })
	require.NoError(t, err)
	require.Len(t, res.Moves, 2)
	for _, m := range res.Moves {
		require.NoError(t, m.Err)
	}
	assert.NoFileExists(t, a)
	assert.FileExists(t, filepath.Join(dir, "a", "events.jsonl"))
	assert.FileExists(t, filepath.Join(dir, "b", "events.jsonl"))
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.NoError(t, runlog.CheckRun(res.Dir, m))
	require.Len(t, m.Moves, 2)
	assert.Equal(t, a, m.Moves[0].From)
	assert.Equal(t, []string{filepath.Join(dir, "a")}, m.Moves[0].Made)
	assert.Equal(t, qwen.KindSession, m.Moves[0].Kind)
	assert.Equal(t, runlog.StateApplied, m.State)
	runs, err := runlog.ListRuns(state)
	require.NoError(t, err)
	assert.Equal(t, 2, runs[0].Moves)

	// The manifest lost: the journal still gives the moves back.
	raw, err := os.ReadFile(filepath.Join(res.Dir, manifestName))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(res.Dir, manifestName)))
	rec, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, rec.Moves, 2)
	assert.Equal(t, m.Moves[1].Move, rec.Moves[1].Move)
	require.NoError(t, os.WriteFile(filepath.Join(res.Dir, manifestName), raw, 0o600))

	outs, m2, err := undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Len(t, outs, 3) // two moves back, one file restored
	for _, o := range outs {
		assert.NoError(t, o.Err, o.Ref.Path)
	}
	assert.NotNil(t, outs[0].Move)
	assert.Equal(t, b, outs[0].Ref.Path, "newest move first")
	assert.Equal(t, runlog.StateUndone, m2.State)
	gotA, _ := os.ReadFile(a)
	gotB, _ := os.ReadFile(b)
	assert.Equal(t, origA, gotA)
	assert.Equal(t, origB, gotB)
	assert.NoDirExists(t, filepath.Join(dir, "a"))
	assert.NoDirExists(t, filepath.Join(dir, "b"))
	_, err = runlog.FindRun(state, "", true)
	assert.ErrorIs(t, err, runlog.ErrNothingToUndo)
}

// TestMoveRefusedKeepsTheStore: a target that exists is never replaced: the move is refused,
// the store stays (its rewrite is kept and undoable), the run is partial.
func TestMoveRefusedKeepsTheStore(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "a"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "events.jsonl"), []byte("newer\n"), 0o600))
	state := filepath.Join(t.TempDir(), "state")
	res, err := Process(context.Background(), []store.Store{jsonl.Open(a, qwen.Session)}, naming.Policy{},
		ProcessOptions{Apply: true, Relocate: moveInto, ApplyOptions: ApplyOptions{StateDir: state, Roots: []string{dir}}}, func(*StoreResult) error { return nil })
	require.NoError(t, err)
	require.Len(t, res.Moves, 1)
	assert.ErrorContains(t, res.Moves[0].Err, "a file is already there")
	assert.FileExists(t, a)
	got, _ := os.ReadFile(filepath.Join(dir, "a", "events.jsonl"))
	assert.Equal(t, "newer\n", string(got))
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Empty(t, m.Moves)
	assert.Equal(t, runlog.StatePartial, m.State)
	assert.Len(t, m.Files, 1)
}

// TestCheckRunRefusesAMoveOutsideTheRoots: an edited manifest cannot make undo move a file
// from or to a path outside the run's roots.
func TestCheckRunRefusesAMoveOutsideTheRoots(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__ok__c"))
	state := filepath.Join(t.TempDir(), "state")
	res, err := Process(context.Background(), []store.Store{jsonl.Open(a, qwen.Session)}, naming.Policy{},
		ProcessOptions{Apply: true, Relocate: moveInto, ApplyOptions: ApplyOptions{StateDir: state, Roots: []string{dir}}}, func(*StoreResult) error { return nil })
	require.NoError(t, err)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	require.Len(t, m.Moves, 1)
	m.Moves[0].From = "/etc/passwd"
	err = runlog.CheckRun(res.Dir, m)
	assert.ErrorIs(t, err, runlog.ErrUntrustedRun)
	assert.ErrorContains(t, err, "outside the run's roots")
}

// TestMoveOfARunGivenTheFileIsUndone: a run whose roots are the store files themselves (fix
// --move-legacy --apply FILE, or --apply --plan FILE, whose roots are the plan's files) moves
// a store into a directory beside it: that directory is outside those roots, so the run adds
// the store's directory to its roots (in the manifest on disk before the move), and undo
// moves it back. Before, undo refused the whole run ("outside the run's roots"), the
// rewrite included.
func TestMoveOfARunGivenTheFileIsUndone(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"))
	orig, _ := os.ReadFile(a)
	state := filepath.Join(t.TempDir(), "state")
	res, err := Process(context.Background(), []store.Store{jsonl.Open(a, qwen.Session)}, naming.Policy{},
		ProcessOptions{Apply: true, Relocate: moveInto, ApplyOptions: ApplyOptions{StateDir: state, Roots: []string{a}}}, func(*StoreResult) error { return nil })
	require.NoError(t, err)
	require.Len(t, res.Moves, 1)
	require.NoError(t, res.Moves[0].Err)
	m, err := runlog.ReadRun(res.Dir)
	require.NoError(t, err)
	assert.Equal(t, []string{a, dir}, m.Roots)
	require.NoError(t, runlog.CheckRun(res.Dir, m))
	outs, _, err := undo(context.Background(), res.Dir, all.Open, false, time.Now)
	require.NoError(t, err)
	require.Len(t, outs, 2)
	for _, o := range outs {
		require.NoError(t, o.Err, o.Ref.Path)
	}
	got, _ := os.ReadFile(a)
	assert.Equal(t, orig, got)
	assert.NoDirExists(t, filepath.Join(dir, "a"))
}
