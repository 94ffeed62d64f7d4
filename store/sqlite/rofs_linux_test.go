//go:build linux

package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestReadWALOnReadOnlyFS: a WAL database without -wal and -shm on a file system mounted
// read-only (a copied home on a read-only mount or image) is read — SQLite can create neither
// file there, and the stop 17 binaries refused it: "SQLite database that cannot be read: unable
// to open database file". Needs to mount a tmpfs (root): skipped otherwise.
func TestReadWALOnReadOnlyFS(t *testing.T) {
	src := opencodeDB(t)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	want := rowsOf(scanStore(t, detect(t, src)))
	require.NotEmpty(t, want)

	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs to make a read-only file system (%v): needs root", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	p := filepath.Join(dir, "opencode.db")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""))

	assert.Equal(t, want, rowsOf(scanStore(t, detect(t, p))), "the same sites as the writable copy")
	assert.Equal(t, []string{"opencode.db"}, names(t, dir))
}
