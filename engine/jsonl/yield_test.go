package jsonl_test

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/internal/fileio"
)

// A scan lets waiting goroutines run after each read of its 1 MiB buffer (fileio.Yield): a
// rewrite's commit, back from an fsync, does not wait for the whole scan of the next store. A
// file of 3 MiB and a few bytes yields at least 3 times.
func TestScanYieldsAsItReads(t *testing.T) {
	var yields atomic.Int64
	defer fileio.SetYieldHook(func() { yields.Add(1) })()
	var b bytes.Buffer
	for i := 0; b.Len() < 3<<20+100; i++ {
		b.WriteString(call(strconv.Itoa(i), "mcp__lit__literature.search_pubmed") + "\n")
	}
	p := writeFile(t, t.TempDir(), "s.jsonl", b.Bytes())
	snap := scanFile(t, p, qwen.Session)
	require.NotEmpty(t, snap.Sites)
	assert.GreaterOrEqual(t, yields.Load(), int64(3), "yields during the scan of %d bytes", b.Len())
}
