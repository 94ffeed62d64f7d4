package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/store"
)

// openWithin runs OpenStore in a goroutine and fails the test when it does not return within
// 10 s (an open blocked on a FIFO never does).
func openWithin(t *testing.T, path string, want store.FileID) (*os.File, os.FileInfo, error) {
	t.Helper()
	type res struct {
		f   *os.File
		fi  os.FileInfo
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, fi, err := OpenStore(path, want)
		ch <- res{f, fi, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.fi, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("OpenStore(%s) still blocked after 10 s", path)
		return nil, nil, nil
	}
}

// TestOpenStoreRefusesWhatIsNotTheFileFound (issue 30 findings 5 and 6): a store path that is a
// FIFO (no writer: a blocking open never returns), a symbolic link, a directory, or another file
// than the one discovery found (its device and inode) is a *NotTheFileError saying what it is,
// at once and with nothing read; the file found is opened, in blocking mode.
func TestOpenStoreRefusesWhatIsNotTheFileFound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("{}\n"), 0o600))
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	id := IDOf(fi)
	require.True(t, id.Known())

	f, got, err := openWithin(t, p, id)
	require.NoError(t, err)
	assert.True(t, os.SameFile(fi, got))
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	require.NoError(t, err)
	assert.Zero(t, fl&unix.O_NONBLOCK, "returned in blocking mode")
	f.Close()

	other := filepath.Join(dir, "other.jsonl")
	require.NoError(t, os.WriteFile(other, []byte("{\"secret\":1}\n"), 0o600))
	fifo := filepath.Join(dir, "fifo.jsonl")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(other, link))
	for _, tc := range []struct {
		name, path string
		want       store.FileID
		reason     string
	}{
		{"FIFO", fifo, store.FileID{}, "it is a FIFO (named pipe), not a regular file"},
		{"FIFO pinned", fifo, id, "it is a FIFO (named pipe), not a regular file"},
		{"directory", dir, store.FileID{}, "it is a directory, not a regular file"},
		{"link swapped in", link, id, "it is now a symbolic link"},
		{"another file", other, id, "it is another file than the one found there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := openWithin(t, tc.path, tc.want)
			require.Error(t, err)
			assert.Nil(t, f)
			var nf *NotTheFileError
			require.True(t, errors.As(err, &nf), "%v", err)
			assert.Equal(t, tc.path, nf.Path)
			assert.Contains(t, err.Error(), tc.reason)
			assert.ErrorIs(t, err, ErrNotTheFile)
		})
	}
}

// TestOpenStoreFollowsLinksOnlyToTheirOwnersFiles (issue 30 finding 3): as root, a path with no
// pin (a file undo or an agent room reads) is resolved link by link: a link a user owns is
// followed to that user's file, and refused, named, when it leads to another owner's (root's)
// file. Needs root (chown).
func TestOpenStoreFollowsLinksOnlyToTheirOwnersFiles(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: the link rule applies as root, and the test gives files to another user")
	}
	const user = 65534 // nobody
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	require.NoError(t, os.Chown(home, user, user))
	mine := filepath.Join(home, "mine.jsonl")
	require.NoError(t, os.WriteFile(mine, []byte("{}\n"), 0o600))
	require.NoError(t, os.Chown(mine, user, user))
	rootOnly := filepath.Join(dir, "root-only.jsonl")
	require.NoError(t, os.WriteFile(rootOnly, []byte("{\"secret\":1}\n"), 0o600))

	toMine := filepath.Join(home, "to-mine.jsonl")
	require.NoError(t, os.Symlink(mine, toMine))
	require.NoError(t, os.Lchown(toMine, user, user))
	f, _, err := OpenStore(toMine, store.FileID{})
	require.NoError(t, err)
	f.Close()

	toRoot := filepath.Join(home, "to-root.jsonl")
	require.NoError(t, os.Symlink(rootOnly, toRoot))
	require.NoError(t, os.Lchown(toRoot, user, user))
	_, _, err = OpenStore(toRoot, store.FileID{})
	var nf *NotTheFileError
	require.True(t, errors.As(err, &nf), "%v", err)
	assert.Contains(t, err.Error(), "symbolic link "+toRoot+" -> "+rootOnly+" not followed: the link belongs to uid 65534")
	assert.Contains(t, err.Error(), "belongs to uid 0 (root): as root, a link is followed only to what its owner owns")

	// A directory link on the way counts the same.
	linkedDir := filepath.Join(home, "d")
	require.NoError(t, os.Symlink(dir, linkedDir))
	require.NoError(t, os.Lchown(linkedDir, user, user))
	_, _, err = OpenStore(filepath.Join(linkedDir, "root-only.jsonl"), store.FileID{})
	require.True(t, errors.As(err, &nf), "%v", err)
	assert.Contains(t, err.Error(), "symbolic link "+linkedDir+" -> "+dir+" not followed")
}
