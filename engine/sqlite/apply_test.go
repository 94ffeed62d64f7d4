package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/agent/crush"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// lineKey returns "table value" for a dump line "INSERT INTO table VALUES(value,…" (the first
// column, which is the key of every table these tests change).
func lineKey(line string) string {
	rest, ok := strings.CutPrefix(line, "INSERT INTO ")
	if !ok {
		return ""
	}
	table, vals, _ := strings.Cut(rest, " VALUES(")
	if strings.HasPrefix(vals, "'") {
		v, _, _ := strings.Cut(vals[1:], "'")
		return table + " " + v
	}
	v, _, _ := strings.Cut(vals, ",")
	return table + " " + v
}

// editKey returns "table value" for a site's row label "table col=value".
func editKey(row string) string {
	table, kv, _ := strings.Cut(row, " ")
	_, v, _ := strings.Cut(kv, "=")
	return table + " " + v
}

// assertOnlyNamesChanged compares two dumps line by line: the lines of rows with edits differ by
// exactly their name tokens (each old token written as its new JSON string), every other line is
// identical. It returns the tables that changed.
func assertOnlyNamesChanged(t *testing.T, before, after string, edits []store.Edit) map[string]int {
	t.Helper()
	byRow := map[string][]store.Edit{}
	for _, e := range edits {
		byRow[editKey(e.Site.Loc.Row)] = append(byRow[editKey(e.Site.Loc.Row)], e)
	}
	bl, al := strings.Split(before, "\n"), strings.Split(after, "\n")
	require.Equal(t, len(bl), len(al), "same number of dump lines")
	tables := map[string]int{}
	seen := map[string]bool{}
	for i := range bl {
		key := lineKey(bl[i])
		es, planned := byRow[key]
		if !planned {
			assert.Equal(t, bl[i], al[i], "line %d is not planned and must not change", i+1)
			continue
		}
		want := bl[i]
		for _, e := range es {
			// A text value is quoted in the dump: a ' in a name is doubled there.
			old := strings.ReplaceAll(string(e.Site.Raw), "'", "''")
			nw := strings.ReplaceAll(string(jsonscan.AppendQuote(nil, e.New)), "'", "''")
			require.Contains(t, want, old)
			want = strings.Replace(want, old, nw, 1)
		}
		assert.Equal(t, want, al[i], "%s: only the planned names changed", key)
		seen[key] = true
		table, _, _ := strings.Cut(key, " ")
		tables[table]++
	}
	assert.Len(t, seen, len(byRow), "every planned row was found in the dump")
	return tables
}

// TestOpencodeAcceptance is issue 4's acceptance on the real opencode dump plus legacy rows:
// dry-run changes nothing, apply rewrites exactly the planned values in every table, a second
// apply finds nothing, undo restores a dump-identical database, integrity_check is ok throughout.
func TestOpencodeAcceptance(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	origDump, origSum := dumpText(t, p), dumpSum(t, p)
	require.Equal(t, "ok", integrity(t, p))

	st := detect(t, p)
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 11)
	assert.Equal(t, origSum, dumpSum(t, p), "dry-run: same sha256 of the dump")

	bk := filepath.Join(t.TempDir(), "run", "backups", "0001-opencode.db")
	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: bk})
	require.NoError(t, err)
	assert.Equal(t, 11, ch.Edits)
	assert.Empty(t, ch.Warnings, "opencode has no UPDATE triggers")
	assert.Equal(t, "ok", integrity(t, p))
	tables := assertOnlyNamesChanged(t, origDump, dumpText(t, p), edits)
	assert.Equal(t, map[string]int{"part": 5, "event": 6}, tables, "both copies of each name changed")
	assert.NotEqual(t, origSum, dumpSum(t, p))

	// The backup is one self-contained file holding the original content.
	assert.Equal(t, origSum, dumpSum(t, bk))
	assert.Equal(t, "ok", integrity(t, bk))
	assert.Equal(t, "delete", queryString(t, bk, "PRAGMA journal_mode"))
	assert.NoFileExists(t, bk+"-wal")
	assert.FileExists(t, bk+".rows.jsonl")

	again := scanStore(t, detect(t, p))
	assert.Empty(t, storetest.Edits(again, storetest.ProviderSafe), "a second apply finds nothing")

	require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
	assert.Equal(t, origSum, dumpSum(t, p), "undo restores a dump-identical database")
	assert.Equal(t, origDump, dumpText(t, p))
	assert.Equal(t, "ok", integrity(t, p))
	assert.Equal(t, "wal", queryString(t, p, "PRAGMA journal_mode"), "the store keeps its journal mode")
}

// TestTriggersDoNotChangeOtherColumns: crush's schema bumps messages.updated_at on every UPDATE;
// the rewrite keeps it, so only the names change, and says so.
func TestTriggersDoNotChangeOtherColumns(t *testing.T) {
	p := buildDB(t, "crush.db", crushSQL)
	before := dumpText(t, p)
	st := detect(t, p)
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 6)
	ch, err := st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	tables := assertOnlyNamesChanged(t, before, dumpText(t, p), edits)
	assert.Equal(t, map[string]int{"messages": 4}, tables)
	assert.Equal(t, []string{"kept messages.updated_at unchanged: an UPDATE trigger of the store's schema would have changed it along with the names"}, ch.Warnings)
	// The trigger itself still works for the agent.
	execSQL(t, p, "UPDATE messages SET model = 'x' WHERE id = 'm-0001'")
	assert.NotEqual(t, "1748771900", queryString(t, p, "SELECT CAST(updated_at AS TEXT) FROM messages WHERE id = 'm-0001'"))
}

// TestApplyRefusesChangedRows: a row changed or deleted since the scan refuses the whole store as
// in use; nothing is written and no backup is left.
func TestApplyRefusesChangedRows(t *testing.T) {
	tests := []struct {
		name, sql, reason string
		mismatch          bool // errors.Is(err, store.ErrTokenMismatch)
	}{
		{"value changed", `UPDATE part SET data = ' ' || data WHERE id = 'prt_legacy00000000000000000002'`,
			"part id=prt_legacy00000000000000000002: name token not found at its offset (offset 22) (content changed since it was scanned)", true},
		{"row deleted", `DELETE FROM event WHERE id = 'evt_legacy00000000000000000006'`,
			"event id=evt_legacy00000000000000000006 was deleted since it was scanned", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := opencodeDB(t)
			st := detect(t, p)
			snap := scanStore(t, st)
			execSQL(t, p, tt.sql)
			changed := dumpSum(t, p)
			bk := filepath.Join(t.TempDir(), "bk")
			_, err := st.Apply(context.Background(), snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
			require.ErrorIs(t, err, store.ErrInUse)
			assert.Contains(t, err.Error(), tt.reason)
			assert.Equal(t, tt.mismatch, errors.Is(err, store.ErrTokenMismatch))
			assert.Equal(t, changed, dumpSum(t, p), "nothing was written")
			assert.NoFileExists(t, bk)
			assert.NoFileExists(t, bk+".rows.jsonl")
		})
	}
}

// TestApplyRefusesLockedStore: another connection holding the write lock longer than the busy
// timeout refuses the store as in use; once it is released the same plan applies.
func TestApplyRefusesLockedStore(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	orig := dumpSum(t, p)
	st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{BusyTimeout: 200 * time.Millisecond}))
	require.NoError(t, err)
	snap := scanStore(t, st)
	lock, err := sqlitetest.HoldWriteLock(ctx, p, time.Second)
	require.NoError(t, err)
	bk := filepath.Join(t.TempDir(), "bk")
	_, err = st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
	require.ErrorIs(t, err, store.ErrInUse)
	assert.Contains(t, err.Error(), "store is in use by another process")
	assert.Contains(t, err.Error(), "its write lock is held by another connection; gave up after 200ms")
	assert.NoFileExists(t, bk)
	require.NoError(t, lock.Release())
	assert.Equal(t, orig, dumpSum(t, p))

	_, err = st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
	require.NoError(t, err)
}

// TestHelperHoldWriteLock is not a test: it is the second process of
// TestApplyRefusedWhileAnotherProcessHoldsTheLock (it holds the write lock until stdin closes).
func TestHelperHoldWriteLock(t *testing.T) {
	path := os.Getenv("SESSIONFIX_SQLITE_LOCK_HELPER")
	if path == "" {
		t.Skip("helper process")
	}
	lock, err := sqlitetest.HoldWriteLock(context.Background(), path, 5*time.Second)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = lock.Release()
	os.Exit(0)
}

// holdLockInProcess starts a second process holding the write lock of the database at path; the
// returned function releases it.
func holdLockInProcess(t *testing.T, path string) func() {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldWriteLock$")
	cmd.Env = append(os.Environ(), "SESSIONFIX_SQLITE_LOCK_HELPER="+path)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)
	done := false
	release := func() {
		if !done {
			done = true
			stdin.Close()
			require.NoError(t, cmd.Wait())
		}
	}
	t.Cleanup(release)
	return release
}

// TestApplyRefusedWhileAnotherProcessHoldsTheLock: a real second process (an agent in a write
// transaction) makes apply and undo give up with the in-use error; nothing changes.
func TestApplyRefusedWhileAnotherProcessHoldsTheLock(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	orig := dumpSum(t, p)
	opt := sqlite.Options{BusyTimeout: 300 * time.Millisecond}
	st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(opt))
	require.NoError(t, err)
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)

	release := holdLockInProcess(t, p)
	_, err = st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.ErrorIs(t, err, store.ErrInUse)
	assert.Contains(t, err.Error(), "store is in use by another process")
	release()
	assert.Equal(t, orig, dumpSum(t, p), "nothing changed")

	ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	after := dumpSum(t, p)
	release = holdLockInProcess(t, p)
	err = sqlite.Open(p, opt).Restore(ctx, ch, false)
	require.ErrorIs(t, err, store.ErrInUse, "undo gives up too")
	release()
	assert.Equal(t, after, dumpSum(t, p))
	require.NoError(t, sqlite.Open(p, opt).Restore(ctx, ch, false))
	assert.Equal(t, orig, dumpSum(t, p))
}

// TestReaderDuringApply: a reader with a transaction open during the apply keeps a consistent
// view (every copy old), is never blocked, and a reader after the commit sees every copy new —
// never part of the names in one table and not the other.
func TestReaderDuringApply(t *testing.T) {
	ctx := context.Background()
	p := opencodeDB(t)
	st := detect(t, p)
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)

	const oldTok, newTok = `%"lit_literature.search_pubmed"%`, `%"lit_literature_search_pubmed_138667s"%`
	count := func(q interface {
		GetContext(context.Context, any, string, ...any) error
	}) (oldN, newN int) {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		const sql = `SELECT (SELECT count(*) FROM part WHERE data LIKE ?) + (SELECT count(*) FROM event WHERE data LIKE ?)`
		require.NoError(t, q.GetContext(qctx, &oldN, sql, oldTok, oldTok), "a reader is not blocked")
		require.NoError(t, q.GetContext(qctx, &newN, sql, newTok, newTok))
		return oldN, newN
	}
	rdb, err := sqlx.Open("sqlite3", "file:"+p+"?mode=ro")
	require.NoError(t, err)
	defer rdb.Close()
	held, err := rdb.BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer held.Rollback()
	o, n := count(held)
	require.Equal(t, [2]int{5, 0}, [2]int{o, n}, "2 parts and 3 events hold the dotted name")

	during := [2]int{-1, -1}
	hooked := fileio.WithBeforeCheck(ctx, func(string) {
		// Rows are rewritten, not yet committed: a new reader sees the old database whole.
		fresh, err := sqlx.Open("sqlite3", "file:"+p+"?mode=ro")
		require.NoError(t, err)
		defer fresh.Close()
		during[0], during[1] = count(fresh)
	})
	_, err = st.Apply(hooked, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	assert.Equal(t, [2]int{5, 0}, during)
	o, n = count(held)
	assert.Equal(t, [2]int{5, 0}, [2]int{o, n}, "the open transaction keeps its snapshot")
	require.NoError(t, held.Rollback())
	o, n = count(rdb)
	assert.Equal(t, [2]int{0, 5}, [2]int{o, n}, "after the commit every copy is new")
}

// TestRestoreChecks: undo checks the backup and its record, and refuses (or with force,
// overrides) values changed since the run.
func TestRestoreChecks(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (string, *store.Change) {
		p := opencodeDB(t)
		st := detect(t, p)
		snap := scanStore(t, st)
		ch, err := st.Apply(ctx, snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
		require.NoError(t, err)
		return p, ch
	}
	t.Run("damaged backup", func(t *testing.T) {
		p, ch := setup(t)
		execSQL(t, ch.Backup, "UPDATE project SET name = 'x'")
		err := sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, true)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is damaged")
	})
	t.Run("damaged change record", func(t *testing.T) {
		p, ch := setup(t)
		f, err := os.OpenFile(ch.Backup+".rows.jsonl", os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, _ = f.WriteString("{}\n")
		f.Close()
		err = sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, true)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is damaged")
	})
	t.Run("not a SQLite change", func(t *testing.T) {
		p, ch := setup(t)
		ch.Verify = nil
		require.Error(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
	})
	t.Run("rewritten row deleted since", func(t *testing.T) {
		p, ch := setup(t)
		execSQL(t, p, "DELETE FROM event WHERE id = 'evt_legacy00000000000000000003'")
		changed := dumpSum(t, p)
		err := sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false)
		require.ErrorIs(t, err, store.ErrChangedSinceRun)
		assert.Contains(t, err.Error(), "changed since the run (rows changed: event id=evt_legacy00000000000000000003 was deleted; use --force to restore anyway)")
		assert.Equal(t, changed, dumpSum(t, p), "a refused undo changes nothing")
		require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, true))
		again := scanStore(t, detect(t, p))
		assert.Len(t, storetest.Edits(again, storetest.ProviderSafe), 10, "the other ten names are original again")
	})
	t.Run("rows added since are kept", func(t *testing.T) {
		p, ch := setup(t)
		execSQL(t, p, `INSERT INTO part VALUES('prt_after','msg_legacy00000000000000000002','ses_legacy00000000000000000001',1,2,'{"type":"tool","tool":"lit_ok_tool"}')`)
		require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
		assert.Equal(t, `{"type":"tool","tool":"lit_ok_tool"}`, queryString(t, p, "SELECT data FROM part WHERE id = 'prt_after'"))
		again := scanStore(t, detect(t, p))
		assert.Len(t, storetest.Edits(again, storetest.ProviderSafe), 11)
	})
}

// TestApplyBatchesSplitRows: edits handed to ApplyBatches one at a time (a row's edits split
// across batches, the batch slice reused) rewrite the database exactly as Apply does, and
// the scan's batches hold every site once, in scan order.
func TestApplyBatchesSplitRows(t *testing.T) {
	ctx := context.Background()
	var ins strings.Builder
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&ins, `INSERT INTO messages VALUES ('m%04d', 's1', '[{"type":"tool_call","data":{"id":"c%d","name":"lit.a%d"}},{"type":"text"},{"type":"tool_call","data":{"id":"d%d","name":"ok_%d"}},{"type":"tool_result","data":{"tool_call_id":"c%d","name":"lit.a%d"}}]');`+"\n", i, i, i%7, i, i, i, i%7)
	}
	schema := "sql:CREATE TABLE sessions (id TEXT PRIMARY KEY);\nCREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, parts TEXT);\nBEGIN;\n"
	ins.WriteString("COMMIT;\n")
	a := buildDB(t, "a.db", schema+ins.String())
	b := buildDB(t, "b.db", schema+ins.String())

	sa := sqlite.OpenWith(a, crush.Profile, sqlite.Options{})
	snapA := scanStore(t, sa)
	edits := storetest.Edits(snapA, storetest.ProviderSafe)
	require.Len(t, edits, 5000)
	_, err := sa.Apply(ctx, snapA, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)

	sb := sqlite.OpenWith(b, crush.Profile, sqlite.Options{})
	var batches, sites int
	var all []store.Site
	snapB, err := sb.ScanBatches(ctx, store.ScanOptions{}, func(head *store.Snapshot, s []store.Site) error {
		batches++
		sites += len(s)
		assert.Equal(t, crush.ID, head.Agent)
		all = append(all, s...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, snapB.Sites)
	assert.Equal(t, (2500+sqlite.BatchRows-1)/sqlite.BatchRows, batches, "2500 rows in batches of %d", sqlite.BatchRows)
	assert.Equal(t, len(snapA.Sites), sites)
	assert.Equal(t, snapA.Sites, all, "the same sites, in scan order")
	snapB.Sites = all
	eb := storetest.Edits(snapB, storetest.ProviderSafe)
	i := 0
	buf := make([]store.Edit, 1)
	ch, err := sb.ApplyBatches(ctx, snapB, func() ([]store.Edit, error) {
		if i == len(eb) {
			return nil, io.EOF
		}
		buf[0] = eb[i] // the same slice each time
		i++
		return buf, nil
	}, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	assert.Equal(t, 5000, ch.Edits)
	assert.Equal(t, dumpText(t, a), dumpText(t, b))
}
