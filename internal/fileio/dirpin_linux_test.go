package fileio

import (
	"context"
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
			defer func(v bool) { anonTemps = v }(anonTemps)
			anonTemps = !named
			root := t.TempDir()
			pinSupported(t, root)
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
		})
	}
}

// TestPinDirRefusesAMovedDirectory: the directory found at the path of a store's directory
// must hold the file the rewrite opened, else it was swapped since (errDirMoved); a pinned
// directory names its entries and itself through its descriptor, other paths as they are, and
// errors through it by the directory's name.
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
	assert.Regexp(t, `^/proc/self/fd/\d+/s\.jsonl$`, pin.path(p))
	assert.Equal(t, pin.at, pin.path(filepath.Dir(p)))
	assert.Equal(t, other, pin.path(other))
	require.NoError(t, os.Rename(filepath.Dir(p), filepath.Join(root, "moved")))
	b, err := os.ReadFile(pin.path(p))
	require.NoError(t, err, "the pinned directory is reached after it was renamed")
	assert.Equal(t, "x", string(b))
	_, err = os.Lstat(pin.path(filepath.Join(filepath.Dir(p), "absent")))
	assert.EqualError(t, pin.err(err), "lstat "+filepath.Join(filepath.Dir(p), "absent")+": no such file or directory")
}

// pinSupported skips t where directories cannot be pinned (no /proc mounted: rewrites name
// files by path there).
func pinSupported(t *testing.T, dir string) {
	t.Helper()
	f, _, err := openDirPath(dir)
	require.NoError(t, err)
	if f == nil {
		t.Skip("/proc/self/fd does not lead to an open directory here (no /proc mounted): nothing is pinned")
	}
	f.Close()
}
