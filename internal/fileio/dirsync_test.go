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

	"github.com/sessionfix/sessionfix/store"
)

// The order a journaled change relies on: the backup's directory fsync (now started early and
// shared) has completed before BeforeCommit journals the change; the CPU slot is given back
// around the temp's announcement and once the temp is written, before the temp's fsync; and
// the rename comes after both.
func TestRewriteFileSyncsTheBackupDirectoryBeforeTheCommit(t *testing.T) {
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
	assert.Equal(t, []string{"release", "acquire", "release", "temp-fsync"}, slotOps,
		"the CPU slot is given back for the temp's announcement and once the temp is written, before its fsync")
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
