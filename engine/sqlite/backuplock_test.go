package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestHelperForeignInsert is not a test: it is the other process of TestBackupCopyKeepsTheLocks
// (an agent). It inserts one row into the database without waiting for a lock (busy timeout
// 0) and prints "inserted" or "error <message>".
func TestHelperForeignInsert(t *testing.T) {
	path := os.Getenv("SESSIONFIX_SQLITE_FOREIGN_DB")
	if path == "" {
		t.Skip("helper process")
	}
	db, err := sqlx.Open("sqlite3", "file:"+path+"?_busy_timeout=0")
	if err == nil {
		_, err = db.Exec(`INSERT INTO plain VALUES ('{"tool":"foreign"}')`)
		db.Close()
	}
	if err != nil {
		fmt.Println("error", err)
	} else {
		fmt.Println("inserted")
	}
	os.Exit(0)
}

// TestHelperFramedInsert is not a test: it is an agent of TestBackupCopyKeepsTheLocks that
// inserts one row into a WAL database with automatic checkpoints off, opens a read transaction
// on it, prints "inserted" and keeps both until its standard input closes, then exits without closing it: the
// row stays a committed frame of the -wal (no last connection's close checkpointed it).
func TestHelperFramedInsert(t *testing.T) {
	path := os.Getenv("SESSIONFIX_SQLITE_FRAMED_DB")
	if path == "" {
		t.Skip("helper process")
	}
	db, err := sqlx.Open("sqlite3", "file:"+path+"?_busy_timeout=0")
	if err == nil {
		db.SetMaxOpenConns(1)
		if _, err = db.Exec(`PRAGMA wal_autocheckpoint=0`); err == nil {
			_, err = db.Exec(`INSERT INTO plain VALUES ('{"tool":"framed"}')`)
		}
	}
	if err == nil {
		// A read transaction open on the frame: a checkpoint cannot reset the log under it.
		var tx *sqlx.Tx
		if tx, err = db.Beginx(); err == nil {
			var n int
			err = tx.Get(&n, `SELECT count(*) FROM plain`)
		}
	}
	if err != nil {
		fmt.Println("error", err)
	} else {
		fmt.Println("inserted")
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // no Close: a closing last connection would checkpoint the frame
}

// TestBackupCopyKeepsTheLocks: the one-pass backup copy reads the main file through a
// descriptor of its own, and a POSIX process that closes any descriptor of a file loses every
// fcntl lock it holds on that file, SQLite's included (https://sqlite.org/howtocorrupt.html
// section 2.2.1). Closed inside the write transaction, the copy gave the database's locks away. Up to
// the COMMIT another process must find the database locked, and nothing it did may be lost.
func TestBackupCopyKeepsTheLocks(t *testing.T) {
	ctx := context.Background()
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[
		{"table":"plain","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	// Small enough for the page cache: nothing is spilled (a spill would take the lock again).
	const schema = `sql:CREATE TABLE plain (doc TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
INSERT INTO plain SELECT '{"pad":"' || printf('%.500c', 'x') || '","tool":"lit.n' || i || '"}' FROM c;
`
	apply := func(t *testing.T, p string, during func()) {
		st := sqlite.OpenWith(p, prof, sqlite.Options{})
		snap := scanStore(t, st)
		edits := storetest.Edits(snap, storetest.ProviderSafe)
		require.Len(t, edits, 300)
		ch, err := st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk"),
			BeforeCommit: func(*store.Change) error {
				during() // the backup is complete, the write transaction still open
				return nil
			}})
		require.NoError(t, err)
		assert.Equal(t, "ok", integrity(t, p))
		assert.Equal(t, "300", queryString(t, p, `SELECT count(*) FROM plain WHERE doc LIKE '%lit_n%'`))
		require.NoError(t, sqlite.Open(p, sqlite.Options{}).Restore(ctx, ch, false))
		assert.Equal(t, "lit.n7", queryString(t, p, "SELECT json_extract(doc, '$.tool') FROM plain WHERE rowid = 7"))
	}

	t.Run("rollback-journal", func(t *testing.T) {
		// We hold RESERVED: a writer is refused. With the locks gone, the other process took
		// our journal for a crashed writer's, rolled our change back and wrote its row; our
		// COMMIT then failed ("disk I/O error": the journal was gone).
		p := buildJournalDB(t, "kv.db", schema)
		var got string
		apply(t, p, func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperForeignInsert$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SESSIONFIX_SQLITE_FOREIGN_DB="+p)
			out, err := cmd.Output()
			require.NoError(t, err)
			got = strings.TrimSpace(string(out))
		})
		assert.Equal(t, "error database is locked", got, "another process writing during the change")
		assert.Equal(t, "0", queryString(t, p, `SELECT count(*) FROM plain WHERE doc = '{"tool":"foreign"}'`))
	})

	t.Run("wal", func(t *testing.T) {
		// Our read lock on the main file keeps anyone from leaving WAL mode (which deletes the
		// log holding our uncommitted frames). With it gone, an agent's SQLite 3.40 switched
		// the database to journal_mode=DELETE and inserted a row, which our COMMIT and close
		// then wrote over: the row was lost. (The SQLite compiled into this test refuses the
		// switch for another reason, so the other process is the sqlite3 shell.)
		sh, err := exec.LookPath("sqlite3")
		if err != nil {
			t.Skip("needs the sqlite3 shell on PATH as the other process")
		}
		p := buildDB(t, "kv.db", schema)
		var got string
		apply(t, p, func() {
			out, _ := exec.Command(sh, p, "PRAGMA busy_timeout=0;", "PRAGMA journal_mode=DELETE;",
				`INSERT INTO plain VALUES ('{"tool":"foreign"}');`, "SELECT 'inserted';").CombinedOutput()
			got = string(out)
		})
		assert.NotContains(t, got, "delete", "another process left WAL mode during the change")
		inserted := strings.Contains(got, "inserted")
		assert.False(t, inserted, "another process wrote during the change: %q", got)
		want := "0"
		if inserted {
			want = "1" // what it wrote is not lost
		}
		assert.Equal(t, want, queryString(t, p, `SELECT count(*) FROM plain WHERE doc = '{"tool":"foreign"}'`))
	})
	t.Run("wal-with-frames", func(t *testing.T) {
		// A WAL holding committed frames (an agent's connection is open: nothing checkpointed
		// them) is backed up through the online backup API, which opens the database read-only
		// on a second handle; that open once probed the main file through a descriptor of its
		// own (readMode) and closed it inside our write transaction, giving our locks away as
		// above.
		sh, err := exec.LookPath("sqlite3")
		if err != nil {
			t.Skip("needs the sqlite3 shell on PATH as the other process")
		}
		p := buildDB(t, "kv.db", schema)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFramedInsert$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SESSIONFIX_SQLITE_FRAMED_DB="+p)
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		defer func() { stdin.Close(); cmd.Wait() }() // a second Wait only returns an error
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "inserted", strings.TrimSpace(line))
		wal, err := os.Stat(p + "-wal")
		require.NoError(t, err)
		require.Positive(t, wal.Size(), "the agent's row is a frame of the WAL")
		var got string
		apply(t, p, func() {
			// The agent quits (its lock goes with it); the next one to open and close the
			// database must not find itself the last connection, which checkpoints and deletes
			// the WAL holding our uncommitted frames.
			stdin.Close()
			cmd.Wait()
			out, _ := exec.Command(sh, p, "PRAGMA busy_timeout=0;", "SELECT count(*) FROM plain;", "PRAGMA journal_mode=DELETE;",
				`INSERT INTO plain VALUES ('{"tool":"foreign"}');`, "SELECT 'inserted';").CombinedOutput()
			got = string(out)
		})
		assert.NotContains(t, got, "delete", "another process left WAL mode during the change")
		assert.NotContains(t, got, "inserted", "another process wrote during the change")
		assert.Equal(t, "0", queryString(t, p, `SELECT count(*) FROM plain WHERE doc = '{"tool":"foreign"}'`))
		assert.Equal(t, "1", queryString(t, p, `SELECT count(*) FROM plain WHERE doc = '{"tool":"framed"}'`))
	})
}
