package fileio

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// TestRewriteFileDirectorySwappedForALink: the owner of a store's directory renames the
// directory away and puts a symbolic link to another directory in its place while the rewrite
// runs (after the copy, when the change is journaled), the other directory holding a hard link
// to the store (so every check by name still finds the file that was read). Every step after
// that (the kept link, the temp's name, the checks, the rename) happens in the directory the
// store was read from: the other directory is left as it was (its one file, old content) and
// the store is rewritten where it now is. Named and anonymous temps both. By name, the temp was
// linked and renamed into the other directory (a root run writing where the user may not).
func TestRewriteFileDirectorySwappedForALink(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "anonymous temp", true: "named temp"}[named], func(t *testing.T) {
			rewriteWithDirectorySwapped(t, named)
		})
	}
}

// rewriteWithDirectorySwapped is TestRewriteFileDirectorySwappedForALink with a named temp or
// (where it can be made) an anonymous one.
func rewriteWithDirectorySwapped(t *testing.T, named bool) {
	defer func(v bool) { anonTemps = v }(anonTemps)
	anonTemps = !named
	root := t.TempDir()
	dir, moved, other := filepath.Join(root, "d"), filepath.Join(root, "moved"), filepath.Join(root, "other")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Mkdir(other, 0o755))
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	require.NoError(t, os.Link(p, filepath.Join(other, "s.jsonl")))
	want := stateOf(t, p)
	swapped := false
	_, err := RewriteFile(context.Background(), p, want, upper, store.ApplyOptions{
		BackupPath: filepath.Join(t.TempDir(), "bk"),
		BeforeCommit: func(ch *store.Change) error {
			require.NoError(t, os.Rename(dir, moved))
			require.NoError(t, os.Symlink(other, dir))
			swapped = true
			return upperSites(ch)
		}})
	require.True(t, swapped)
	require.NoError(t, err)
	ents, err := os.ReadDir(other)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"s.jsonl"}, names, "nothing linked, created or renamed in the other directory")
	got, err := os.ReadFile(filepath.Join(other, "s.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "abc\n", string(got), "the other directory's file is not the new one")
	got, err = os.ReadFile(filepath.Join(moved, "s.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "ABC\n", string(got), "rewritten in the directory it was read from")
	ents, err = os.ReadDir(moved)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temp or kept link left beside the store")
}

// TestPinDirRefusesAMovedDirectory: the directory found at the path of a store's directory
// must hold the file the rewrite opened, else it was swapped since (errDirMoved); a pinned
// directory names its entries and itself through its descriptor, other paths as they are, and
// errors name the paths as the user knows them.
func TestPinDirRefusesAMovedDirectory(t *testing.T) {
	root := t.TempDir()
	pinSupported(t, root)
	p := filepath.Join(root, "d", "s.jsonl")
	require.NoError(t, os.Mkdir(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	fi, err := os.Lstat(p)
	require.NoError(t, err)

	other := filepath.Join(root, "o.jsonl")
	require.NoError(t, os.WriteFile(other, []byte("x"), 0o600))
	ofi, err := os.Lstat(other)
	require.NoError(t, err)
	_, err = pinDir(p, ofi)
	require.ErrorIs(t, err, errDirMoved)

	pin, err := pinDir(p, fi)
	require.NoError(t, err)
	require.NotNil(t, pin)
	defer pin.close()
	require.NoError(t, os.Rename(filepath.Dir(p), filepath.Join(root, "moved")))
	f, err := pin.openFile(p, os.O_RDONLY, 0)
	require.NoError(t, err, "the pinned directory is reached after it was renamed")
	b, err := io.ReadAll(f)
	f.Close()
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
	assert.Equal(t, p, f.Name(), "named as the user knows it")
	_, err = pin.lstat(filepath.Join(filepath.Dir(p), "absent"))
	assert.EqualError(t, err, "lstat "+filepath.Join(filepath.Dir(p), "absent")+": no such file or directory")
	ofi2, err := pin.lstat(other)
	require.NoError(t, err, "a path outside the directory is looked up as it is")
	assert.True(t, sameFile(ofi, ofi2))
}

// pinSupported: every directory is pinned on Linux (with or without /proc).
func pinSupported(t *testing.T, dir string) {
	t.Helper()
	f, _, err := openDirPath(dir)
	require.NoError(t, err)
	require.NotNil(t, f)
	f.Close()
}
