package scan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// TestAStoreSwappedAfterDiscoveryIsNotRead (issue 30 findings 5 and 6): discovery pins every
// store to the file it found (device and inode). A session its directory's owner then swaps —
// for a FIFO (a blocking open never returned: the scan hung, SIGTERM ignored), for a symbolic
// link to a file of another's, for another file renamed over it, or through its directory
// swapped for a link to a directory of another's — is refused at once with a
// *fileio.NotTheFileError naming what it is, and nothing of that other file is read: before,
// root's scan reported the names of a root-only file under the user's path (6 of 30 scans
// with a swap loop).
func TestAStoreSwappedAfterDiscoveryIsNotRead(t *testing.T) {
	secret := strings.ReplaceAll(sessionLine, "mcp__a.b__c", "mcp__root.only__secret_tool")
	for _, tc := range []struct {
		name   string
		swap   func(t *testing.T, sess, private string)
		reason string
	}{
		{"FIFO", func(t *testing.T, sess, _ string) {
			require.NoError(t, os.Remove(sess))
			require.NoError(t, unix.Mkfifo(sess, 0o600))
		}, "it is a FIFO (named pipe), not a regular file"},
		{"symbolic link", func(t *testing.T, sess, private string) {
			require.NoError(t, os.Remove(sess))
			require.NoError(t, os.Symlink(filepath.Join(private, "x.jsonl"), sess))
		}, "it is now a symbolic link"},
		{"another file", func(t *testing.T, sess, private string) {
			b, err := os.ReadFile(filepath.Join(private, "x.jsonl"))
			require.NoError(t, err)
			tmp := sess + ".new"
			require.NoError(t, os.WriteFile(tmp, b, 0o644))
			require.NoError(t, os.Rename(tmp, sess))
		}, "it is another file than the one found there"},
		{"directory swapped for a link", func(t *testing.T, sess, private string) {
			dir := filepath.Dir(sess)
			require.NoError(t, os.Rename(dir, dir+".old"))
			require.NoError(t, os.Rename(filepath.Join(private, "x.jsonl"), filepath.Join(private, filepath.Base(sess))))
			require.NoError(t, os.Symlink(private, dir))
		}, "it is another file than the one found there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			private := t.TempDir()
			write(t, private, "x.jsonl", secret)
			sess := write(t, root, "projects/-home-a/chats/0b6f2a4e-1c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl", sessionLine)
			f := discover(t, []string{root})
			require.Len(t, f.Targets, 1)
			st := f.Targets[0].Store
			require.Equal(t, sess, st.Ref().Path)

			tc.swap(t, sess, private)
			type res struct {
				snap *store.Snapshot
				err  error
			}
			ch := make(chan res, 1)
			go func() {
				snap, err := st.Scan(context.Background(), store.ScanOptions{Hash: true})
				ch <- res{snap, err}
			}()
			var r res
			select {
			case r = <-ch:
			case <-time.After(10 * time.Second):
				t.Fatal("the scan is still blocked after 10 s")
			}
			if r.snap != nil {
				for _, s := range r.snap.Sites {
					assert.NotContains(t, s.Name, "root.only", "a name of the other file was read")
				}
			}
			require.Error(t, r.err)
			var nf *fileio.NotTheFileError
			require.True(t, errors.As(r.err, &nf), "%v", r.err)
			assert.Contains(t, r.err.Error(), tc.reason)
		})
	}
}
