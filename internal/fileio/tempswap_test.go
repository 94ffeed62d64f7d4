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

	"github.com/sessionfix/sessionfix/store"
)

// TestRewriteFileTempSwappedForASymlink (issue 30 finding 4): the owner of a store's directory
// swaps the rewrite's temp file for a symbolic link to a file of someone else's (a root-only
// file, for a root run), (a) once the temp holds the new content, before its times are set, and
// (b) right between the last check of the temp's name and the rename. The victim's times are
// never set (they are set through the temp's descriptor), the rewrite fails with a
// *TempSwappedError naming the temp, and the store is still its original regular file with its
// content: in (b) the swapped-in link was renamed over it and the original is put back. (a) is
// a named temp's (anonymous temps have no name then: TestRewriteFileAnonymousTempNameTaken).
func TestRewriteFileTempSwappedForASymlink(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hook    *func(string)
		renamed bool
		named   bool
	}{
		{"before the times are set", &testHookTempWritten, false, true},
		{"between the check and the rename", &testHookTempRename, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v bool) { anonTemps = v }(anonTemps)
			anonTemps = !tc.named
			dir := t.TempDir()
			p := filepath.Join(dir, "s.jsonl")
			require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
			mt := time.Date(2020, 2, 2, 2, 2, 2, 0, time.UTC)
			require.NoError(t, os.Chtimes(p, mt, mt))
			victim := filepath.Join(t.TempDir(), "victim")
			require.NoError(t, os.WriteFile(victim, []byte("root only\n"), 0o600))
			vt := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			require.NoError(t, os.Chtimes(victim, vt, vt))
			swapped := ""
			*tc.hook = func(tmp string) {
				swapped = tmp
				link := filepath.Join(dir, "link")
				require.NoError(t, os.Symlink(victim, link))
				require.NoError(t, os.Rename(link, tmp))
			}
			defer func() { *tc.hook = nil }()

			_, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
			require.Error(t, err)
			var te *TempSwappedError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, swapped, te.Temp)
			assert.Equal(t, "a symbolic link", te.Now)
			assert.Equal(t, tc.renamed, te.Renamed)
			assert.Contains(t, err.Error(), "was replaced by another process (it is now a symbolic link) before it was renamed over the store: not rewritten")

			vfi, err := os.Stat(victim)
			require.NoError(t, err)
			assert.True(t, vfi.ModTime().Equal(vt), "the victim's mtime was set to %s", vfi.ModTime())
			b, err := os.ReadFile(victim)
			require.NoError(t, err)
			assert.Equal(t, "root only\n", string(b))

			fi, err := os.Lstat(p)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), "the store is a %s", fi.Mode().Type())
			assert.True(t, fi.ModTime().Equal(mt))
			b, err = os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "abc\n", string(b))
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{"s.jsonl"}, names, "nothing left beside the store")
		})
	}
}

// An anonymous temp's name taken (a symbolic link to someone else's file put there by the
// directory's owner) before the temp is linked to it: the name is left to whoever took it, the
// temp linked under a new one (announced first) and renamed over the store; the link and its
// target are untouched.
func TestRewriteFileAnonymousTempNameTaken(t *testing.T) {
	dir := t.TempDir()
	if f, err := openAnonTemp(nil, dir, filepath.Join(dir, "t")); err != nil {
		t.Skipf("no anonymous temp in %s: %v", dir, err)
	} else {
		f.Close()
	}
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("root only\n"), 0o600))
	vt := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, os.Chtimes(victim, vt, vt))
	squatted := ""
	testHookTempWritten = func(tmp string) {
		squatted = tmp
		require.NoError(t, os.Symlink(victim, tmp))
	}
	defer func() { testHookTempWritten = nil }()
	var events []string
	rec := func(event, tmp, _ string) error {
		if tmp == squatted {
			events = append(events, event)
		}
		return nil
	}
	_, err := RewriteFile(WithTempRecorder(context.Background(), rec), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk")})
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "ABC\n", string(b))
	assert.Equal(t, []string{TempPlanned, TempLinking, TempForeign}, events, "the taken name is journaled as not ours")
	li, err := os.Lstat(squatted)
	require.NoError(t, err)
	assert.True(t, li.Mode()&os.ModeSymlink != 0, "the squatter's link is left as it is")
	vfi, err := os.Stat(victim)
	require.NoError(t, err)
	assert.True(t, vfi.ModTime().Equal(vt))
	b, err = os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "root only\n", string(b))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 2, "the store and the squatter's link")
}
