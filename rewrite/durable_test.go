package rewrite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
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
