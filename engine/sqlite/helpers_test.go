package sqlite_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/store"
)

const (
	opencodeReal   = "../../fixtures/opencode-real/opencode.sql"
	opencodeLegacy = "testdata/opencode-legacy.sql"
	crushSQL       = "testdata/crush.sql"
	gooseSQL       = "testdata/goose.sql"
	codexState     = "../../fixtures/codex-real/state_5.sql"
	codexHistory   = "../../fixtures/codex-real/thread_history_1.sql"
)

// buildDB builds a WAL database named name in a fresh temp dir from SQL files (or inline SQL
// given as "sql:…").
func buildDB(tb testing.TB, name string, scripts ...string) string {
	tb.Helper()
	return build(tb, name, true, scripts...)
}

// buildJournalDB is buildDB in rollback-journal mode (journal_mode=delete).
func buildJournalDB(tb testing.TB, name string, scripts ...string) string {
	tb.Helper()
	return build(tb, name, false, scripts...)
}

func build(tb testing.TB, name string, wal bool, scripts ...string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	var rs []io.Reader
	for _, s := range scripts {
		if text, ok := strings.CutPrefix(s, "sql:"); ok {
			rs = append(rs, strings.NewReader(text))
			continue
		}
		f, err := os.Open(s)
		require.NoError(tb, err)
		tb.Cleanup(func() { f.Close() })
		rs = append(rs, f)
	}
	require.NoError(tb, sqlitetest.BuildFromSQL(context.Background(), p, wal, rs...))
	return p
}

func opencodeDB(tb testing.TB) string {
	return buildDB(tb, "opencode.db", opencodeReal, opencodeLegacy)
}

// execSQL runs statements on the database as another program (an agent) would.
func execSQL(tb testing.TB, path, query string, args ...any) {
	tb.Helper()
	db, err := sqlx.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	require.NoError(tb, err)
	defer db.Close()
	_, err = db.Exec(query, args...)
	require.NoError(tb, err)
}

// queryString reads one text value.
func queryString(tb testing.TB, path, query string, args ...any) string {
	tb.Helper()
	db, err := sqlx.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(tb, err)
	defer db.Close()
	var s string
	require.NoError(tb, db.Get(&s, query, args...))
	return s
}

func dumpText(tb testing.TB, path string) string {
	tb.Helper()
	var b strings.Builder
	require.NoError(tb, sqlitetest.Dump(context.Background(), path, &b))
	return b.String()
}

func dumpSum(tb testing.TB, path string) string {
	tb.Helper()
	s, err := sqlitetest.DumpSHA256(context.Background(), path)
	require.NoError(tb, err)
	return s
}

func integrity(tb testing.TB, path string) string {
	tb.Helper()
	s, err := sqlite.IntegrityCheck(context.Background(), path)
	require.NoError(tb, err)
	return s
}

// detect opens the store at path with its detected profile.
func detect(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Detect(context.Background(), path, all.SQLiteOptions(sqlite.Options{}))
	require.NoError(tb, err)
	return st
}

func scanStore(tb testing.TB, st store.Store) *store.Snapshot {
	tb.Helper()
	snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
	require.NoError(tb, err)
	return snap
}

// siteRow is a site in compact form for table tests.
type siteRow struct {
	Row, Path, Name string
	Kind            store.SiteKind
	ReadOnly        bool
}

func rowsOf(snap *store.Snapshot) []siteRow {
	out := make([]siteRow, len(snap.Sites))
	for i, s := range snap.Sites {
		out[i] = siteRow{s.Loc.Row, s.Path, s.Name, s.Kind, s.ReadOnly}
	}
	return out
}

// reasons lists the problems' reasons with their severity.
func reasons(snap *store.Snapshot) []string {
	var out []string
	for _, p := range snap.Problems {
		out = append(out, string(p.Severity)+": "+p.Reason)
	}
	return out
}
