package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

const faultTarget = "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"

// Issue 9 finding 3: an I/O error after the rename (EIO on the directory fsync, EACCES
// opening the directory) keeps the change recorded: the run lists the file, undo restores it,
// and the error is reported (exit 3).
func TestErrorAfterRenameKeepsTheChangeRecorded(t *testing.T) {
	for _, tc := range []struct {
		op  string
		err error
	}{{store.FaultSyncDir, syscall.EIO}, {store.FaultOpenDir, syscall.EACCES}} {
		t.Run(tc.op, func(t *testing.T) {
			env := testEnv(t)
			dir := fixtureCopy(t)
			state := filepath.Join(t.TempDir(), "S")
			target := filepath.Join(dir, faultTarget)
			orig, err := os.ReadFile(target)
			require.NoError(t, err)
			inject := func(op, path string) error {
				if op == tc.op && path == filepath.Dir(target) {
					return tc.err
				}
				return nil
			}
			restore := store.SetFaultHook(inject)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
			restore()
			assert.Equal(t, exitPartial, r.code, r.out+r.err)
			assert.Contains(t, r.err, target+": rewritten, but: ")
			assert.Contains(t, r.err, tc.err.Error())
			assert.Contains(t, r.out, "rewrote 35 names in 3 files", "the file is counted as rewritten")
			now, _ := os.ReadFile(target)
			require.NotEqual(t, string(orig), string(now), "the file was rewritten")

			r = runCLI(t, env, "", "runs", "--state-dir", state, "--format", "json")
			require.Equal(t, 0, r.code, r.out+r.err)
			assert.Contains(t, r.out, `"files": 3`, r.out)

			// The same error during undo: restored, recorded, reported.
			restore = store.SetFaultHook(inject)
			r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
			restore()
			assert.Equal(t, exitPartial, r.code, r.out+r.err)
			assert.Contains(t, r.err, "restored "+target+" (15 names), but: ")
			back, _ := os.ReadFile(target)
			assert.Equal(t, string(orig), string(back))
			r = runCLI(t, env, "", "runs", "--state-dir", state, "--format", "json")
			assert.Contains(t, r.out, `"state": "undone"`, r.out)
		})
	}
}

// Issue 9 finding 4: a full disk under the state directory when the final manifest is
// written: the files rewritten are named with the undo hint, the exit status is not 0, and
// undo (from the journal) restores them.
func TestFullStateDiskKeepsTheUndoHint(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	before := snapshotTree(t, dir)
	var manifests atomic.Int32
	restore := store.SetFaultHook(func(op, path string) error {
		if op == store.FaultWrite && filepath.Base(path) == "manifest.json" && manifests.Add(1) > 1 {
			return syscall.ENOSPC
		}
		return nil
	})
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	restore()
	assert.NotEqual(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.err, "write manifest: ")
	assert.Contains(t, r.err, "no space left on device")
	assert.Regexp(t, `3 files already rewritten in run \S+ \(undo with: sessionfix undo --state-dir \S+ \S+\)`, r.err)
	assert.NotEqual(t, before, snapshotTree(t, dir))

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "restored 3 files")
	assert.Equal(t, before, snapshotTree(t, dir))
}

// Issue 9 finding 7: the temp file a killed run left beside a session (announced in its
// journal) and its manifest temp are removed by the next fix, which says so; a file of the
// same pattern the journal does not announce is left alone.
func TestFixRemovesTempFilesOfAKilledRun(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	target := filepath.Join(dir, faultTarget)
	// A run killed while it copied target: its journal announced the temp, which exists.
	run := filepath.Join(state, "runs", "20261130T115900Z-dead")
	require.NoError(t, os.MkdirAll(filepath.Join(run, "backups"), 0o700))
	tmp := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+"123456")
	keep := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+"654321") // the rollback link
	foreign := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+"999")
	mtmp := filepath.Join(run, ".manifest.json4242")
	journal := `{"event":"temp","path":` + quoteJSON(tmp) + `,"store":` + quoteJSON(target) + "}\n" +
		`{"event":"temp","path":` + quoteJSON(keep) + `,"store":` + quoteJSON(target) + "}\n"
	require.NoError(t, os.WriteFile(filepath.Join(run, "journal.jsonl"), []byte(journal), 0o600))
	for _, p := range []string{tmp, keep, foreign, mtmp} {
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o600))
	}

	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.err, "removed temp file "+tmp+" left by interrupted run 20261130T115900Z-dead")
	assert.Contains(t, r.err, "removed temp file "+mtmp+" left by interrupted run 20261130T115900Z-dead")
	assert.Contains(t, r.err, "removed temp file "+keep+" left by interrupted run 20261130T115900Z-dead", "two temps of one store")
	for _, p := range []string{tmp, keep, mtmp} {
		_, err := os.Stat(p)
		assert.ErrorIs(t, err, os.ErrNotExist, p)
	}
	_, err := os.Stat(foreign)
	assert.NoError(t, err, "a file the journal does not announce is not provably ours: kept")
	assert.NotContains(t, r.err, "removed temp file "+foreign)
	assert.NotContains(t, r.err, tmp+": warning", "the removed temp is not reported by the scan too")

	// The run's own temp files are gone and journaled as such: nothing is left for the next one.
	ents, _ := os.ReadDir(filepath.Dir(target))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != filepath.Base(foreign) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.NotContains(t, r.err, "removed temp file")
}

func quoteJSON(s string) string {
	b, _ := marshalJSON(s)
	return string(b)
}
