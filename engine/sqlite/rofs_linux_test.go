//go:build linux

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/storetest"
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

// TestApplyOnReadOnlyFSSaysSo: fix --apply of a WAL database on a file system mounted
// read-only is refused with a reason naming it ("read-only file system", EROFS), nothing
// written and no backup left; the stop 18 binaries said "unable to open database file: no
// such file or directory". Needs to mount a tmpfs (root): skipped otherwise.
func TestApplyOnReadOnlyFSSaysSo(t *testing.T) {
	src := opencodeDB(t)
	execSQL(t, src, "PRAGMA journal_mode=WAL")
	b, err := os.ReadFile(src)
	require.NoError(t, err)

	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs to make a read-only file system (%v): needs root", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	p := filepath.Join(dir, "opencode.db")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""))

	st := detect(t, p)
	snap := scanStore(t, st)
	edits := storetest.Edits(snap, storetest.ProviderSafe)
	require.NotEmpty(t, edits)
	bk := filepath.Join(t.TempDir(), "bk")
	_, err = st.Apply(context.Background(), snap, edits, store.ApplyOptions{BackupPath: bk})
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), p+": read-only file system")
	assert.ErrorIs(t, err, unix.EROFS)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, b, got, "nothing written")
	assert.NoFileExists(t, bk)
	assert.Equal(t, []string{"opencode.db"}, names(t, dir))
}

// TestApplyWithoutWritePermissionSaysSo: a database in a directory this user may not write
// (SQLite cannot create its -journal there) is refused naming the directory and "permission
// denied" (EACCES), nothing written; the stop 18 binaries said only "attempt to write a
// readonly database". Root may write anything: skipped as root.
func TestApplyWithoutWritePermissionSaysSo(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write a directory of mode 0555: run as a non-root user")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o755))
	src := opencodeDB(t)
	execSQL(t, src, "PRAGMA journal_mode=DELETE") // a WAL one cannot even be read there (no -shm)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	p := filepath.Join(dir, "opencode.db")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })

	st := detect(t, p)
	snap := scanStore(t, st)
	bk := filepath.Join(t.TempDir(), "bk")
	_, err = st.Apply(context.Background(), snap, storetest.Edits(snap, storetest.ProviderSafe), store.ApplyOptions{BackupPath: bk})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot write "+dir+": permission denied; nothing was written")
	assert.ErrorIs(t, err, unix.EACCES)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, b, got, "nothing written")
	assert.NoFileExists(t, bk)
}
