package fileio

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// The named temp, the protocol wherever a temp cannot be made without a name (other file
// systems, other systems, no /proc/self/fd; anonTemps off here), on a file system where the
// anonymous one would be used: each name is announced while nothing is at it, before the copy
// (the kept name planned, made durable with the temp's announcement, TempCreating); the
// temp is a named regular file, given the original's mode once written; the rewrite keeps the
// original's mode and mtime and leaves nothing beside the store; each announced name is then
// journaled gone. And a rewrite refused at the final check (an append after the journal line)
// leaves the store as the appender left it and nothing beside it. (Review of 77b034c: since it,
// the rest of the package's tests take the anonymous temp on ext4 and tmpfs.)
func TestRewriteFileNamedTempFallback(t *testing.T) {
	defer func(v bool) { anonTemps = v }(anonTemps)
	anonTemps = false
	for _, refused := range []bool{false, true} {
		dir := t.TempDir()
		p := filepath.Join(dir, "s.jsonl")
		require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o640))
		require.NoError(t, os.Chmod(p, 0o640))
		want := stateOf(t, p)
		var mu sync.Mutex
		var ops []string
		events := map[string]string{}
		rec := func(event, tmp, target string) error {
			assert.Equal(t, p, target)
			if event == TempCreating || event == TempPlanned {
				_, err := os.Lstat(tmp)
				assert.ErrorIs(t, err, os.ErrNotExist, "%s announced before it is made", tmp)
			}
			mu.Lock()
			ops = append(ops, event)
			events[tmp] += event + ";"
			mu.Unlock()
			return nil
		}
		var during os.FileInfo
		testHookTempWritten = func(tmp string) {
			fi, err := os.Lstat(tmp)
			if assert.NoError(t, err, "the temp has its name while it is written") {
				during = fi
			}
		}
		ctx := WithTempRecorder(context.Background(), rec)
		_, err := RewriteFile(ctx, p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk"),
			BeforeCommit: func(ch *store.Change) error {
				mu.Lock()
				ops = append(ops, "commit")
				mu.Unlock()
				if refused {
					appendLate(t, p)
				}
				return upperSites(ch)
			}})
		testHookTempWritten = nil
		got, _ := os.ReadFile(p)
		if refused {
			var iu *store.InUseError
			require.ErrorAs(t, err, &iu)
			assert.Equal(t, "abc\nlate\n", string(got))
		} else {
			require.NoError(t, err)
			assert.Equal(t, "ABC\n", string(got))
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the original's mode")
			assert.True(t, fi.ModTime().Equal(want.ModTime), "the original's mtime")
		}
		require.NotNil(t, during, "the temp was written")
		assert.True(t, during.Mode().IsRegular())
		assert.Equal(t, os.FileMode(0o640), during.Mode().Perm(), "the original's mode, given once written")
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, ents, 1, "nothing left beside the store (refused %v)", refused)
		mu.Lock()
		require.Len(t, events, 2, "the temp's and the kept name's announcements: %v", ops)
		var kinds []string
		for tmp, ev := range events {
			assert.True(t, IsTempName(filepath.Base(tmp), "s.jsonl"), tmp)
			kinds = append(kinds, ev)
		}
		// The kept name is planned (made durable by the temp's announcement, which waits for the
		// journal's fsync); both announcements come before either is made and both names are
		// journaled gone afterwards.
		assert.ElementsMatch(t, []string{TempPlanned + ";" + TempGone + ";", TempCreating + ";" + TempGone + ";"}, kinds, "%v", ops)
		assert.Equal(t, []string{TempPlanned, TempCreating, "commit", TempGone, TempGone}, ops, "no anonymous temp's events (TempLinking)")
		mu.Unlock()
	}
}
