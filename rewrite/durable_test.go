package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// Every replace of the run's own state files (manifest.json at the start of a run, at its end
// and after undo) is temp + fsync + rename + an fsync of the run directory, and a new run's
// directory and journal are durable entries of runs/ and of the run directory: without the
// directory fsync a crash after the rename can bring the old manifest (or no run) back.
func TestStateFileReplacesSyncTheRunDirectory(t *testing.T) {
	dir := t.TempDir()
	a := writeSession(t, dir, "a.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c"))
	state := filepath.Join(t.TempDir(), "state")
	type op struct{ op, path string }
	var mu sync.Mutex
	var ops []op
	defer fileio.SetFaultHook(func(o, path string) error {
		mu.Lock()
		ops = append(ops, op{o, path})
		mu.Unlock()
		return nil
	})()
	now := func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }
	res, err := Apply(context.Background(), Build(scanned(t, a), naming.Policy{}), ApplyOptions{StateDir: state, Workers: 1, Now: now})
	require.NoError(t, err)
	require.Equal(t, 1, res.Files)
	_, m, err := undo(context.Background(), res.Dir, all.Open, false, now)
	require.NoError(t, err)
	require.Equal(t, runlog.StateUndone, m.State)

	manifest := filepath.Join(res.Dir, manifestName)
	var writes, synced int
	pending := false
	var runsSynced bool
	for _, o := range ops {
		switch {
		case o.op == fileio.FaultWrite && o.path == manifest:
			assert.False(t, pending, "a manifest replace was not followed by an fsync of %s", res.Dir)
			writes++
			pending = true
		case o.op == fileio.FaultSyncDir && o.path == res.Dir:
			if pending {
				synced++
			}
			pending = false
		case o.op == fileio.FaultSyncDir && o.path == filepath.Join(state, runsDir):
			runsSynced = true
		}
	}
	assert.False(t, pending, "the last manifest replace was not followed by an fsync of %s", res.Dir)
	assert.Equal(t, 3, writes, "manifest written at the start, at the end and after undo")
	assert.Equal(t, 3, synced)
	assert.True(t, runsSynced, "the new run directory's entry in runs/ is fsynced")
}

// A run's store directories are made durable once each, after the renames, and before anything
// relies on them: each store's directory is synced (a directory fsync, or a syncfs standing for
// it: the seam sees the directory either way) after its rename and before the store is
// reported (Apply's outcomes, Process's emit), every one before the final manifest is written;
// no directory is synced twice.
func TestRunSyncsEachStoreDirectoryOnceAfterItsRename(t *testing.T) {
	base := t.TempDir()
	var paths []string
	for _, d := range []string{"p1", "p2", "p3", "p4"} {
		dir := filepath.Join(base, d)
		require.NoError(t, os.Mkdir(dir, 0o700))
		paths = append(paths, writeSession(t, dir, "s.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c")))
	}
	state := filepath.Join(t.TempDir(), "state")
	var mu sync.Mutex
	var ops []string
	defer fileio.SetFaultHook(func(op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case op == fileio.FaultRename && strings.HasPrefix(path, base):
			ops = append(ops, "rename "+filepath.Dir(path))
		case op == fileio.FaultSyncDir && strings.HasPrefix(path, base):
			ops = append(ops, "sync "+path)
		case op == fileio.FaultWrite && filepath.Base(path) == manifestName:
			ops = append(ops, "manifest")
		}
		return nil
	})()
	var stores []store.Store
	for _, s := range scanned(t, paths...) {
		stores = append(stores, s.Store)
	}
	var reported []string
	res, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: state, Workers: 2}},
		func(r *StoreResult) error {
			if r.Outcome != nil && r.Outcome.Committed() {
				require.NoError(t, r.Outcome.Err)
				mu.Lock()
				ops = append(ops, "reported "+filepath.Dir(r.Outcome.Ref.Path))
				mu.Unlock()
				reported = append(reported, r.Outcome.Ref.Path)
			}
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, 4, res.Files)
	require.Len(t, reported, 4)
	mu.Lock()
	defer mu.Unlock()
	idx := func(s string) int {
		for i, o := range ops {
			if o == s {
				return i
			}
		}
		t.Fatalf("%q not seen in %v", s, ops)
		return -1
	}
	last := -1
	for i, o := range ops {
		if o == "manifest" {
			last = i
		}
	}
	for _, p := range paths {
		d := filepath.Dir(p)
		assert.Less(t, idx("rename "+d), idx("sync "+d), "%v", ops)
		assert.Less(t, idx("sync "+d), idx("reported "+d), "reported only once durable: %v", ops)
		assert.Less(t, idx("sync "+d), last, "before the final manifest: %v", ops)
		n := 0
		for _, o := range ops {
			if o == "sync "+d {
				n++
			}
		}
		assert.Equal(t, 1, n, "%s synced once: %v", d, ops)
	}
}

// The fsync that makes a store's rename durable is made by the worker that rewrote the store,
// before its result is handed on, not by the goroutine that emits the results in store order:
// there each store's directory fsync held up the results of every store after it. While the
// first store's result is being emitted (its emit waits), the two stores after it are
// rewritten and their directories synced; before, their fsyncs waited for their own emits, after
// the first's. Every store is still reported only once durable
// (TestRunSyncsEachStoreDirectoryOnceAfterItsRename).
func TestStoreDirectorySyncedByItsRewrite(t *testing.T) {
	base := t.TempDir()
	var paths []string
	for _, d := range []string{"p1", "p2", "p3"} {
		dir := filepath.Join(base, d)
		require.NoError(t, os.Mkdir(dir, 0o700))
		paths = append(paths, writeSession(t, dir, "s.jsonl", call("1", "mcp__a.b__c"), resp("1", "mcp__a.b__c")))
	}
	state := filepath.Join(t.TempDir(), "state")
	var mu sync.Mutex
	synced := map[string]bool{}
	later := make(chan struct{}) // closed once p2 and p3 are synced
	defer fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultSyncDir && strings.HasPrefix(path, base) {
			mu.Lock()
			synced[path] = true
			if synced[filepath.Dir(paths[1])] && synced[filepath.Dir(paths[2])] && later != nil {
				close(later)
				later = nil
			}
			mu.Unlock()
		}
		return nil
	})()
	waitLater := later
	var stores []store.Store
	for _, s := range scanned(t, paths...) {
		stores = append(stores, s.Store)
	}
	res, err := Process(context.Background(), stores, naming.Policy{}, ProcessOptions{Apply: true, ApplyOptions: ApplyOptions{StateDir: state, Workers: 2}},
		func(r *StoreResult) error {
			if r.Store.Ref().Path == paths[0] {
				select {
				case <-waitLater:
				case <-time.After(10 * time.Second): // a deadlock guard, not a timing assertion
					t.Error("the stores after the first were not made durable while its result was emitted")
				}
			}
			return nil
		})
	require.NoError(t, err)
	require.Equal(t, 3, res.Files)
}
