package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/exitcode"
)

// TestHelperCrashDuringSQLiteApply is not a test: it is the process TestSQLiteHotJournal kills
// in the middle of a SQLite apply — after the run journaled the change, with the write
// transaction open and its rollback journal on disk, right before COMMIT (exit 9, as SIGKILL
// would leave it: no deferred rollback runs).
func TestHelperCrashDuringSQLiteApply(t *testing.T) {
	dir, state := os.Getenv("SESSIONFIX_TEST_CRASH_DIR"), os.Getenv("SESSIONFIX_TEST_CRASH_STATE")
	if dir == "" {
		t.Skip("helper process")
	}
	env := testEnv(t)
	env.beforeCheck = func(string) { os.Exit(9) }
	runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	os.Exit(1) // not reached when the crash happened
}

// bulkOpencodeStore is opencodeStoreMode(t, false) plus 3000 tool parts of 1.6 KB with a dotted
// name: rewriting them dirties more pages than SQLite's default 2 MB page cache holds, so the
// write transaction spills to the database file and syncs its journal (making it hot) before
// COMMIT — as a large real store does.
func bulkOpencodeStore(t *testing.T) (dir, db string) {
	t.Helper()
	dir, db = opencodeStoreMode(t, false)
	pad := strings.Repeat("x", 1500)
	require.NoError(t, sqlitetest.InsertRows(t.Context(), db, "part",
		[]string{"id", "message_id", "session_id", "time_created", "time_updated", "data"},
		func(emit func(...any) error) error {
			for i := range 3000 {
				data := fmt.Sprintf(`{"type":"tool","tool":"lit_literature.search_pubmed","callID":"call_bulk%d","state":{"status":"completed","input":{},"output":"%s","title":"","time":{"start":1,"end":2}}}`, i, pad)
				if err := emit(fmt.Sprintf("prt_bulk%06d", i), "msg_legacy00000000000000000002", "ses_legacy00000000000000000001", int64(1700000004000+i), int64(1700000004000+i), data); err != nil {
					return err
				}
			}
			return nil
		}))
	return dir, db
}

func crashDuringApply(t *testing.T, dir, state string) {
	t.Helper()
	cmd := helperProcess(t, "TestHelperCrashDuringSQLiteApply", "SESSIONFIX_TEST_CRASH_DIR="+dir, "SESSIONFIX_TEST_CRASH_STATE="+state)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, string(out))
	require.Equal(t, 9, ee.ExitCode(), string(out))
}

// TestSQLiteHotJournal (issue 9, finding 5): a fix killed in the middle of a SQLite apply on a
// rollback-journal database leaves a hot journal. scan (read-only) says so with the right hint
// (exit 3, not the WAL "-shm" hint); the crashed run is listed and undo rolls the journal back
// under the lock first and finishes (the database is the original); fix --apply rolls it back,
// says so and rewrites. The original main could never read the database again.
func TestSQLiteHotJournal(t *testing.T) {
	env := testEnv(t)
	dir, db := bulkOpencodeStore(t)
	state := filepath.Join(t.TempDir(), "S")
	orig := dumpSHA(t, db)

	crashDuringApply(t, dir, state)
	j, hot := sqlite.HotJournal(db)
	require.True(t, hot, "the crash left a hot journal %s", j)

	r := runCLI(t, env, "", "scan", dir)
	assert.Equal(t, exitcode.Partial, r.code, r.out+r.err)
	assert.Contains(t, r.err, "a crashed writer left a hot journal ("+db+"-journal)")
	assert.Contains(t, r.err, "`sessionfix fix --apply` or `undo` rolls it back first")
	assert.NotContains(t, r.err, "-shm")
	_, hot = sqlite.HotJournal(db)
	assert.True(t, hot, "scan only reads")

	r = runCLI(t, env, "", "runs", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Regexp(t, `partial\s+1\s+3011`, r.out, "the crashed run is listed as partial with the store it journaled")

	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "restored 1 database")
	_, hot = sqlite.HotJournal(db)
	assert.False(t, hot, "undo rolled the journal back")
	assert.Equal(t, orig, dumpSHA(t, db))

	crashDuringApply(t, dir, state)
	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out+r.err, "rolled back the hot journal a crashed writer left ("+db+"-journal)")
	assert.Contains(t, r.out, "rewrote 3011 names")
	ok, err := sqlite.IntegrityCheck(t.Context(), db)
	require.NoError(t, err)
	assert.Equal(t, "ok", ok)
	r = runCLI(t, env, "", "undo", "--last", "--state-dir", state)
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Equal(t, orig, dumpSHA(t, db))
}
