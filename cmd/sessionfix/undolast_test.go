package main

import (
	"bytes"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// undo --last must not pass over a run it cannot read: a manifest edited by hand (one space
// added) made "undo --last" answer "nothing to undo", exit 0, with every rewritten store left
// as it was (review5); with an older run it would undo that one instead. It now refuses,
// naming the run and why, exit 1; undo RUNID says the same.
func TestUndoLastRefusesAnUnreadableNewestRun(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "state")
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, exitcode.OK, r.code, r.err)
	runs, err := os.ReadDir(filepath.Join(state, "runs"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	id := runs[0].Name()
	man := filepath.Join(state, "runs", id, "manifest.json")
	b, err := os.ReadFile(man)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(man, bytes.Replace(b, []byte("{"), []byte("{ "), 1), 0o600))

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	assert.Equal(t, exitcode.Error, r.code, r.out+r.err)
	assert.NotContains(t, r.out, "nothing to undo")
	assert.Contains(t, r.err, "run "+id+" cannot be read")
	assert.Contains(t, r.err, "without a valid checksum (edited or damaged)")
}
