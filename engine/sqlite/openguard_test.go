//go:build unix

package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// makeDB creates a rollback-journal database at path holding one row with text v.
func makeDB(t *testing.T, path, v string) {
	t.Helper()
	db, err := sqlx.Open("sqlite3", "file:"+path+"?mode=rwc")
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES (?)", v)
	require.NoError(t, err)
}

// connWithin opens h's connection in a goroutine, failing the test when it has not returned
// within 10 s (SQLite's blocking open of a FIFO never does).
func connWithin(t *testing.T, h *handle) (*sqlx.Conn, error) {
	t.Helper()
	type res struct {
		c   *sqlx.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := h.Connx(context.Background())
		if err == nil {
			// SQLite opens the file at the first statement at the latest.
			var v string
			err = c.GetContext(context.Background(), &v, "SELECT v FROM t")
		}
		ch <- res{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("SQLite's open is still blocked after 10 s")
		return nil, nil
	}
}

// TestSQLiteOpensOnlyThePinnedFile (issue 30 finding 5): go-sqlite3 opens a database by its
// path, after sessionfix checked it. SQLite's every open goes through the open guard
// (openguard_unix.go): a database swapped, between the check and SQLite's own open, for a FIFO
// is refused at once (SQLite's plain open of it never returned), and one swapped for another
// database (a file of another's) is refused as not the file checked, nothing read from it; a
// -journal with another hard link is not taken as the database's journal. The file checked is
// read as always.
func TestSQLiteOpensOnlyThePinnedFile(t *testing.T) {
	require.NoError(t, guardErr)
	dir := t.TempDir()
	p := filepath.Join(dir, "a.db")
	makeDB(t, p, "mine")
	other := filepath.Join(t.TempDir(), "private.db")
	makeDB(t, other, "root only")

	h, err := openDB(p, modeRO, time.Second, store.FileID{})
	require.NoError(t, err)
	c, err := connWithin(t, h)
	require.NoError(t, err)
	c.Close()
	h.Close()

	for _, tc := range []struct {
		name   string
		swap   func()
		reason string
	}{
		{"FIFO", func() {
			require.NoError(t, os.Rename(p, p+".saved"))
			require.NoError(t, unix.Mkfifo(p, 0o600))
		}, "SQLite found a file that is not a regular one (p---------)"},
		{"another database", func() {
			require.NoError(t, os.Rename(p, p+".saved"))
			b, err := os.ReadFile(other)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b, 0o600))
		}, "SQLite found another file than the one checked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := openDB(p, modeRO, time.Second, store.FileID{})
			require.NoError(t, err)
			defer h.Close()
			tc.swap()
			defer func() {
				os.Remove(p)
				require.NoError(t, os.Rename(p+".saved", p))
			}()
			c, err := connWithin(t, h)
			if c != nil {
				c.Close()
			}
			require.Error(t, err)
			var nf *fileio.NotTheFileError
			require.True(t, errors.As(err, &nf), "%v", err)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}

	// A hot journal that is another file's name too is not read as this database's journal.
	outside := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.WriteFile(outside, append(append([]byte{}, journalMagic...), make([]byte, 600)...), 0o600))
	require.NoError(t, os.Link(outside, p+"-journal"))
	_, hot := HotJournal(p)
	assert.False(t, hot, "a journal with another hard link is not hot")
	h, err = openDB(p, modeRO, time.Second, store.FileID{})
	require.NoError(t, err)
	defer h.Close()
	_, err = connWithin(t, h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its journal, WAL or shared-memory file has other hard links")
}
