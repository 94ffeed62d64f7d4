package fileio

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// TestRestoreGoneStoreRefusesADirectorySwappedForALink: as root, undo --force of a store its
// owner removed since the run puts the backup back in the store's directory. The owner renames
// that directory away and puts a link to a root-owned directory in its place after undo found
// the store gone (here: right before the directory is opened): the link is refused (a link is
// followed only to what its owner owns) and nothing is created in the root-owned directory.
// A link to a directory the owner owns is still followed. Before, the directory was opened by its path, the link followed: root created the store, with
// the backup's bytes and mode, in the root-owned directory.
func TestRestoreGoneStoreRefusesADirectorySwappedForALink(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to another user")
	}
	const user = 65534 // nobody
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "anonymous temp", true: "named temp"}[named], func(t *testing.T) {
			defer func(v bool) { anonTemps = v }(anonTemps)
			anonTemps = !named
			root := t.TempDir()
			require.NoError(t, os.Chmod(root, 0o755))
			home, etc := filepath.Join(root, "home"), filepath.Join(root, "etc")
			dir := filepath.Join(home, "d")
			for _, d := range []string{home, dir, etc} {
				require.NoError(t, os.Mkdir(d, 0o755))
			}
			require.NoError(t, os.Chown(home, user, user))
			require.NoError(t, os.Chown(dir, user, user))
			p := filepath.Join(dir, "s.jsonl")
			require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o644))
			require.NoError(t, os.Chown(p, user, user))
			ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
			require.NoError(t, err)
			require.NoError(t, os.Remove(p))

			swapped := false
			defer func() { testHookRestoreGone = nil }()
			testHookRestoreGone = func(string) {
				require.NoError(t, os.Rename(dir, filepath.Join(home, "moved")))
				require.NoError(t, os.Symlink(etc, dir))
				require.NoError(t, os.Lchown(dir, user, user))
				swapped = true
			}
			err = RestoreFile(context.Background(), p, ch, true)
			require.True(t, swapped)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "symbolic link "+dir+" -> "+etc+" not followed")
			ents, err := os.ReadDir(etc)
			require.NoError(t, err)
			assert.Empty(t, ents, "nothing created in the root-owned directory")

			// A link to a directory its owner owns is followed: the store is restored there.
			testHookRestoreGone = nil
			require.NoError(t, os.Remove(dir))
			require.NoError(t, os.Symlink(filepath.Join(home, "moved"), dir))
			require.NoError(t, os.Lchown(dir, user, user))
			require.NoError(t, RestoreFile(context.Background(), p, ch, true))
			got, err := os.ReadFile(filepath.Join(home, "moved", "s.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, "abc\n", string(got))
		})
	}
}

// TestRestoreGoneStoreGivesTheOwnerBack: as root, undo --force of a user's store removed since
// the run restores it owned by that user, taken from the backup when it is a hard link (the
// original inode). Before, the restored store was root's (mode 0600: its owner's agent could no
// longer read it).
func TestRestoreGoneStoreGivesTheOwnerBack(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: gives a file to another user")
	}
	const user = 65534 // nobody
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	require.NoError(t, os.Chown(p, user, user))
	ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	require.True(t, ch.BackupLink)
	require.NoError(t, os.Remove(p))
	require.NoError(t, RestoreFile(context.Background(), p, ch, true))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, &store.FileOwner{UID: user, GID: user}, ownerOf(fi))
	assert.Equal(t, os.FileMode(0o600), fi.Mode())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "abc\n", string(got))
}
