package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
)

// TestFixRefusesAStoreChangedInPlaceSinceTheScan: a session changed between the scan and its
// rewrite in one byte outside every name, with its size and mtime as they were, is refused as
// in use (exit 4, "content changed since it was scanned") and keeps the changed bytes; only the
// content checksum the rewrite compares with the scan's (manifest version 4: the scan's
// CRC-32C, computed in the pass that records the original's XXH3-128) can tell. The check is
// the rewrite's (fileio.rewriteFile), made after the scan, the size and mtime check and the
// backup link, before the rename. The change is made when the run writes its first manifest
// (the run starts on the first store to rewrite: after its scan, before its rewrite opens it);
// until the temp was written without a name, the hook was the temp's journaled announcement,
// which now follows the copy.
func TestFixRefusesAStoreChangedInPlaceSinceTheScan(t *testing.T) {
	env := testEnv(t)
	// The target alone, so that the run starts (its first manifest) after the target's scan
	// and before its rewrite reads it.
	dir := filepath.Join(t.TempDir(), "dot-qwen")
	target := filepath.Join(dir, faultTarget)
	orig, err := os.ReadFile(filepath.Join("../../fixtures/qwen-real/dot-qwen", faultTarget))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, orig, 0o640))
	state := filepath.Join(t.TempDir(), "S")
	fi, err := os.Stat(target)
	require.NoError(t, err)
	// One letter of the first text part, outside every name token.
	i := bytes.Index(orig, []byte(`"text":"`))
	require.Positive(t, i)
	i += len(`"text":"`)
	changed := bytes.Clone(orig)
	changed[i] ^= 0x20 // a letter's case
	require.NotEqual(t, orig[i], changed[i])

	var done atomic.Bool
	// The run's first manifest is written before the rewrite reads the original: after the
	// scan.
	restore := fileio.SetFaultHook(func(op, path string) error {
		if op == fileio.FaultWrite && filepath.Base(path) == "manifest.json" && !done.Swap(true) {
			// a worker's goroutine: assert, not require
			assert.NoError(t, os.WriteFile(target, changed, 0o640))
			assert.NoError(t, os.Chtimes(target, fi.ModTime(), fi.ModTime()))
		}
		return nil
	})
	r := runCLI(t, env, "", "fix", "--apply", "--yes", "--state-dir", state, dir)
	restore()
	require.True(t, done.Load(), "the hook ran")
	assert.Equal(t, exitcode.InUse, r.code, r.out+r.err)
	assert.Contains(t, r.err, target)
	assert.Contains(t, r.err, "content changed since it was scanned")
	got, _ := os.ReadFile(target)
	assert.True(t, bytes.Equal(changed, got), "the changed session is left as it is")
	now, err := os.Stat(target)
	require.NoError(t, err)
	assert.True(t, now.ModTime().Equal(fi.ModTime()))
	ents, _ := os.ReadDir(filepath.Dir(target))
	assert.Len(t, ents, 1, "no temp or keep file is left beside the session")
}
