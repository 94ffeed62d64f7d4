package fileio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/sessionfix/sessionfix/store"
)

func upper(dst io.Writer, src io.Reader) error {
	b, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	_, err = dst.Write(bytes.ToUpper(b))
	return err
}

func stateOf(t testing.TB, path string) store.FileState {
	t.Helper()
	st, err := StatFile(path)
	require.NoError(t, err)
	st.SHA256, err = HashFile(path)
	require.NoError(t, err)
	return st
}

// xxh128Text is the "after" checksum of b as manifest version 3 records it, computed here
// with the library directly.
func xxh128Text(b []byte) string {
	s := xxh3.Hash128(b).Bytes()
	return "xxh3-128:" + hex.EncodeToString(s[:])
}

// appendLate appends "late\n" to the file at path, as an agent writing its session does.
func appendLate(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("late\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// upperSites is upper with the site it changes recorded, as the JSONL store records them.
func upperSites(ch *store.Change) error {
	ch.Sites = []store.ByteEdit{{At: 0, Old: "abc", New: "ABC"}}
	return nil
}

// Issue 9 findings 1 and 2: bytes appended between the last check and the rename are carried
// over, the store is reported in use (a CommittedError wrapping a store.InUseError: exit 4), the
// run's "after" state covers only what the rewrite wrote, and undo keeps the late bytes.
func TestRewriteFileCarriesOverALateAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	testHookBeforeRename = func(path string) {
		appendLate(t, path)
	}
	defer func() { testHookBeforeRename = nil }()
	ch, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1"), BeforeCommit: upperSites})
	var ce *CommittedError
	require.ErrorAs(t, err, &ce, "rewritten, and reported")
	require.ErrorIs(t, err, store.ErrInUse, "a store appended to while it was replaced is reported in use")
	require.NotNil(t, ch)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\nlate\n", string(got), "an append that raced the rename is not lost")
	assert.Equal(t, int64(5), ch.Carried)
	assert.Equal(t, xxh128Text([]byte("ABC\n")), ch.After.Fingerprint, "the after checksum covers what the rewrite wrote, not the carried bytes")
	assert.Empty(t, ch.After.SHA256)
	assert.Equal(t, int64(4), ch.After.Size)

	// Undo reverses the edit and keeps the carried line.
	testHookBeforeRename = nil
	assert.True(t, ch.BackupLink)
	require.NoError(t, RestoreFile(context.Background(), p, ch, false))
	got, _ = os.ReadFile(p)
	assert.Equal(t, "abc\nlate\n", string(got))
}

// A single carried byte is worded in the singular ("1 byte … was", not "1 bytes … were").
func TestRewriteFileCarriedOneByteWording(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	testHookBeforeRename = func(path string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, _ = f.WriteString("x")
		f.Close()
	}
	defer func() { testHookBeforeRename = nil }()
	ch, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1"), BeforeCommit: upperSites})
	require.ErrorIs(t, err, store.ErrInUse)
	require.NotNil(t, ch)
	assert.Equal(t, []string{"1 byte appended while replacing was carried over to the end of the new file"}, ch.Warnings)
	assert.Contains(t, err.Error(), "the 1 new byte was carried over")
}

func TestRewriteFileCopiesBackupAcrossFileSystems(t *testing.T) {
	// /dev/shm is tmpfs: a backup there cannot be a hard link to a file under TempDir.
	shm, err := os.MkdirTemp("/dev/shm", "sessionfix-test-")
	if err != nil {
		t.Skip("no /dev/shm here:", err)
	}
	defer os.RemoveAll(shm)
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(shm, "bk")})
	require.NoError(t, err)
	if ch.BackupLink {
		t.Skip("same file system: nothing to check")
	}
	b, _ := os.ReadFile(ch.Backup)
	assert.Equal(t, "abc\n", string(b))
	require.NoError(t, RestoreFile(context.Background(), p, ch, false))
	got, _ := os.ReadFile(p)
	assert.Equal(t, "abc\n", string(got))
}

func TestRewriteFileAbortsCleanly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	bk := filepath.Join(dir, "bk", "1")
	boom := errors.New("journal disk full")
	_, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: bk, BeforeCommit: func(*store.Change) error { return boom }})
	require.ErrorIs(t, err, boom)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "abc\n", string(got))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "temp left: %s", e.Name())
	}
	_, err = os.Stat(bk)
	assert.ErrorIs(t, err, os.ErrNotExist)

	// A transform failure leaves the file too.
	_, err = RewriteFile(context.Background(), p, want, func(io.Writer, io.Reader) error { return boom }, store.ApplyOptions{BackupPath: bk})
	require.ErrorIs(t, err, boom)
	got, _ = os.ReadFile(p)
	assert.Equal(t, "abc\n", string(got))

	// Content changed with the same size and mtime: caught by the hash.
	require.NoError(t, os.WriteFile(p, []byte("xyz\n"), 0o600))
	require.NoError(t, os.Chtimes(p, want.ModTime, want.ModTime))
	_, err = RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{BackupPath: bk})
	require.ErrorIs(t, err, store.ErrInUse)
	got, _ = os.ReadFile(p)
	assert.Equal(t, "xyz\n", string(got))
}

func TestRewriteFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	_, err := RewriteFile(context.Background(), dir, store.FileState{}, upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "b")})
	require.ErrorIs(t, err, store.ErrNotWritable)
}

// A symbolic link is never renamed over (the rename would replace the link with a regular file
// and leave its target, e.g. a dotfiles checkout, with the old bytes): refused as not writable,
// link and target unchanged. Callers rewrite the link's target instead.
func TestRewriteFileRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	require.NoError(t, os.WriteFile(target, []byte("abc\n"), 0o644))
	link := filepath.Join(dir, "settings.json")
	require.NoError(t, os.Symlink(target, link))
	_, err := RewriteFile(context.Background(), link, stateOf(t, link), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.ErrorIs(t, err, store.ErrNotWritable)
	assert.Contains(t, err.Error(), "a symbolic link")
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "the link stays a link")
	b, _ := os.ReadFile(target)
	assert.Equal(t, "abc\n", string(b))
}

func TestRewriteFileKeepsSpecialModeBitsAndXattrs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	require.NoError(t, os.Chmod(p, 0o640|os.ModeSetgid))
	xattrOK := setXattr(p, "user.sessionfix-test", "kept") == nil
	orig, err := os.Stat(p)
	require.NoError(t, err)

	ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.NoError(t, err)
	fi, _ := os.Stat(p)
	assert.Equal(t, orig.Mode(), fi.Mode(), "setgid kept")
	if xattrOK {
		assert.Equal(t, "kept", getXattr(t, p, "user.sessionfix-test"))
	}
	require.NoError(t, RestoreFile(context.Background(), p, ch, false))
	fi, _ = os.Stat(p)
	assert.Equal(t, orig.Mode(), fi.Mode(), "setgid restored")
	if xattrOK {
		assert.Equal(t, "kept", getXattr(t, p, "user.sessionfix-test"))
	} else {
		t.Log("this file system has no user xattrs: only mode bits checked")
	}
}

func TestRewriteFileWithOtherHardLinksCopiesTheBackup(t *testing.T) {
	dir := t.TempDir()
	h1, h2 := filepath.Join(dir, "h1.jsonl"), filepath.Join(dir, "h2.jsonl")
	require.NoError(t, os.WriteFile(h1, []byte("abc\n"), 0o600))
	require.NoError(t, os.Link(h1, h2))
	ch, err := RewriteFile(context.Background(), h1, stateOf(t, h1), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1")})
	require.NoError(t, err)
	assert.False(t, ch.BackupLink, "the inode lives on as h2: the backup is a copy")
	require.Len(t, ch.Warnings, 1)
	assert.Contains(t, ch.Warnings[0], "2 hard links")
	// h2 keeps the old content and may change later: undo of h1 is unaffected.
	require.NoError(t, os.WriteFile(h2, []byte("something else\n"), 0o600))
	require.NoError(t, RestoreFile(context.Background(), h1, ch, false))
	got, _ := os.ReadFile(h1)
	assert.Equal(t, "abc\n", string(got))
}

// A Change recorded before manifest version 3 has its "after" content as After.SHA256 (no
// Fingerprint): undo still restores it, reverses it in place after an append, and refuses it
// when a byte changed; the same for a version 3 Change (XXH3-128 in After.Fingerprint).
func TestRestoreFileReadsBothAfterChecksums(t *testing.T) {
	for _, old := range []bool{false, true} {
		for _, what := range []string{"unchanged", "appended", "changed"} {
			t.Run(fmt.Sprintf("sha256=%v/%s", old, what), func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "s.jsonl")
				require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
				ch, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1"), BeforeCommit: upperSites})
				require.NoError(t, err)
				require.Equal(t, xxh128Text([]byte("ABC\n")), ch.After.Fingerprint)
				if old {
					s := sha256.Sum256([]byte("ABC\n"))
					ch.After.SHA256, ch.After.Fingerprint = hex.EncodeToString(s[:]), ""
				}
				want := "abc\n"
				switch what {
				case "appended":
					appendLate(t, p)
					want = "abc\nlate\n"
				case "changed":
					require.NoError(t, os.WriteFile(p, []byte("ABD\n"), 0o600))
					want = "ABD\n"
				}
				err = RestoreFile(context.Background(), p, ch, false)
				if what == "changed" {
					require.ErrorIs(t, err, store.ErrChangedSinceRun)
				} else {
					require.NoError(t, err)
				}
				got, _ := os.ReadFile(p)
				assert.Equal(t, want, string(got))
			})
		}
	}
}
