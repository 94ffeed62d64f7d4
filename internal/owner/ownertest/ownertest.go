// Package ownertest sets up what the root tests of the link rule (owner.LinkRefusal) need: a
// user's home beside another user's directory, files and links given to either user.
package ownertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/owner"
)

// User and Other are the uids (and gids) the tests give files to: nobody's (65534) and one no
// account has (1234).
const (
	User  = 65534
	Other = 1234
)

// Homes skips t unless it runs as root (the link rule applies as root, and the test gives files
// to other users); else it makes, in a new temp directory every user may pass through (0755),
// the directory home (User's, 0700) and the directory victim (Other's, 0700), and returns
// their paths.
func Homes(t testing.TB) (home, victim string) {
	t.Helper()
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to other users")
	}
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	home, victim = filepath.Join(root, "home"), filepath.Join(root, "victim")
	Dir(t, home, User)
	Dir(t, victim, Other)
	return home, victim
}

// Dir makes the directory path (0700) and gives it to uid (owner and group).
func Dir(t testing.TB, path string, uid int) {
	t.Helper()
	require.NoError(t, os.Mkdir(path, 0o700))
	require.NoError(t, os.Chown(path, uid, uid))
}

// File writes data to path with mode perm and gives it to uid (owner and group); it returns path.
func File(t testing.TB, path string, data []byte, perm os.FileMode, uid int) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, data, perm))
	require.NoError(t, os.Chown(path, uid, uid))
	return path
}

// Link makes path a symbolic link to target, owned by uid (owner and group); it returns path.
func Link(t testing.TB, target, path string, uid int) string {
	t.Helper()
	require.NoError(t, os.Symlink(target, path))
	require.NoError(t, os.Lchown(path, uid, uid))
	return path
}
