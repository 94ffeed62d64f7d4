package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
)

// TestApplyOnAFullDiskSaysSo (issue 30 finding 8): a WAL database on a tmpfs with a few hundred
// KiB left, whose rewrite needs far more (2,000 rows of 1 KiB, every row changed): SQLite fails
// the write transaction with SQLITE_FULL from whichever statement spilled pages — often a
// SELECT, which said "read kv id=… of …: database or disk is full" before. The error is a
// *sqlite.DiskFullError that says the disk is full and that nothing was changed, and nothing
// was. Needs to mount a tmpfs (root): skipped otherwise.
func TestApplyOnAFullDiskSaysSo(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	prof, err := sqlite.ParseProfile([]byte(`{"name":"kv","agent":"kv","tables":[{"table":"kv","column":"doc","sites":[{"path":"$.tool"}]}]}`))
	require.NoError(t, err)
	src := buildDB(t, "kv.db", `sql:CREATE TABLE kv (id INTEGER PRIMARY KEY, doc TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO kv (doc) SELECT '{"tool":"lit.t' || i || '","pad":"' || hex(zeroblob(500)) || '"}' FROM n;`)
	p := filepath.Join(dir, "kv.db")
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	before := dumpSum(t, p)
	// Leave 256 KiB free.
	var fs unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &fs))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fill"), make([]byte, int64(fs.Bavail)*int64(fs.Bsize)-256<<10), 0o600))

	st := sqlite.OpenWith(p, prof, sqlite.Options{})
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.Len(t, edits, 2000)
	_, err = st.Apply(ctx, snap, edits, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.Error(t, err)
	var full *sqlite.DiskFullError
	require.True(t, errors.As(err, &full), "%v", err)
	assert.Equal(t, p, full.Path)
	assert.True(t, strings.HasPrefix(err.Error(), "no space left to write "+p+": the disk holding it"), err.Error())
	assert.Contains(t, err.Error(), "rolled back, nothing was changed")
	assert.Equal(t, before, dumpSum(t, p), "the database is unchanged")
}
