package fileio

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// drainWriters empties the free list of write buffers (a test's starting point).
func drainWriters() {
	for {
		select {
		case <-writers:
		default:
			return
		}
	}
}

// The write buffers of finished rewrites outlive garbage collections (red before: a sync.Pool,
// empty after two, so that under cmd/sessionfix's memory limit most rewrites allocated their
// 256 KiB again).
func TestWriteBuffersOutliveCollections(t *testing.T) {
	drainWriters()
	w := getWriter(io.Discard)
	putWriter(w)
	runtime.GC()
	runtime.GC()
	assert.Same(t, w, getWriter(io.Discard), "the buffer given back is handed out again")
}

// A rewrite gives its write buffers back once the copy is flushed, before it waits for its
// fsyncs and journal line (BeforeCommit): a rewrite waiting for the disk holds none (red
// before: held until the rename was done).
func TestRewriteGivesBuffersBackBeforeTheCommit(t *testing.T) {
	drainWriters()
	defer drainWriters()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("abc\n"), 0o600))
	kept := -1
	_, err := RewriteFile(context.Background(), p, stateOf(t, p), upper, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk", "1"),
		BeforeCommit: func(ch *store.Change) error {
			kept = len(writers)
			return upperSites(ch)
		}})
	require.NoError(t, err)
	assert.Equal(t, 1, kept, "the temp's write buffer is back when the change is journaled (the backup is a link: no buffer)")
}
