package fileio

import (
	"context"
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

// TestMoveFileRoundTrip: a flat file moved into a directory MoveFile creates, then moved back:
// the same inode throughout, the directory removed again, the bytes untouched.
func TestMoveFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "s.jsonl")
	to := filepath.Join(dir, "s", "events.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("{}\n"), 0o600))
	before, err := os.Stat(from)
	require.NoError(t, err)
	m, err := MoveFile(context.Background(), from, to)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "s")}, m.Made)
	assert.Equal(t, int64(3), m.State.Size)
	assert.NoFileExists(t, from)
	after, err := os.Stat(to)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after))
	require.NoError(t, UnmoveFile(context.Background(), m, false))
	assert.NoDirExists(t, filepath.Join(dir, "s"))
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(b))
	// Again: nothing at To, the file at From: already back.
	assert.NoError(t, UnmoveFile(context.Background(), m, false))
}

func TestMoveFileRefuses(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("x"), 0o600))
	// A file at the target is never replaced.
	to := filepath.Join(dir, "t.jsonl")
	require.NoError(t, os.WriteFile(to, []byte("other"), 0o600))
	_, err := MoveFile(context.Background(), from, to)
	assert.ErrorIs(t, err, ErrTargetExists)
	assert.FileExists(t, from)
	// A symbolic link is not followed.
	link := filepath.Join(dir, "l.jsonl")
	require.NoError(t, os.Symlink(from, link))
	_, err = MoveFile(context.Background(), link, filepath.Join(dir, "l", "events.jsonl"))
	assert.ErrorIs(t, err, ErrNotTheFile)
	assert.Contains(t, err.Error(), "symbolic link")
	assert.NoDirExists(t, filepath.Join(dir, "l"))
	// A file open for writing is in use.
	f, err := os.OpenFile(from, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = MoveFile(context.Background(), from, filepath.Join(dir, "w", "events.jsonl"))
	f.Close()
	assert.ErrorIs(t, err, store.ErrInUse)
	assert.FileExists(t, from)
}

// TestUnmoveFileRefusesAResumedFile: an agent that appended to the moved file (resumed it at its
// new place) makes undo refuse it unless forced; another file at To is refused even forced.
func TestUnmoveFileRefusesAResumedFile(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "s.jsonl")
	to := filepath.Join(dir, "s", "events.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("{}\n"), 0o600))
	m, err := MoveFile(context.Background(), from, to)
	require.NoError(t, err)
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("{\"type\":\"session.resume\"}\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	err = UnmoveFile(context.Background(), m, false)
	var ce *store.ChangedError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Contains(t, ce.Reason, "size 3→29")
	assert.FileExists(t, to)
	require.NoError(t, UnmoveFile(context.Background(), m, true))
	assert.FileExists(t, from)

	// Another file at To (not the inode moved).
	m2, err := MoveFile(context.Background(), from, to)
	require.NoError(t, err)
	// written beside it, then renamed over it: the new inode exists while the old one does
	// (a removed inode's number may be given to the next file)
	require.NoError(t, os.WriteFile(to+".new", []byte("{}\n"), 0o600))
	require.NoError(t, os.Rename(to+".new", to))
	err = UnmoveFile(context.Background(), m2, true)
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Contains(t, ce.Reason, "another file")
}

// TestMoveFileAsRootGivesMadeDirectoriesToTheirParentsOwner: as root, the directories MoveFile
// makes on a user's store's new path (Copilot's session-state/<id>/) belong to the owner of the
// directory each is made in (the user), not to root: before, they were root's, mode 0700, and
// the user's agent could not reach the moved store. Needs root (chown).
func TestMoveFileAsRootGivesMadeDirectoriesToTheirParentsOwner(t *testing.T) {
	if !owner.AsRoot() {
		t.Skip("needs root: gives files to another user")
	}
	const user = 65534 // nobody
	home := t.TempDir()
	require.NoError(t, os.Chown(home, user, user))
	from := filepath.Join(home, "flat.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("x\n"), 0o600))
	require.NoError(t, os.Chown(from, user, user))
	to := filepath.Join(home, "session-state", "id1", "events.jsonl")
	m, err := MoveFile(context.Background(), from, to)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(home, "session-state"), filepath.Join(home, "session-state", "id1")}, m.Made)
	for _, d := range m.Made {
		fi, err := os.Lstat(d)
		require.NoError(t, err)
		assert.Equal(t, &store.FileOwner{UID: user, GID: user}, ownerOf(fi), d)
		assert.Equal(t, os.ModeDir|0o700, fi.Mode(), d)
	}
	require.NoError(t, UnmoveFile(context.Background(), m, false))
	_, err = os.Lstat(filepath.Join(home, "session-state"))
	assert.ErrorIs(t, err, os.ErrNotExist, "undo removes the directories it made")
}

// TestMoveFileRefusesAFIFO: a FIFO swapped in for the store MoveFile is to move is refused at
// once (opened O_NONBLOCK, then found not to be a regular file), naming it. Before, it was
// opened without O_NONBLOCK: the run (root's, over users' homes from cron) hung in open(2)
// until someone opened the FIFO for writing.
func TestMoveFileRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "s.jsonl")
	require.NoError(t, unix.Mkfifo(from, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := MoveFile(context.Background(), from, filepath.Join(dir, "s", "events.jsonl"))
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrNotTheFile)
		assert.Contains(t, err.Error(), from)
		assert.Contains(t, err.Error(), "FIFO")
	case <-time.After(10 * time.Second):
		// Let the blocked open go before failing.
		if w, err := os.OpenFile(from, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("MoveFile is blocked opening a FIFO")
	}
	assert.NoDirExists(t, filepath.Join(dir, "s"))
}

// TestMoveFileAnnouncesTheDirectoriesItMakes: each directory a move makes is announced to the
// context's MadeDirRecorder before it exists, outermost first (a run killed after a mkdir
// still has it journaled); an announcement that fails keeps the directory from being made and
// fails the move, leaving the file where it was and nothing made.
func TestMoveFileAnnouncesTheDirectoriesItMakes(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "s.jsonl")
	to := filepath.Join(dir, "s", "x", "events.jsonl")
	require.NoError(t, os.WriteFile(from, []byte("session\n"), 0o600))
	var announced []string
	ctx := WithMadeDirRecorder(context.Background(), func(d string) error {
		_, err := os.Lstat(d)
		assert.ErrorIs(t, err, os.ErrNotExist, "announced before it is made")
		announced = append(announced, d)
		return nil
	})
	m, err := MoveFile(ctx, from, to)
	require.NoError(t, err)
	made := []string{filepath.Join(dir, "s"), filepath.Join(dir, "s", "x")}
	assert.Equal(t, made, announced)
	assert.Equal(t, made, m.Made)

	require.NoError(t, UnmoveFile(context.Background(), m, false))
	refused := errors.New("journal full")
	ctx = WithMadeDirRecorder(context.Background(), func(d string) error {
		if d == made[1] {
			return refused
		}
		return nil
	})
	_, err = MoveFile(ctx, from, to)
	require.ErrorIs(t, err, refused)
	assert.NoDirExists(t, made[0], "what was made is removed again")
	assert.FileExists(t, from)
}
