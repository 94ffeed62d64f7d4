package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strings"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
)

// TestRowReaderMatchesDriver reads the same SELECT through the row reader and through the
// driver: every storage class (integers, floats, text, invalid UTF-8 text, blobs, empty blobs,
// NULL) comes out with the driver's value, across batch ends and rows larger than the reader's
// first buffer (it grows with the row pending).
func TestRowReaderMatchesDriver(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (a, b)`)
	require.NoError(t, err)
	big := strings.Repeat("x", 300<<10)
	vals := []any{int64(-7), 2.5, "text", "", []byte{0, 1, 2}, []byte{}, nil, big, big + "y", "é"}
	for i, v := range vals {
		_, err = db.Exec(`INSERT INTO t VALUES (?, ?)`, v, i)
		require.NoError(t, err)
	}
	_, err = db.Exec(`INSERT INTO t VALUES (CAST(X'ff41fe' AS TEXT), 99)`) // invalid UTF-8 text
	require.NoError(t, err)
	for i := range 700 {
		_, err = db.Exec(`INSERT INTO t VALUES (?, ?)`, strings.Repeat("r", i), int64(i))
		require.NoError(t, err)
	}
	const q = `SELECT rowid, +a, +b FROM t WHERE rowid > ? ORDER BY rowid`

	var want [][]driver.Value
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Raw(func(dc any) error {
		st, err := dc.(*sqlite3.SQLiteConn).Prepare(q)
		if err != nil {
			return err
		}
		defer st.Close()
		rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: int64(0)}})
		if err != nil {
			return err
		}
		defer rows.Close()
		for {
			row := make([]driver.Value, 3)
			if rows.Next(row) != nil {
				return nil
			}
			want = append(want, row)
		}
	}))
	require.Len(t, want, len(vals)+701)

	var got [][]driver.Value
	require.NoError(t, conn.Raw(func(dc any) error {
		st, err := prepareRows(dc.(*sqlite3.SQLiteConn), q)
		if err != nil {
			return err
		}
		defer st.close()
		require.NoError(t, st.start([]any{int64(0)}))
		b := newRowBatch(3, 300)
		grew := false
		for {
			end, err := st.read(ctx, b, 300)
			if err != nil {
				return err
			}
			grew = grew || len(b.buf) > 256<<10
			for i := range b.n {
				row := b.row(i)
				got = append(got, []driver.Value{b.value(&row[0]), b.value(&row[1]), b.value(&row[2])})
			}
			b.n, b.used = 0, 0
			if end {
				break
			}
		}
		require.True(t, grew, "a row larger than the first buffer")
		return nil
	}))
	require.Equal(t, want, got)
}

// TestRowReaderErrors: a statement SQLite refuses is an error with its message and code.
func TestRowReaderErrors(t *testing.T) {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "e.db"))
	require.NoError(t, err)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		_, err := prepareRows(dc.(*sqlite3.SQLiteConn), "SELECT * FROM nowhere")
		return err
	})
	require.ErrorContains(t, err, "no such table: nowhere")
	var se sqlite3.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, sqlite3.ErrError, se.Code)
}

// TestRowLabelRaw: labels built from a row batch read as rowLabel's of the driver's values.
func TestRowLabelRaw(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "l.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (k, j)`)
	require.NoError(t, err)
	keys := []any{"prt_01", "a b", "", "12", "NULL", "X'ab'", `q"uote`, "é", int64(-3), 1.5, []byte{1, 255}, nil}
	for i, k := range keys {
		_, err = db.Exec(`INSERT INTO t VALUES (?, ?)`, k, int64(i))
		require.NoError(t, err)
	}
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.Raw(func(dc any) error {
		st, err := prepareRows(dc.(*sqlite3.SQLiteConn), `SELECT +k, +j FROM t ORDER BY rowid`)
		require.NoError(t, err)
		defer st.close()
		require.NoError(t, st.start(nil))
		b := newRowBatch(2, 100)
		_, err = st.read(ctx, b, 100)
		require.NoError(t, err)
		require.Equal(t, len(keys), b.n)
		for i := range b.n {
			row := b.row(i)
			want := rowLabel("t", []string{"k", "j"}, []any{b.value(&row[0]), b.value(&row[1])})
			require.Equal(t, want, rowLabelRaw("t", []string{"k", "j"}, b, row), "key %#v", keys[i])
		}
		return nil
	}))
}
