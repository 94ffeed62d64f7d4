package fileio

import (
	"context"

	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// syncFSSupported skips a test where dir's file system has no syncfs standing for fsyncs
// (fsKey): the fsync path applies there, tested by the other tests.
func syncFSSupported(t *testing.T, dir string) uint64 {
	t.Helper()
	dev, ok := fsKey(dir, nil)
	if !ok {
		t.Skipf("syncfs does not stand for fsyncs in %s", dir)
	}
	return dev
}

// sharedOps rewrites dir/s.jsonl with its backup in dir/bk and returns the steps the fault
// seam and the journal hook saw, in order: the temp's write-back or fsync ("temp-sync"), a
// syncfs ("syncfs"), the backups directory's fsync or what stands for it ("backup-dir"), the
// journal line ("commit") and the rename.
func sharedOps(t *testing.T, dir string, fail map[string]error) ([]string, error) {
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	bkDir := filepath.Join(dir, "bk")
	var mu sync.Mutex
	var ops []string
	note := func(s string) error { mu.Lock(); ops = append(ops, s); mu.Unlock(); return fail[s] }
	defer SetFaultHook(func(op, path string) error {
		switch {
		case op == FaultSync && filepath.Dir(path) == dir:
			return note("temp-sync")
		case op == FaultSyncFS:
			return note("syncfs")
		case op == FaultSyncDir && path == bkDir:
			return note("backup-dir")
		case op == FaultRename && path == p:
			return note("rename")
		}
		return nil
	})()
	_, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(bkDir, "1"),
		BeforeCommit: func(ch *store.Change) error {
			if err := note("commit"); err != nil {
				return err
			}
			return upperSites(ch)
		}})
	mu.Lock()
	defer mu.Unlock()
	return ops, err
}

// Where the store and its backup are on one file system whose syncfs(2) stands for fsyncs
// (fsKey), the temp's data is written back through its own descriptor, then one syncfs (shared
// with the run's other rewrites: syncFSGrouped) stands for the temp's fsync and the backups
// directory's, before the change is journaled and the rename; for a named temp and an
// anonymous one. Red before: the temp and the backups directory were fsynced, no syncfs before
// the commit.
func TestRewriteFileSharesOneSyncFSForTheTempAndTheBackup(t *testing.T) {
	for _, anon := range []bool{false, true} {
		t.Run(map[bool]string{false: "named temp", true: "anonymous temp"}[anon], func(t *testing.T) {
			defer func(v bool) { anonTemps = v }(anonTemps)
			anonTemps = anon
			dir := t.TempDir()
			syncFSSupported(t, dir)
			ops, err := sharedOps(t, dir, nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"temp-sync", "syncfs", "backup-dir", "commit", "rename"}, ops)
			got, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
			assert.Equal(t, "ABC\n", string(got))
		})
	}
}

// A backup directory on another file system than the store's: no syncfs of either stands for
// the other's fsyncs, so the temp and the backups directory are fsynced as before. Red without
// the same-device check in sharedFS (one syncfs of the store's file system only).
func TestRewriteFileFsyncsWhereTheBackupIsOnAnotherFileSystem(t *testing.T) {
	dir := t.TempDir()
	dev := syncFSSupported(t, dir)
	bkDir := filepath.Join(dir, "bk")
	testHookFSKey = func(d string) (uint64, bool) {
		if d == bkDir {
			return dev + 1, true
		}
		return dev, true
	}
	defer func() { testHookFSKey = nil }()
	ops, err := sharedOps(t, dir, nil)
	require.NoError(t, err)
	assert.NotContains(t, ops, "syncfs")
	require.Contains(t, ops, "backup-dir")
	assert.Less(t, index(ops, "backup-dir"), index(ops, "commit"), "%v", ops)
	assert.Less(t, index(ops, "temp-sync"), index(ops, "rename"), "%v", ops)
}

func index(ops []string, s string) int {
	for i, o := range ops {
		if o == s {
			return i
		}
	}
	return -1
}

// Each step of the shared path can fail through its seam (the temp's write-back, the syncfs,
// the backups directory's seams): the rewrite fails before anything is journaled, the store
// keeps its bytes, and neither the backup nor a temp is left. Red before for the syncfs: no
// syncfs was made before the commit, so its failure could not stop one.
func TestRewriteFileSharedSyncFailureJournalsNothing(t *testing.T) {
	for _, step := range []string{"temp-sync", "syncfs", "backup-dir"} {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			syncFSSupported(t, dir)
			ops, err := sharedOps(t, dir, map[string]error{step: syscall.EIO})
			require.ErrorIs(t, err, syscall.EIO)
			assert.NotContains(t, ops, "commit")
			assert.NotContains(t, ops, "rename")
			got, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
			assert.Equal(t, "abc\n", string(got))
			left, _ := filepath.Glob(filepath.Join(dir, "*"))
			assert.Equal(t, []string{filepath.Join(dir, "bk"), filepath.Join(dir, "s.jsonl")}, left, "no temp left")
			bk, _ := os.ReadDir(filepath.Join(dir, "bk"))
			assert.Empty(t, bk, "no backup left")
		})
	}
}

// One stream of syncfs rounds serves a rewrite's request before its rename and a run's renames
// (DirSyncs) alike: requests made while a round runs share the next one, and when that round
// fails its error goes to each of them (the rewrite and every store renamed in). Red without
// DirSyncs going through syncFSGrouped: its own syncfs, three in all.
func TestOneSyncFSRoundServesRewritesAndRenames(t *testing.T) {
	base := t.TempDir()
	dev := syncFSSupported(t, base)
	var paths []string
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.Mkdir(filepath.Join(base, d), 0o700))
		paths = append(paths, filepath.Join(base, d, "s.jsonl"))
	}
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	rounds := 0
	defer SetFaultHook(func(op, path string) error {
		if op != FaultSyncFS {
			return nil
		}
		mu.Lock()
		rounds++
		n := rounds
		mu.Unlock()
		switch n {
		case 1:
			close(started)
			<-release
		case 2:
			return syscall.EIO
		}
		return nil
	})()
	first := make(chan error, 1)
	go func() { first <- syncFSGrouped(dev, base, nil) }()
	<-started // a round is running; what follows comes after its start
	ds := &DirSyncs{}
	for _, p := range paths {
		ds.add(p, nil)
	}
	durable := make(chan error, 1)
	go func() { durable <- ds.Durable(paths[0]) }()
	rewrite := make(chan error, 1)
	go func() { rewrite <- syncFSGrouped(dev, base, nil) }()
	deadline := time.Now().Add(20 * time.Second)
	for fsSyncs.ticketsOf(dev) != 3 {
		require.True(t, time.Now().Before(deadline), "the requests never took their tickets")
		time.Sleep(time.Millisecond)
	}
	close(release)
	require.NoError(t, <-first)
	assert.ErrorIs(t, <-rewrite, syscall.EIO, "the rewrite's request was covered by the failed round")
	assert.ErrorIs(t, <-durable, syscall.EIO, "so was the rename")
	assert.ErrorIs(t, ds.Sync()[paths[1]], syscall.EIO, "and the other store renamed in")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, rounds, "one round after the first serves both")
}
