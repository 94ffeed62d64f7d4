package fileio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sessionfix/sessionfix/store"
)

// The order a journaled change relies on: the backup's directory fsync (now started early and
// shared) has completed before BeforeCommit journals the change; the CPU slot is given back
// around a named temp's announcement (an anonymous temp is announced with the commit: nothing
// to wait for before the copy) and once the temp is written, before the temp's fsync; and the
// rename comes after both.
func TestRewriteFileSyncsTheBackupDirectoryBeforeTheCommit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		anon    bool
		slotOps []string
	}{
		{"named temp", false, []string{"release", "acquire", "release", "temp-fsync"}},
		{"anonymous temp", true, []string{"release", "temp-fsync"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v bool) { anonTemps = v }(anonTemps)
			anonTemps = tc.anon
			testSyncsTheBackupDirectoryBeforeTheCommit(t, tc.slotOps)
		})
	}
}

func testSyncsTheBackupDirectoryBeforeTheCommit(t *testing.T, wantSlotOps []string) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	want := stateOf(t, p)
	bkDir := filepath.Join(dir, "bk")
	var mu sync.Mutex
	var ops []string
	note := func(s string) { mu.Lock(); ops = append(ops, s); mu.Unlock() }
	defer SetFaultHook(func(op, path string) error {
		switch {
		case op == FaultSyncDir && path == bkDir:
			note("backup-dir-fsync")
		case op == FaultSync && filepath.Dir(path) == dir:
			note("temp-fsync")
		case op == FaultRename:
			note("rename")
		}
		return nil
	})()
	ctx := WithCPUSlot(context.Background(), testSlot{note})
	_, err := RewriteFile(ctx, p, want, upper, store.ApplyOptions{BackupPath: filepath.Join(bkDir, "1"),
		BeforeCommit: func(ch *store.Change) error { note("commit"); return upperSites(ch) }})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	idx := func(s string) int {
		for i, o := range ops {
			if o == s {
				return i
			}
		}
		t.Fatalf("%s not seen in %v", s, ops)
		return -1
	}
	assert.Less(t, idx("backup-dir-fsync"), idx("commit"), "the backup's name is durable before the change is journaled: %v", ops)
	var slotOps []string
	for _, o := range ops {
		if o == "release" || o == "acquire" || o == "temp-fsync" {
			slotOps = append(slotOps, o)
		}
	}
	assert.Equal(t, wantSlotOps, slotOps,
		"the CPU slot is given back for a named temp's announcement and once the temp is written, before its fsync")
	assert.Less(t, idx("commit"), idx("rename"), "%v", ops)
	assert.Less(t, idx("temp-fsync"), idx("rename"), "%v", ops)
	got, _ := os.ReadFile(p)
	assert.Equal(t, "ABC\n", string(got))
}

// syncDirGrouped returns only after an fsync that started after its ticket: a request made
// while another's fsync is running waits for a second fsync, which also covers every request
// taken before it starts (one fsync for those).
func TestSyncDirGroupedWaitsForAnFsyncStartedAfterIt(t *testing.T) {
	dir := t.TempDir()
	first := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	fsyncs := 0
	defer SetFaultHook(func(op, path string) error {
		if op != FaultSyncDir || path != dir {
			return nil
		}
		mu.Lock()
		fsyncs++
		n := fsyncs
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release
		}
		return nil
	})()
	errs := make(chan error, 3)
	go func() { errs <- syncDirGrouped(dir) }()
	<-first // the first fsync is running; the next two requests come after its start
	returned := make(chan struct{}, 2)
	for range 2 {
		go func() { errs <- syncDirGrouped(dir); returned <- struct{}{} }()
	}
	// Wait until both have their tickets (a deadlock guard, not a timing assertion).
	deadline := time.Now().Add(20 * time.Second)
	for {
		dirSyncs.mu.Lock()
		d := dirSyncs.dirs[dir]
		dirSyncs.mu.Unlock()
		d.mu.Lock()
		n := d.tickets
		d.mu.Unlock()
		if n == 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the requests never took their tickets")
		time.Sleep(time.Millisecond)
	}
	select {
	case <-returned:
		t.Fatal("a request returned on an fsync that started before it")
	default:
	}
	close(release)
	for range 3 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, 2, fsyncs, "the two later requests share one fsync")
	dirSyncs.mu.Lock()
	assert.Empty(t, dirSyncs.dirs, "no state kept once nobody waits")
	dirSyncs.mu.Unlock()
}

// testSlot is a CPUSlot that notes its calls.
type testSlot struct{ note func(string) }

func (s testSlot) Release() { s.note("release") }
func (s testSlot) Acquire() { s.note("acquire") }

// A failed fsync reports its error to every request whose entry it covered, not only to the
// one that ran it: on Linux a writeback error is reported once (errseq: to the first fsync that
// sees it), so the others' own retry may succeed without their entry being on disk. A request
// made after the failed fsync started has its own fsync.
func TestSyncDirGroupedFailureReachesEveryRequestItCovered(t *testing.T) {
	dir := t.TempDir()
	first := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	fsyncs := 0
	defer SetFaultHook(func(op, path string) error {
		if op != FaultSyncDir || path != dir {
			return nil
		}
		mu.Lock()
		fsyncs++
		n := fsyncs
		mu.Unlock()
		switch n {
		case 1:
			close(first)
			<-release
		case 2:
			return errors.New("EIO") // the writeback of the entries failed; reported once
		}
		return nil // a later fsync no longer sees the error
	})()
	errs := make(chan error, 3)
	go func() { errs <- syncDirGrouped(dir) }()
	<-first
	for range 2 {
		go func() { errs <- syncDirGrouped(dir) }()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		dirSyncs.mu.Lock()
		d := dirSyncs.dirs[dir]
		dirSyncs.mu.Unlock()
		d.mu.Lock()
		n := d.tickets
		d.mu.Unlock()
		if n == 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the requests never took their tickets")
		time.Sleep(time.Millisecond)
	}
	close(release) // the second fsync covers both later requests, and fails
	failed := 0
	for range 3 {
		if err := <-errs; err != nil {
			failed++
			assert.ErrorContains(t, err, "EIO")
		}
	}
	assert.Equal(t, 2, failed, "both requests the failed fsync covered get its error")
	// A request after the failure: its own fsync.
	require.NoError(t, syncDirGrouped(dir))
}

// Under WithDirSyncs a rewrite leaves its directory's fsync to the DirSyncs: none is made
// between the rename and the return; Durable of one store then makes every directory renamed
// in so far durable at once (one syncfs where it stands for their fsyncs, else an fsync of
// each: the seam sees each directory once either way), after the renames, and the other
// stores' Durable make no more. A directory that cannot be synced is the error of its stores
// only, returned once.
func TestDirSyncsMakeTheRenamesDurableOnceForAll(t *testing.T) {
	base := t.TempDir()
	var paths, dirs []string
	for _, d := range []string{"a", "b", "c"} {
		dir := filepath.Join(base, d)
		require.NoError(t, os.Mkdir(dir, 0o700))
		p := filepath.Join(dir, "s.jsonl")
		require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
		paths, dirs = append(paths, p), append(dirs, dir)
	}
	var mu sync.Mutex
	var ops []string
	failB := errors.New("injected EIO")
	defer SetFaultHook(func(op, path string) error {
		mu.Lock()
		defer mu.Unlock()
		for i, dir := range dirs {
			switch {
			case op == FaultSyncDir && path == dir:
				ops = append(ops, "sync "+dirs[i])
				if i == 1 {
					return failB
				}
			case op == FaultRename && filepath.Dir(path) == dir:
				ops = append(ops, "rename "+dirs[i])
			}
		}
		return nil
	})()
	ds := &DirSyncs{}
	ctx := WithDirSyncs(context.Background(), ds)
	for i, p := range paths {
		_, err := RewriteFile(ctx, p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(base, "bk", string(rune('0'+i))),
			BeforeCommit: upperSites})
		require.NoError(t, err)
	}
	mu.Lock()
	assert.Equal(t, []string{"rename " + dirs[0], "rename " + dirs[1], "rename " + dirs[2]}, ops, "no directory fsync between the renames")
	ops = nil
	mu.Unlock()

	require.NoError(t, ds.Durable(paths[0]))
	mu.Lock()
	assert.ElementsMatch(t, []string{"sync " + dirs[0], "sync " + dirs[1], "sync " + dirs[2]}, ops, "one sync covers every directory renamed in")
	ops = nil
	mu.Unlock()
	err := ds.Durable(paths[1])
	require.ErrorIs(t, err, failB)
	assert.Contains(t, err.Error(), dirs[1])
	require.NoError(t, ds.Durable(paths[2]))
	require.NoError(t, ds.Durable(paths[1]), "an error is returned once")
	assert.Empty(t, ds.Sync(), "nothing left to sync or report")
	mu.Lock()
	assert.Empty(t, ops, "the later stores were covered by the first sync")
	mu.Unlock()
	for _, p := range paths {
		got, _ := os.ReadFile(p)
		assert.Equal(t, "ABC\n", string(got))
	}
}

// A Durable that comes while another's sync is running, for a store renamed after that sync
// started, waits for a sync of its own: it never returns on a sync that did not cover it.
func TestDirSyncsDurableWaitsForASyncThatCoversIt(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a", "s"), filepath.Join(base, "b", "s")
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	synced := map[string]int{}
	defer SetFaultHook(func(op, path string) error {
		if op != FaultSyncDir {
			return nil
		}
		mu.Lock()
		synced[path]++
		first := path == filepath.Dir(a) && synced[path] == 1
		mu.Unlock()
		if first {
			close(started)
			<-release
		}
		return nil
	})()
	for _, p := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	}
	ds := &DirSyncs{}
	ds.add(a, nil)
	done := make(chan error)
	go func() { done <- ds.Durable(a) }()
	<-started // the sync covering a (only) is running
	ds.add(b, nil)
	bDone := make(chan error)
	go func() { bDone <- ds.Durable(b) }()
	select {
	case <-bDone:
		t.Fatal("Durable(b) returned before any sync covered b")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done)
	require.NoError(t, <-bDone)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, synced[filepath.Dir(b)], "b's directory synced by a sync of its own")
}

// TestSyncDirDoesNotWaitOnAFIFO: a directory whose fsync a run makes by name (DirSyncs: the
// grouped fsyncs of a run's renames) that its owner replaced with a FIFO meanwhile is an error
// at once (opened O_DIRECTORY: not a directory), not a wait in open(2) for a writer that never
// comes: before (a plain open), a root run over a user's home from cron hung there.
func TestSyncDirDoesNotWaitOnAFIFO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chats")
	require.NoError(t, unix.Mkfifo(dir, 0o600))
	done := make(chan error, 1)
	go func() { done <- SyncDir(dir) }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.ErrorIs(t, err, unix.ENOTDIR)
		assert.Contains(t, err.Error(), dir)
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(dir, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("SyncDir is blocked opening a FIFO")
	}
}
