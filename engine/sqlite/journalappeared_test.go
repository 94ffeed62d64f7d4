package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/engine/sqlite/sqlitetest"
	"github.com/sessionfix/sessionfix/store"
)

// crashedImage returns the bytes a writer that crashed in the middle of a large transaction on
// the rollback-journal database at p would leave: the database file with the spilled pages and
// its synced journal. p itself is left as it was.
func crashedImage(t *testing.T, p string) (dbBytes, journal []byte) {
	t.Helper()
	ctx := context.Background()
	orig, err := os.ReadFile(p)
	require.NoError(t, err)
	q := p + ".crash"
	require.NoError(t, os.WriteFile(q, orig, 0o644))
	db, err := sqlx.Open("sqlite3", "file:"+q)
	require.NoError(t, err)
	defer db.Close()
	conn, err := db.Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, s := range []string{"PRAGMA cache_size=1", "BEGIN", "UPDATE part SET data = replace(data, 'xxxx', 'yyyy')"} {
		_, err := conn.ExecContext(ctx, s)
		require.NoError(t, err, s)
	}
	_, hot := sqlite.HotJournal(q)
	require.True(t, hot, "the spilled transaction's journal carries the magic")
	dbBytes, err = os.ReadFile(q)
	require.NoError(t, err)
	journal, err = os.ReadFile(q + "-journal")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	require.NotEqual(t, orig, dbBytes, "the spill wrote to the database file")
	return dbBytes, journal
}

// TestJournalAppearingMidScanIsInUse (torture writer-inserts-during-sqlite-fix, rollback-journal
// trials, 2 of 30): a rollback-journal database whose read-only scan meets, between two of its
// reads, a journal SQLite judges hot (an agent wrote while it was read) is a store in use
// (exit 4), for scan and for fix --apply's scan alike. Before: "read table part of …: attempt to
// write a readonly database" (exit 3).
func TestJournalAppearingMidScanIsInUse(t *testing.T) {
	ctx := context.Background()
	for _, rollBack := range []bool{false, true} {
		t.Run(fmt.Sprintf("rollBack=%v", rollBack), func(t *testing.T) {
			p := buildJournalDB(t, "opencode.db", opencodeReal)
			pad := strings.Repeat("x", 1500)
			require.NoError(t, sqlitetest.InsertRows(ctx, p, "part",
				[]string{"id", "message_id", "session_id", "time_created", "time_updated", "data"},
				func(emit func(...any) error) error {
					for i := range 400 { // one batch (batchRows): its statement has ended when fn sees it
						data := fmt.Sprintf(`{"type":"tool","tool":"lit_literature.search_pubmed","callID":"call_bulk%d","state":{"status":"completed","input":{},"output":"%s","title":"","time":{"start":1,"end":2}}}`, i, pad)
						if err := emit(fmt.Sprintf("prt_bulk%06d", i), "msg_legacy00000000000000000002", "ses_legacy00000000000000000001", int64(1700000004000+i), int64(1700000004000+i), data); err != nil {
							return err
						}
					}
					return nil
				}))
			dbBytes, journal := crashedImage(t, p)

			st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{RollBack: rollBack}))
			require.NoError(t, err)
			planted := false
			_, err = st.ScanBatches(ctx, store.ScanOptions{}, func(*store.Snapshot, []store.Site) error {
				if !planted {
					// Between two reads (part's only batch read, session's not yet): a
					// writer's spilled pages and its hot journal appear.
					planted = true
					require.NoError(t, os.WriteFile(p, dbBytes, 0o644))
					require.NoError(t, os.WriteFile(p+"-journal", journal, 0o644))
				}
				return nil
			})
			require.True(t, planted, "the scan handed on a batch")
			require.Error(t, err)
			var inUse *store.InUseError
			var hj *sqlite.HotJournalError
			assert.True(t, errors.As(err, &inUse), "want in use, got %v", err)
			assert.False(t, errors.As(err, &hj), "the scan had begun: %v", err)
			assert.Contains(t, err.Error(), "written while it was read")
		})
	}
}

// TestLiveJournalDuringRollBackIsInUse (torture writer-inserts-during-sqlite-fix,
// rollback-journal trials): fix --apply finds a journal with the hot-journal magic, but it is a
// live writer's (it holds the RESERVED lock: SQLite reads on without rolling anything back) and
// is still there afterwards. That is a store in use (exit 4). Before: "roll back the hot journal
// of …: …-journal is still there" (exit 3). The writer here runs with synchronous=OFF, so its
// journal carries the magic from its first write, without a spill or the EXCLUSIVE lock.
func TestLiveJournalDuringRollBackIsInUse(t *testing.T) {
	ctx := context.Background()
	p := buildJournalDB(t, "opencode.db", opencodeReal)
	db, err := sqlx.Open("sqlite3", "file:"+p)
	require.NoError(t, err)
	defer db.Close()
	conn, err := db.Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, s := range []string{"PRAGMA synchronous=OFF", "BEGIN", "UPDATE session SET title = title || '!'"} {
		_, err := conn.ExecContext(ctx, s)
		require.NoError(t, err, s)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	_, hot := sqlite.HotJournal(p)
	require.True(t, hot, "the live writer's journal carries the magic")

	st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{RollBack: true}))
	if err == nil {
		_, err = st.Scan(ctx, store.ScanOptions{})
	}
	require.Error(t, err)
	var inUse *store.InUseError
	assert.True(t, errors.As(err, &inUse), "want in use, got %v", err)
	assert.Contains(t, err.Error(), "another connection is writing it")
	_, hot = sqlite.HotJournal(p)
	assert.True(t, hot, "the live writer's journal is left alone")
}

// TestWriterCommittingDuringRollBackIsNoCrash: fix --apply sees a journal with the hot-journal
// magic while a live writer is committing (it holds the database's lock: it spilled its cache),
// waits for the lock, and finds the journal gone — the writer deleted it when it committed.
// Nothing was rolled back, so the scan must not say "rolled back the hot journal a crashed writer
// left". Before: it did (the read that waited could not tell the writer's commit from its own
// rollback).
func TestWriterCommittingDuringRollBackIsNoCrash(t *testing.T) {
	ctx := context.Background()
	p := buildJournalDB(t, "opencode.db", opencodeReal)
	conn := spillingWriter(t, p)

	committed := false
	defer sqlite.SetLockWaitHook(func() {
		_, err := conn.ExecContext(ctx, "COMMIT")
		require.NoError(t, err)
		committed = true
	})()
	st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(sqlite.Options{BusyTimeout: 10 * time.Second, RollBack: true}))
	require.NoError(t, err)
	snap, err := st.Scan(ctx, store.ScanOptions{})
	require.NoError(t, err)
	assert.True(t, committed, "the first read found the writer's lock")
	for _, pr := range snap.Problems {
		assert.NotContains(t, pr.Reason, "rolled back the hot journal", "a commit is no crash")
	}
	_, err = os.Stat(p + "-journal")
	assert.True(t, os.IsNotExist(err), "the writer deleted its journal: %v", err)
	var n int
	require.NoError(t, conn.GetContext(ctx, &n, "SELECT count(*) FROM junk"))
	assert.Equal(t, 4000, n, "the writer's commit stands")
}
