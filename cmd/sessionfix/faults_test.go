package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/textreport"
)

const faultTarget = "projects/-home-demo-src-lab/chats/3cea48a5-0bbc-425f-a107-6fec809f5dc8.jsonl"

// Issue 9 finding 3: an I/O error after the rename (EIO on the directory fsync, EACCES
// opening the directory) keeps the change recorded: the run lists the file, undo restores it,
// and the error is reported (exit 3).
func TestErrorAfterRenameKeepsTheChangeRecorded(t *testing.T) {
	for _, tc := range []struct {
		op  string
		err error
	}{{fileio.FaultSyncDir, syscall.EIO}, {fileio.FaultOpenDir, syscall.EACCES}} {
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
			restore := fileio.SetFaultHook(inject)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
			restore()
			assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
			assert.Contains(t, r.err, target+": rewritten, but: ")
			assert.Contains(t, r.err, tc.err.Error())
			assert.Contains(t, r.out, "rewrote 35 names in 3 files", "the file is counted as rewritten")
			now, _ := os.ReadFile(target)
			require.NotEqual(t, string(orig), string(now), "the file was rewritten")

			r = runCLI(t, env, "", "runs", "--state-dir", state, "--format", "json")
			require.Equal(t, 0, r.code, r.out+r.err)
			assert.Contains(t, r.out, `"files": 3`, r.out)

			// The same error during undo: restored, recorded, reported.
			restore = fileio.SetFaultHook(inject)
			r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
			restore()
			assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
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
	restore := fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultWrite && filepath.Base(path) == "manifest.json" && manifests.Add(1) > 1 {
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
	b, _ := textreport.MarshalJSON(s)
	return string(b)
}

// Issue 9, fault tests: an I/O error injected at each write, fsync, rename and directory
// open/fsync of a fix of one session in turn (then of its undo) never leaves the file mixed,
// never loses the record of a rewrite (undo, repeated once if it failed, gives back every
// original byte), and exits with a documented status.
func TestEveryInjectedErrorLeavesFilesOldOrNewAndUndoable(t *testing.T) {
	t.Run("linked backup", func(t *testing.T) { testEveryInjectedError(t, "") })
	// A state directory on another file system: the backup is a copy, written and fsynced.
	shm, err := os.MkdirTemp("/dev/shm", "sessionfix-test-")
	if err != nil {
		t.Skip("no /dev/shm for a state directory on another file system:", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	t.Run("copied backup", func(t *testing.T) { testEveryInjectedError(t, shm) })
}

// testEveryInjectedError runs the fault sweep with state directories under stateRoot (a
// test temp directory when empty).
func testEveryInjectedError(t *testing.T, stateRoot string) {
	type call struct{ op, path string }
	record := func(run func()) []call {
		var calls []call
		restore := fileio.SetFaultHook(func(op, path string) error {
			calls = append(calls, call{op, path})
			return nil
		})
		run()
		restore()
		return calls
	}
	failAt := func(n int) func() {
		var i atomic.Int32
		return fileio.SetFaultHook(func(op, path string) error {
			if int(i.Add(1)) == n {
				return syscall.EIO
			}
			return nil
		})
	}
	env := testEnv(t)
	pristine := fixtureCopy(t)
	orig, err := os.ReadFile(filepath.Join(pristine, faultTarget))
	require.NoError(t, err)
	// setup copies the session into a fresh directory (and fixes it when fixed is set).
	setup := func(t *testing.T, fixed bool) (session, state string) {
		dir := t.TempDir()
		session = filepath.Join(dir, filepath.Base(faultTarget))
		require.NoError(t, os.WriteFile(session, orig, 0o640))
		state = filepath.Join(t.TempDir(), "S")
		if stateRoot != "" {
			s, err := os.MkdirTemp(stateRoot, "S")
			require.NoError(t, err)
			state = s
		}
		if fixed {
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--quiet", "--state-dir", state, session)
			require.Equal(t, 0, r.code, r.out+r.err)
		}
		return session, state
	}
	var fixed []byte
	fixCalls := record(func() {
		session, _ := setup(t, true)
		fixed, _ = os.ReadFile(session)
	})
	require.NotEqual(t, string(orig), string(fixed))
	require.Greater(t, len(fixCalls), 10, "the seam sees the fix's file operations")
	check := func(t *testing.T, session, state, when string) {
		got, _ := os.ReadFile(session)
		if string(got) != string(orig) && string(got) != string(fixed) {
			t.Errorf("%s: the session is neither old nor new", when)
		}
		for range 2 {
			if r := runCLI(t, env, "", "undo", "--last", "--state-dir", state); r.code == 0 || strings.Contains(r.err+r.out, "no run") {
				break
			}
		}
		got, _ = os.ReadFile(session)
		assert.Equal(t, string(orig), string(got), "%s: undo gives back the original", when)
	}
	for n := 1; n <= len(fixCalls); n++ {
		c := fixCalls[n-1]
		t.Run(fmt.Sprintf("fix-%02d-%s-%s", n, c.op, filepath.Base(c.path)), func(t *testing.T) {
			session, state := setup(t, false)
			restore := failAt(n)
			r := runCLI(t, env, "", "fix", "--apply", "--yes", "--quiet", "--state-dir", state, session)
			restore()
			assert.Contains(t, []int{0, exitcode.Error, exitcode.Partial, exitcode.InUse}, r.code, r.out+r.err)
			check(t, session, state, "fix")
		})
	}
	var undoCalls []call
	{
		session, state := setup(t, true)
		undoCalls = record(func() {
			require.Equal(t, 0, runCLI(t, env, "", "undo", "--last", "--state-dir", state).code)
		})
		got, _ := os.ReadFile(session)
		require.Equal(t, string(orig), string(got))
	}
	require.Greater(t, len(undoCalls), 5, "the seam sees the undo's file operations")
	for n := 1; n <= len(undoCalls); n++ {
		c := undoCalls[n-1]
		t.Run(fmt.Sprintf("undo-%02d-%s-%s", n, c.op, filepath.Base(c.path)), func(t *testing.T) {
			session, state := setup(t, true)
			restore := failAt(n)
			r := runCLI(t, env, "", "undo", "--last", "--state-dir", state)
			restore()
			assert.Contains(t, []int{0, exitcode.Error, exitcode.Partial, exitcode.InUse}, r.code, r.out+r.err)
			check(t, session, state, "undo")
		})
	}
}

// TestFixIgnoresTempFilesAnnouncedByARunOthersCouldWrite (review3): a journal line is all it
// takes for fix --apply to remove a file named `.<store><digits>`, and unsealed lines are read,
// so a run directory another user can write (here: mode 0777) must not be cleaned from. The
// main before this test removed the announced file.
func TestFixIgnoresTempFilesAnnouncedByARunOthersCouldWrite(t *testing.T) {
	env := testEnv(t)
	dir := fixtureCopy(t)
	state := filepath.Join(t.TempDir(), "S")
	outside := t.TempDir()
	target := filepath.Join(outside, "notes")
	victim := filepath.Join(outside, ".notes2026")
	require.NoError(t, os.WriteFile(victim, []byte("not a temp file\n"), 0o600))
	run := filepath.Join(state, "runs", "20261130T115900Z-evil")
	require.NoError(t, os.MkdirAll(filepath.Join(run, "backups"), 0o700))
	require.NoError(t, os.Chmod(run, 0o777))
	journal := `{"event":"temp","path":` + quoteJSON(victim) + `,"store":` + quoteJSON(target) + "}\n"
	require.NoError(t, os.WriteFile(filepath.Join(run, "journal.jsonl"), []byte(journal), 0o600))

	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.NotContains(t, r.err, "removed temp file "+victim)
	b, err := os.ReadFile(victim)
	require.NoError(t, err, "the file a world-writable run announced is kept")
	assert.Equal(t, "not a temp file\n", string(b))
	_, err = os.Stat(target)
	assert.ErrorIs(t, err, os.ErrNotExist, "and no lock file is created at the announced store path")
}
