package scan

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSQLiteSidecarsAreNotOpened: a walk meets a database's -wal and -shm, which the agent's
// SQLite deletes and recreates while it runs (its last connection's close). Before, the walk
// opened each, pinned to what the directory listing found: one recreated in between was an
// error "another file than the one found there" (exit 3; torture writer-inserts-during-sqlite-fix,
// 2 of 80 WAL trials). Now they are counted as ignored without being opened, and a name that
// only looks like one (no file beside it without the suffix) is still read.
func TestSQLiteSidecarsAreNotOpened(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	require.NoError(t, os.WriteFile(db, []byte("SQLite format 3\x00"), 0o644))
	wal := db + "-wal"
	require.NoError(t, os.WriteFile(wal, []byte("old log"), 0o644))
	listed, err := os.Lstat(wal)
	require.NoError(t, err)
	// The agent's SQLite recreates the -wal after the directory was listed.
	require.NoError(t, os.Remove(wal))
	require.NoError(t, os.WriteFile(wal, []byte("new log"), 0o644))
	lone := filepath.Join(dir, "notes-journal")
	require.NoError(t, os.WriteFile(lone, []byte("plain text\n"), 0o644))
	lonefi, err := os.Lstat(lone)
	require.NoError(t, err)

	d := &discovery{ctx: context.Background(), f: &Found{}, seen: map[string]bool{}}
	w := &walker{d: d, followed: map[string]bool{}}
	w.regular(wal, fs.FileInfoToDirEntry(listed))
	w.regular(lone, fs.FileInfoToDirEntry(lonefi))
	assert.Empty(t, d.f.Issues)
	assert.Equal(t, 2, d.f.Ignored)
	assert.Equal(t, []string{wal, lone}, d.f.IgnoredPaths)

	assert.True(t, sqliteSidecar(db+"-shm"))
	assert.True(t, sqliteSidecar(db+"-journal"))
	assert.False(t, sqliteSidecar(lone), "no notes beside it")
	assert.False(t, sqliteSidecar(filepath.Join(dir, "-wal")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	assert.False(t, sqliteSidecar(filepath.Join(dir, "d-wal")), "beside a directory")
}
