//go:build linux && (amd64 || arm64)

package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestExecRefusesAValueLongerThanACInt: a value of 4 GiB + 3 bytes (a rewritten row grown
// past what SQLite's int length can say) is refused by the row writer's UPDATE (rows.go exec)
// and the row keeps its value; the length was cut to a C int, so SQLite stored the first 3
// bytes and the UPDATE reported success (from 2 GiB on the int is negative: sqlite3_bind_text
// then reads the Go buffer up to a NUL byte). The value is an anonymous mapping reserved
// without memory (MAP_NORESERVE): only its first page is touched.
func TestExecRefusesAValueLongerThanACInt(t *testing.T) {
	huge, err := unix.Mmap(-1, 0, 1<<32+3, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
	if err != nil {
		t.Skipf("cannot reserve 4 GiB of address space here: %v", err)
	}
	defer unix.Munmap(huge)
	copy(huge, `{"x":`)

	ctx := context.Background()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "x.db"))
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('{"before":1}')`)
	require.NoError(t, err)
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, text := range []bool{true, false} {
		var n int
		var xerr error
		require.NoError(t, conn.Raw(func(dc any) error {
			st, err := prepareRows(dc.(*sqlite3.SQLiteConn), `UPDATE t SET v = ? WHERE rowid = ?`)
			require.NoError(t, err)
			defer st.close()
			require.NoError(t, st.startAt(2, []any{int64(1)}))
			n, xerr = st.exec(text, huge)
			return nil
		}))
		require.Error(t, xerr, "text %v: a 4 GiB + 3 byte value", text)
		require.Contains(t, xerr.Error(), "4294967299 bytes")
		require.Zero(t, n)
		var v string
		require.NoError(t, conn.QueryRowContext(ctx, `SELECT CAST(v AS TEXT) FROM t`).Scan(&v))
		require.Equal(t, `{"before":1}`, v, "text %v", text)
	}
}
