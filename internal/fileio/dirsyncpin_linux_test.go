package fileio

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/store"
)

// TestDirSyncsSyncTheDirectoriesRenamedIn: DirSyncs make durable the directories the renames
// were made in, held open since (the rewrite's pinned directory), never what their paths lead
// to when the sync comes. Before, the sync looked each directory up again by path: a user who
// swapped their store's directory for a link to a FIFO after the rename (as root, over every
// home) had the syncfs standing for every directory of the file system fail (open
// O_DIRECTORY: not a directory), so another user's store, renamed in a directory of the same
// file system, was reported not durable; a link to a directory of another file system had
// that one synced instead, and the renames of the others left undurable with no error.
func TestDirSyncsSyncTheDirectoriesRenamedIn(t *testing.T) {
	base := t.TempDir()
	var paths []string
	for _, d := range []string{"a", "b"} {
		dir := filepath.Join(base, d)
		require.NoError(t, os.Mkdir(dir, 0o700))
		p := filepath.Join(dir, "s.jsonl")
		require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
		paths = append(paths, p)
	}
	var synced []string
	defer SetFaultHook(func(op, path string) error {
		if op == FaultSyncDir || op == FaultSyncFS {
			synced = append(synced, op+" "+path)
		}
		return nil
	})()
	ds := &DirSyncs{}
	ctx := WithDirSyncs(context.Background(), ds)
	for i, p := range paths {
		_, err := RewriteFile(ctx, p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(base, "bk"+string(rune('0'+i))),
			BeforeCommit: upperSites})
		require.NoError(t, err)
	}
	// a's owner swaps a for a link to a FIFO.
	a := filepath.Dir(paths[0])
	require.NoError(t, os.Rename(a, a+".away"))
	fifo := filepath.Join(base, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	require.NoError(t, os.Symlink(fifo, a))

	assert.NoError(t, ds.Durable(paths[1]), "b's rename is made durable")
	assert.NoError(t, ds.Durable(paths[0]), "a's directory, held open, is synced")
	assert.Empty(t, ds.Sync())
	assert.NotEmpty(t, synced)
}
