package fileio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// anonSupported skips a test where t.TempDir() cannot hold an anonymous temp (a file system
// openAnonTemp does not rely on: the named temp's protocol applies there, tested elsewhere).
func anonSupported(t *testing.T, dir string) {
	t.Helper()
	f, err := openAnonTemp(nil, dir, filepath.Join(dir, "t"))
	if err != nil {
		t.Skipf("no anonymous temp in %s: %v", dir, err)
	}
	f.Close()
}

// On Linux (ext4, XFS, Btrfs, tmpfs) a rewrite's temp is written and fsynced without a name:
// nothing of it is in the store's directory while it is written; its name and the kept name
// are announced (TempPlanned, no wait) before the change's journal line, made durable after it
// (TempLinking) and only then linked, before the rename. No announcement waits for the journal
// before the copy (TempCreating: none). Red before: the temp was announced (TempCreating) and
// created before the copy.
func TestRewriteFileAnonymousTempNamedAfterTheCommit(t *testing.T) {
	dir := t.TempDir()
	anonSupported(t, dir)
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	var mu sync.Mutex
	var ops []string
	note := func(s string) { mu.Lock(); ops = append(ops, s); mu.Unlock() }
	defer SetFaultHook(func(op, path string) error {
		switch {
		case op == FaultSync && filepath.Dir(path) == dir:
			note("temp-fsync")
		case op == FaultRename:
			note("rename")
		}
		return nil
	})()
	names := map[string]string{} // temp path → its events, in order
	rec := func(event, tmp, target string) error {
		assert.Equal(t, p, target)
		note(event + " " + filepath.Base(tmp))
		mu.Lock()
		names[tmp] += event + ";"
		mu.Unlock()
		return nil
	}
	var during []string // the directory while the written temp is given its times
	testHookTempWritten = func(tmp string) {
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			during = append(during, e.Name())
		}
		_, err = os.Lstat(tmp)
		assert.ErrorIs(t, err, os.ErrNotExist, "the temp has no name while it is written")
	}
	defer func() { testHookTempWritten = nil }()
	ctx := WithTempRecorder(context.Background(), rec)
	_, err := RewriteFile(ctx, p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk"),
		BeforeCommit: func(ch *store.Change) error { note("commit"); return upperSites(ch) }})
	require.NoError(t, err)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\n", string(got))
	assert.Equal(t, []string{"s.jsonl"}, during, "nothing beside the store while the temp is written")

	mu.Lock()
	defer mu.Unlock()
	idx := func(prefix string) []int {
		var at []int
		for i, o := range ops {
			if strings.HasPrefix(o, prefix) {
				at = append(at, i)
			}
		}
		return at
	}
	planned, linking, commit, rename := idx(TempPlanned+" "), idx(TempLinking+" "), idx("commit"), idx("rename")
	require.Len(t, planned, 2, "the temp's and the kept name's announcements: %v", ops)
	require.Len(t, linking, 2, "%v", ops)
	require.Len(t, commit, 1)
	require.Len(t, rename, 1)
	assert.Empty(t, idx(TempCreating+" "), "no announcement waited for before the copy: %v", ops)
	assert.Less(t, idx("temp-fsync")[0], rename[0], "%v", ops)
	for i := range 2 {
		assert.Less(t, planned[i], commit[0], "announced before the journal line: %v", ops)
		assert.Less(t, commit[0], linking[i], "made durable after it: %v", ops)
		assert.Less(t, linking[i], rename[0], "%v", ops)
	}
	require.Len(t, names, 2)
	for tmp, ev := range names {
		assert.True(t, IsTempName(filepath.Base(tmp), "s.jsonl"), tmp)
		assert.Equal(t, TempPlanned+";"+TempLinking+";"+TempGone+";", ev, "%s: planned, linked, then gone (renamed over the store, or the kept name removed)", tmp)
		_, err := os.Lstat(tmp)
		assert.ErrorIs(t, err, os.ErrNotExist, tmp)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "nothing left beside the store")
}

// A rewrite that fails after its anonymous temp was announced (an in-use refusal at the check
// before the names are made) leaves nothing beside the store and journals both announced names
// as gone; one that fails before (the content changed) announced nothing.
func TestRewriteFileAnonymousTempRefusedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	anonSupported(t, dir)
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	events := map[string]string{}
	var mu sync.Mutex
	rec := func(event, tmp, _ string) error { mu.Lock(); events[tmp] += event + ";"; mu.Unlock(); return nil }
	ctx := WithTempRecorder(context.Background(), rec)
	_, err := RewriteFile(ctx, p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(t.TempDir(), "bk"),
		BeforeCommit: func(ch *store.Change) error {
			// Another process appends once the change is journaled, before the names are made.
			appendLate(t, p)
			return upperSites(ch)
		}})
	var iu *store.InUseError
	require.ErrorAs(t, err, &iu)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "abc\nlate\n", string(got))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "nothing left beside the store")
	require.Len(t, events, 2)
	for tmp, ev := range events {
		assert.Equal(t, TempPlanned+";"+TempGone+";", ev, tmp)
	}
}

// An anonymous temp's errors name the temp it is to become, not its directory (before: a full
// disk during the copy said "write <dir>: no space left on device", review of 77b034c).
func TestAnonTempErrorsNameTheTemp(t *testing.T) {
	dir := t.TempDir()
	anonSupported(t, dir)
	path := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o644))
	p, ok := newAnonPendingFile(context.Background(), path, nil)
	require.True(t, ok)
	require.NoError(t, p.File.Close())
	_, err := p.File.Write([]byte("x"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write "+p.Name()+":")
	assert.NotContains(t, err.Error(), "write "+dir+":")
}
