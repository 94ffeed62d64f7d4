package rewrite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/jsonl"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// Process (the one worker pool) emits every store in the order given, whatever order the
// workers finish in; a store that cannot be read is a result with ScanErr, never fatal; the
// progress callback sees every byte read (moved from scan.Run's test when that pool went).
func TestProcessOrdersAndRecordsFailures(t *testing.T) {
	dir := t.TempDir()
	var stores []store.Store
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, n), 0o755))
		p := writeSession(t, filepath.Join(dir, n), "s.jsonl", call("1", "mcp__a.b__c"))
		stores = append(stores, jsonl.Open(p, qwen.Session))
	}
	size, err := os.Stat(stores[0].Ref().Path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(stores[1].Ref().Path)) // vanishes after discovery
	var seen int64
	var got []*StoreResult
	_, err = Process(context.Background(), stores, naming.Policy{}, ProcessOptions{ApplyOptions: ApplyOptions{Workers: 2}, Progress: func(n int64) { seen += n }},
		func(r *StoreResult) error { got = append(got, r); return nil })
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, r := range got {
		assert.Equal(t, stores[i].Ref().Path, r.Store.Ref().Path, "emitted in order")
	}
	assert.NoError(t, got[0].ScanErr)
	assert.ErrorIs(t, got[1].ScanErr, os.ErrNotExist)
	assert.Equal(t, 1, got[2].Plan.Count(naming.ActRewrite))
	assert.Equal(t, 2*size.Size(), seen)
}
