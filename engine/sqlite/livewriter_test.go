package sqlite_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// TestLiveWriterWithSpilledJournalIsInUse (issue 9, findings 5 and 6; review3): an agent in the
// middle of a large write transaction on a rollback-journal database has spilled its page cache,
// so the -journal starts with the hot-journal magic while the agent, alive, holds the lock. That
// is a store in use (exit 4), not "a crashed writer left a hot journal" nor "cannot be read".
// Before: Scan said "a crashed writer left a hot journal"; Detect with RollBack (fix --apply)
// failed with "roll back the hot journal of …: database is locked" (exit 3).
func TestLiveWriterWithSpilledJournalIsInUse(t *testing.T) {
	p := buildJournalDB(t, "opencode.db", opencodeReal)
	ctx := context.Background()
	conn := spillingWriter(t, p)
	defer conn.ExecContext(ctx, "ROLLBACK")

	for _, rollBack := range []bool{false, true} {
		opt := sqlite.Options{BusyTimeout: 200 * time.Millisecond, RollBack: rollBack}
		var inUse *store.InUseError
		var hj *sqlite.HotJournalError
		st, err := sqlite.Detect(ctx, p, all.SQLiteOptions(opt))
		if err == nil {
			_, err = st.Scan(ctx, store.ScanOptions{})
		}
		require.Error(t, err, "rollBack=%v", rollBack)
		assert.True(t, errors.As(err, &inUse), "rollBack=%v: want in use, got %v", rollBack, err)
		assert.False(t, errors.As(err, &hj), "rollBack=%v: a live writer is no crashed one: %v", rollBack, err)
	}
	_, err := os.Stat(p + "-journal")
	assert.NoError(t, err, "the live writer's journal is left alone")
}

// spillingWriter opens a connection to the rollback-journal database at p and leaves it in the
// middle of a write transaction (4,000 rows of 500 bytes into a new table junk) that spilled its
// one-page cache: the database's lock is held and the -journal carries the hot-journal magic, as
// an agent's large transaction leaves them. The caller ends the transaction (COMMIT or ROLLBACK);
// the connection is closed at the test's end.
func spillingWriter(t *testing.T, p string) *sqlx.Conn {
	t.Helper()
	ctx := context.Background()
	db, err := sqlx.Open("sqlite3", "file:"+p)
	require.NoError(t, err)
	conn, err := db.Connx(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(); db.Close() })
	for _, q := range []string{"PRAGMA cache_size=1", "BEGIN", "CREATE TABLE junk(x)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<4000) INSERT INTO junk SELECT randomblob(500) FROM c"} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, hot := sqlite.HotJournal(p)
	require.True(t, hot, "the writer's spilled journal carries the hot-journal magic")
	return conn
}
