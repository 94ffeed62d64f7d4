package fileio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// TestRestoreGoneStoreGivesTheRecordedOwnerBack: as root, undo --force of a user's store
// removed since the run, whose backup is a copy (the store had another hard link: root's copy,
// mode 0600), restores it owned by the owner and group the run recorded (Change.OriginalOwner)
// and with its mode, when its directory is that owner's. Before, a copied backup recorded no
// owner and the store came back root's, unreadable by its owner's agent. The record is not
// trusted: an owner the directory does not belong to (an edited manifest, or a directory that is
// root's) leaves the store root's and says so; a group the owner is not in gives the
// directory's group instead.
func TestRestoreGoneStoreGivesTheRecordedOwnerBack(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: gives files to another user")
	}
	const user = 65534 // nobody, group nogroup (65534)
	for _, tc := range []struct {
		name      string
		dirOwner  uint32
		recorded  *store.FileOwner // nil: as the run recorded it
		want      store.FileOwner
		committed string // the error inside the CommittedError ("": none)
	}{
		{"as recorded", user, nil, store.FileOwner{UID: user, GID: user}, ""},
		{"another user recorded", user, &store.FileOwner{UID: 1234, GID: 1234}, store.FileOwner{}, "but its directory"},
		{"a root directory", 0, nil, store.FileOwner{}, "belongs to uid 0"},
		{"a group the owner is not in", user, &store.FileOwner{UID: user, GID: 4321}, store.FileOwner{UID: user, GID: user}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.Chmod(root, 0o755))
			dir := filepath.Join(root, "d")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.Chown(dir, int(tc.dirOwner), int(tc.dirOwner)))
			p := filepath.Join(dir, "s.jsonl")
			require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o640))
			require.NoError(t, os.Chmod(p, 0o640))
			require.NoError(t, os.Chown(p, user, user))
			require.NoError(t, os.Link(p, filepath.Join(dir, "other"))) // the backup is a copy
			ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
			require.NoError(t, err)
			require.False(t, ch.BackupLink)
			require.Equal(t, &store.FileOwner{UID: user, GID: user}, ch.OriginalOwner, "the run records the owner")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Remove(filepath.Join(dir, "other")))
			if tc.recorded != nil {
				ch.OriginalOwner = tc.recorded
			}

			err = RestoreFile(context.Background(), p, ch, true)
			fi, serr := os.Stat(p)
			require.NoError(t, serr, "restored")
			got, rerr := os.ReadFile(p)
			require.NoError(t, rerr)
			assert.Equal(t, "abc\n", string(got))
			assert.Equal(t, os.FileMode(0o640), fi.Mode())
			assert.Equal(t, &tc.want, ownerOf(fi))
			if tc.committed == "" {
				require.NoError(t, err)
				return
			}
			var ce *CommittedError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Contains(t, err.Error(), "restored as root's")
			assert.Contains(t, err.Error(), tc.committed)
		})
	}
}
