package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// opencodeStore builds, in a fresh directory, the opencode database of the real dump plus the
// legacy rows of engine/sqlite's tests (11 names to rewrite in part and event).
func opencodeStore(t testing.TB) (dir, db string) {
	t.Helper()
	return opencodeStoreMode(t, true)
}

// opencodeStoreMode is opencodeStore in WAL or rollback-journal (DELETE) mode.
func opencodeStoreMode(t testing.TB, wal bool, extra ...io.Reader) (dir, db string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "opencode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	db = filepath.Join(dir, "opencode.db")
	var rs []io.Reader
	for _, p := range []string{"../../fixtures/opencode-real/opencode.sql", "../../engine/sqlite/testdata/opencode-legacy.sql"} {
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		rs = append(rs, f)
	}
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, wal, append(rs, extra...)...))
	return dir, db
}

func dumpSHA(t testing.TB, db string) string {
	t.Helper()
	s, err := sqlitetest.DumpSHA256(context.Background(), db)
	require.NoError(t, err)
	return s
}

// TestFixSQLiteStore: scan finds the database by its header, fix plans and applies, a second
// fix finds nothing, undo restores a dump-identical database.
func TestFixSQLiteStore(t *testing.T) {
	env := testEnv(t)
	dir, db := opencodeStore(t)
	state := filepath.Join(t.TempDir(), "S")
	// The name says nothing: detection is by header bytes.
	renamed := filepath.Join(dir, "sessions.data")
	require.NoError(t, os.Rename(db, renamed))
	db = renamed
	orig := dumpSHA(t, db)

	r := runCLI(t, env, "", "scan", "--format", "json", dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	var rep struct {
		Stores []struct {
			Path, Kind     string
			Sites, Rewrite int
		} `json:"stores"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep))
	require.Len(t, rep.Stores, 1)
	assert.Equal(t, "sqlite", rep.Stores[0].Kind)
	assert.Equal(t, 11, rep.Stores[0].Rewrite)

	r = runCLI(t, env, "", "fix", dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "part id=prt_legacy00000000000000000001")
	assert.Contains(t, r.out, "lit_literature_search_pubmed_138667s")
	assert.Equal(t, orig, dumpSHA(t, db), "dry-run changes nothing")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "rewrote 11 names")
	assert.NotEqual(t, orig, dumpSHA(t, db))
	check, err := sqlite.IntegrityCheck(context.Background(), db)
	require.NoError(t, err)
	assert.Equal(t, "ok", check)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "nothing to change")

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, dumpSHA(t, db), "undo restores a dump-identical database")
}

// TestScanNamesUnknownDatabase: a SQLite file named explicitly that no profile describes is an
// error naming its tables; --profile describes it.
func TestScanNamesUnknownDatabase(t *testing.T) {
	env := testEnv(t)
	db := filepath.Join(t.TempDir(), "notes.db")
	require.NoError(t, sqlitetest.BuildFromSQL(context.Background(), db, false, stringReader(
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, doc TEXT); INSERT INTO notes VALUES (1, '{"tool":"lit.search"}');`)))
	r := runCLI(t, env, "", "scan", db)
	assert.Equal(t, exitcode.Partial, r.code)
	assert.Contains(t, r.err, "no known SQLite store profile matches the database (tables: notes); describe it with --profile FILE")

	prof := filepath.Join(t.TempDir(), "notes.json")
	require.NoError(t, os.WriteFile(prof, []byte(`{"name":"notes","agent":"notes","tables":[{"table":"notes","column":"doc","sites":[{"path":"$.tool"}]}]}`), 0o644))
	r = runCLI(t, env, "", "scan", "--profile", prof, db)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "lit_search_0ded33o")

	r = runCLI(t, env, "", "scan", "--profile", filepath.Join(t.TempDir(), "missing.json"), db)
	assert.Equal(t, exitcode.Usage, r.code)
}

// TestHelperSQLiteWriteLock is not a test: it is the second process of TestFixSQLiteInUse, an
// agent holding the store's write lock until its stdin closes.
func TestHelperSQLiteWriteLock(t *testing.T) {
	path := os.Getenv("SESSIONFIX_TEST_SQLITE_LOCK")
	if path == "" {
		t.Skip("helper process")
	}
	hold := sqlitetest.HoldWriteLock
	if os.Getenv("SESSIONFIX_TEST_SQLITE_EXCLUSIVE") != "" {
		hold = sqlitetest.HoldExclusiveLock
	}
	lock, err := hold(context.Background(), path, 5*time.Second)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = lock.Release()
	os.Exit(0)
}

// TestFixSQLiteInUse: while a second process holds the write lock, fix --apply gives up with
// exit 4 and "store is in use by another process", and nothing changes; undo does the same.
func TestFixSQLiteInUse(t *testing.T) {
	env := testEnv(t)
	dir, db := opencodeStore(t)
	state := filepath.Join(t.TempDir(), "S")
	orig := dumpSHA(t, db)

	lock := func() func() {
		cmd := helperProcess(t, "TestHelperSQLiteWriteLock", "SESSIONFIX_TEST_SQLITE_LOCK="+db)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "locked\n", line)
		return func() { stdin.Close(); require.NoError(t, cmd.Wait()) }
	}

	release := lock()
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--busy-timeout", "300ms", "--state-dir", state, dir)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Contains(t, r.err, "store is in use by another process")
	release()
	assert.Equal(t, orig, dumpSHA(t, db), "nothing changed")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	after := dumpSHA(t, db)

	release = lock()
	r = runCLI(t, env, "", "undo", "--last", "--busy-timeout", "300ms", "--state-dir", state)
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Contains(t, r.err, "store is in use by another process", "a refused store is a problem: stderr")
	release()
	assert.Equal(t, after, dumpSHA(t, db))

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, dumpSHA(t, db))
}

// holdLock starts the helper process holding db's write lock (exclusive: an EXCLUSIVE lock no
// reader gets past) and returns its release.
func holdLock(t *testing.T, db string, exclusive bool) func() {
	t.Helper()
	cmd := helperProcess(t, "TestHelperSQLiteWriteLock", "SESSIONFIX_TEST_SQLITE_LOCK="+db)
	if exclusive {
		cmd.Env = append(cmd.Env, "SESSIONFIX_TEST_SQLITE_EXCLUSIVE=1")
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	return func() { stdin.Close(); require.NoError(t, cmd.Wait()) }
}

// TestScanSQLiteExclusiveLock (issue 9, finding 6): a database an agent keeps under an
// EXCLUSIVE lock (WAL and rollback journal) is "in use", exit 4, after --busy-timeout — the
// message says how long it waited — in scan and in fix; nothing changes and no run is left.
// The original main said "cannot be read" (exit 3) after 250 ms whatever --busy-timeout said.
func TestScanSQLiteExclusiveLock(t *testing.T) {
	for _, wal := range []bool{true, false} {
		env := testEnv(t)
		dir, db := opencodeStoreMode(t, wal)
		state := filepath.Join(t.TempDir(), "S")
		orig := dumpSHA(t, db)
		release := holdLock(t, db, true)
		r := runCLI(t, env, "", "scan", "--busy-timeout", "700ms", dir)
		assert.Equal(t, exitcode.InUse, r.code, "wal=%v: %s", wal, r.out+r.err)
		assert.Contains(t, r.err, "store is in use by another process (locked by another process; gave up reading it after 700ms (--busy-timeout))")
		assert.Contains(t, r.out, "in use")
		assert.NotContains(t, r.out+r.err, "cannot be read")
		assert.Contains(t, r.out, "nothing to change: no name needs rewriting in 0 stores; 0 legacy truncated names kept; 1 store left out (in use; see errors)\n")
		r = runCLI(t, env, "", "fix", "--apply", "--yes", "--busy-timeout", "700ms", "--state-dir", state, dir)
		assert.Equal(t, exitcode.InUse, r.code, "wal=%v: %s", wal, r.out+r.err)
		assert.Contains(t, r.out, "1 store left out (in use; see errors)\n", "wal=%v", wal)
		release()
		assert.Equal(t, orig, dumpSHA(t, db))
		_, err := os.Stat(filepath.Join(state, "runs"))
		assert.True(t, os.IsNotExist(err), "no run directory for a store refused before any rewrite")
	}
}

func stringReader(s string) io.Reader { return strings.NewReader(s) }

// TestRefusedSQLiteStoreLeavesNoRun (issue 9, finding 11): fix --apply refusing a SQLite store
// whose write lock an agent holds (exit 4) rewrote nothing, so it leaves no run directory and
// `runs` lists none. The original main left an empty run behind each time.
func TestRefusedSQLiteStoreLeavesNoRun(t *testing.T) {
	env := testEnv(t)
	dir, _ := opencodeStore(t)
	state := filepath.Join(t.TempDir(), "S")
	release := holdLock(t, filepath.Join(dir, "opencode.db"), false)
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--busy-timeout", "200ms", "--state-dir", state, dir)
	release()
	require.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	// The closing line says the database was skipped because it is in use, counted as a
	// database (the original main: "rewrote 0 names in 0 files; …; 1 file skipped").
	assert.Contains(t, r.out, "rewrote 0 names in 0 files; 0 legacy truncated names kept; 1 other legacy name kept (see the notes and warnings); 1 database skipped (in use)\n")
	runs, _ := os.ReadDir(filepath.Join(state, "runs"))
	assert.Empty(t, runs, "no run directory for a run that rewrote nothing")
	r = runCLI(t, env, "", "runs", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.NotContains(t, r.out, "2026", "runs lists no run")
	assert.NotContains(t, r.out, "undo with", "no undo hint")
}
