package fileio

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// The copy pass of a rewrite lets waiting goroutines run after each read once YieldEvery bytes
// were read since it last did (Yield): a transform reading 64 KiB at a time yields once per
// 4 × 64 KiB, 4 times over a file of 4 × YieldEvery bytes and a few.
func TestRewriteFileYieldsAsItCopies(t *testing.T) {
	var yields atomic.Int64
	defer SetYieldHook(func() { yields.Add(1) })()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	content := bytes.Repeat([]byte("abc\n"), YieldEvery+25) // 4 × YieldEvery + 100 bytes
	require.NoError(t, os.WriteFile(p, content, 0o600))
	copy64k := func(dst io.Writer, src io.Reader) error {
		_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 64<<10))
		return err
	}
	_, err := RewriteFile(context.Background(), p, stateOf(t, p), copy64k, store.ApplyOptions{BackupPath: filepath.Join(dir, "bk")})
	require.NoError(t, err)
	assert.Equal(t, int64(4), yields.Load(), "yields during the copy pass")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, content, b)
}

func TestYieldCallsTheHookOnlyWhileSet(t *testing.T) {
	Yield() // returns: runtime.Gosched
	var n int
	restore := SetYieldHook(func() { n++ })
	Yield()
	restore()
	Yield()
	assert.Equal(t, 1, n)
}
