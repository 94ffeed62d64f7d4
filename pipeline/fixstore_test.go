package pipeline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// TestFixStoreRowsLimit: FixStoreRows builds at most limit rows, the first ones, counts every
// row FixStoreOf builds (actionless decisions only with verbose), and with a negative limit
// is FixStoreOf.
func TestFixStoreRowsLimit(t *testing.T) {
	sites := make([]store.Site, 12)
	for i := range sites {
		n := fmt.Sprintf("mcp__srv__t.%d", i)
		if i%4 == 3 {
			n = fmt.Sprintf("mcp__srv__t_%d", i) // clean: no row without verbose
		}
		sites[i] = store.Site{Name: n, Raw: []byte(`"` + n + `"`), Loc: store.Loc{Line: int64(i + 1), Offset: int64(i * 10)}, Kind: store.SiteCall}
	}
	snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Sites: sites}
	plan := &rewrite.StorePlan{Store: jsonl.Open("/x/s.jsonl", qwen.Session), Snap: snap, Decisions: naming.NormalizeMcp{}.Decide(snap, naming.Policy{})}
	r := &rewrite.StoreResult{Store: plan.Store, Plan: plan}
	all, _ := FixStoreOf(r, true, false)
	assert.Len(t, all.Decisions, 9)
	fs, _, rows := FixStoreRows(r, true, false, 4)
	assert.Equal(t, 9, rows)
	assert.Equal(t, all.Decisions[:4], fs.Decisions)
	fs, _, rows = FixStoreRows(r, true, false, -1)
	assert.Equal(t, 9, rows)
	assert.Equal(t, all, fs)
	fs, _, rows = FixStoreRows(r, true, true, 0)
	assert.Equal(t, 12, rows, "verbose: every decision")
	assert.Empty(t, fs.Decisions)
	fs, _, rows = FixStoreRows(r, false, false, -1)
	assert.Zero(t, rows)
	assert.Empty(t, fs.Decisions)
}
