package fileio

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/store"
)

// TestCarryOverOnAFullDiskNamesTheStore: bytes appended to the old inode after the rename are
// carried over to the new file through the pinned directory; when the disk fills during that
// copy the error names the store as the user knows it, never the descriptor path the rewrite
// reached it by (/proc/self/fd/<n>/...). Before, the write's error said "write
// /proc/self/fd/7/s.jsonl: no space left on device". Needs to mount a tmpfs (root): skipped
// otherwise.
func TestCarryOverOnAFullDiskNamesTheStore(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): needs root", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("abc\n"), 50_000), 0o600)) // 200 kB
	want := stateOf(t, p)
	defer func() { testHookAfterRename = nil }()
	testHookAfterRename = func(string) {
		// 600 kB into the old inode (through the backup link): the new file cannot take them.
		f, err := os.OpenFile(filepath.Join(dir, "bk"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write(bytes.Repeat([]byte("late\n"), 120_000))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	_, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk")})
	require.Error(t, err)
	assert.ErrorIs(t, err, unix.ENOSPC)
	assert.Contains(t, err.Error(), "carry over late append to "+p+": write "+p+": no space left on device")
	assert.NotContains(t, err.Error(), "/proc/self/fd")
}

// TestExistingBackupNamesTheStore: a backup path that exists already is refused (a run never
// overwrites a backup) with an error naming the store and the backup, not the descriptor path
// the link was made from. Before: "link /proc/self/fd/<n>/s.jsonl <bk>: file exists".
func TestExistingBackupNamesTheStore(t *testing.T) {
	dir := t.TempDir()
	p, bk := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "bk")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	require.NoError(t, os.WriteFile(bk, []byte("x"), 0o600))
	_, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: bk})
	require.Error(t, err)
	assert.EqualError(t, err, "create backup of "+p+": link "+p+" "+bk+": file exists")
}
