package runlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRemoveStoreTempsLocksWithoutCreating: cleanup locks each store whose temp it removes, so
// as to leave alone a store another process is rewriting. A store replaced by a symbolic link
// to a file that does not exist (a user's, under root's cleanup) is not created by that lock
// (a lock by name opened it O_CREAT and made the link's target), and its temp is removed; a
// store another process locks keeps its temp.
func TestRemoveStoreTempsLocksWithoutCreating(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(dir, "s.jsonl")
	victim := filepath.Join(outside, "nologin")
	require.NoError(t, os.Symlink(victim, target))
	tmp := filepath.Join(dir, ".s.jsonl123")
	require.NoError(t, os.WriteFile(tmp, []byte("x"), 0o600))

	busyStore := filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.WriteFile(busyStore, []byte("{}\n"), 0o600))
	busyTmp := filepath.Join(dir, ".b.jsonl456")
	require.NoError(t, os.WriteFile(busyTmp, []byte("x"), 0o600))
	other, err := os.Open(busyStore)
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB))

	out, gone, unlock := removeStoreTemps(nil, "r1", []string{tmp, busyTmp}, map[string]string{tmp: target, busyTmp: busyStore})
	unlock()
	_, err = os.Lstat(victim)
	assert.ErrorIs(t, err, os.ErrNotExist, "the link's target was not created")
	_, err = os.Lstat(tmp)
	assert.ErrorIs(t, err, os.ErrNotExist, "the temp of the store that is a link was removed")
	_, err = os.Lstat(busyTmp)
	assert.NoError(t, err, "the temp of a locked store is kept")
	require.Len(t, out, 1)
	assert.Equal(t, tmp, out[0].Path)
	require.Len(t, gone, 1)
	assert.Equal(t, tmp, gone[0].Path)
}
