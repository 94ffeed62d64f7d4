package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/internal/exitcode"

	"github.com/gofrs/flock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUndoOfARunInUse: `undo` of a run another sessionfix process is using (a fix --apply still
// writing it holds the run's journal lock) is refused, exit 4, and its standard output claims no
// work first — the stop 17 binary printed "undoing run … N files to restore" and then the
// refusal, exit 1. Nothing is restored; once the lock is gone the same undo restores the run.
func TestUndoOfARunInUse(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "state")
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	runs, err := os.ReadDir(filepath.Join(state, "runs"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	id := runs[0].Name()
	fixed := snapshotTree(t, dir)

	// The running fix's lock (runlog's journal lock), from another open file: flock conflicts.
	lk := flock.New(filepath.Join(state, "runs", id, "journal.jsonl"))
	ok, err := lk.TryLock()
	require.NoError(t, err)
	require.True(t, ok)

	const why = "another sessionfix process is using this run (a fix --apply still writing it, or another undo); nothing was restored: undo the same run again once it has ended"
	for _, args := range [][]string{
		{"undo", "--last", "--state-dir", state},
		{"undo", "--state-dir", state, id},
	} {
		r = runCLI(t, env, "", args...)
		assert.Equal(t, exitcode.InUse, r.code, "%v: %s", args, r.err)
		assert.Empty(t, r.out, "%v: nothing claims work before the refusal", args)
		assert.Contains(t, r.err, why, "%v", args)
	}
	r = runCLI(t, env, "", "undo", "--last", "--format", "json", "--state-dir", state)
	assert.Equal(t, exitcode.InUse, r.code, r.err)
	var rep report.UndoReport
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
	assert.Contains(t, rep.Error, why)
	assert.Empty(t, rep.Files)
	assert.Zero(t, rep.Restored)

	// --force without --yes on a terminal: refused before the question is asked.
	tty := *env
	tty.InTerminal = true
	r = runCLI(t, &tty, "y\n", "undo", "--last", "--force", "--state-dir", state)
	assert.Equal(t, exitcode.InUse, r.code, r.err)
	assert.Empty(t, r.out)
	assert.NotContains(t, r.err, "[y/N]")
	assert.Contains(t, r.err, why)
	assert.Equal(t, fixed, snapshotTree(t, dir), "nothing restored")

	require.NoError(t, lk.Unlock())
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, exitcode.OK, r.code, r.err)
	assert.Contains(t, r.out, "undoing run "+id)
	assert.NotEqual(t, fixed, snapshotTree(t, dir))
}

// `undo --last` while a fix --apply has only begun its run (its run directory holds the locked
// journal, no manifest yet): the newest run is in use, so --last refuses, exit 4, instead of
// passing over it — to "nothing to undo" (exit 0) or, as here, to an older run it then undid
// while the fix was rewriting the same files.
func TestUndoLastWhileAFixHasBegun(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "state")
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	fixed := snapshotTree(t, dir)
	begun := filepath.Join(state, "runs", "20261130T130000Z-beef")
	require.NoError(t, os.MkdirAll(begun, 0o700))
	lk := flock.New(filepath.Join(begun, "journal.jsonl"))
	ok, err := lk.TryLock()
	require.NoError(t, err)
	require.True(t, ok)
	defer lk.Unlock()

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Empty(t, r.out)
	assert.Contains(t, r.err, "20261130T130000Z-beef/journal.jsonl: another sessionfix process is using this run")
	assert.Equal(t, fixed, snapshotTree(t, dir), "the older run is not undone")
}
