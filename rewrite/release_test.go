package rewrite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// poisonStore is a JSON Lines store whose released sites are overwritten at once with a name
// no file holds: a result, a plan or a rewrite that still read them after the release would
// show it.
type poisonStore struct {
	*jsonl.Store
	released *atomic.Int64
}

func (p poisonStore) ReleaseSites(sites []store.Site) {
	for i := range sites[:cap(sites)] {
		sites[:cap(sites)][i] = store.Site{Name: "POISON", Path: "POISON", Raw: []byte(`"POISON"`), Loc: store.Loc{Offset: -1}}
	}
	p.released.Add(1)
}

// TestReleasedSitesNotReadAgain: the sites of a batched store are handed back to it
// (siteReleaser) only once nothing reads them: each batch after its result was emitted and the
// next batch was planned (checkPairsAcross reads the one before), the joined first batches at
// once, a store planned whole after its result was emitted. The plans' decisions go back to
// freeDecisions at the same points. Scanned and rewritten in parts and whole, no result,
// decision or rewrite sees a released site or another plan's decision.
func TestReleasedSitesNotReadAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Three sessions of 25,000 telemetry names (the engine hands out batches of 10,000 sites)
	// and one of 300 (planned whole), written anew for each round.
	var paths []string
	write := func() {
		paths = paths[:0]
		for i, n := range []int{25_000, 300, 25_000, 25_000} {
			var b strings.Builder
			for j := range n {
				fmt.Fprintf(&b, `{"type":"system","systemPayload":{"uiEvent":{"function_name":"mcp__srv.x__t%d","call_id":"c%d"}}}`+"\n", j%7, j)
			}
			p := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
			require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
			paths = append(paths, p)
		}
	}
	for _, batch := range []int{4_000, 1 << 30} {
		for _, apply := range []bool{false, true} {
			t.Run(fmt.Sprintf("batch=%d/apply=%v", batch, apply), func(t *testing.T) {
				write()
				old := BatchSites
				BatchSites = batch
				defer func() { BatchSites = old }()
				var released atomic.Int64
				stores := make([]store.Store, len(paths))
				for i, p := range paths {
					stores[i] = poisonStore{Store: jsonl.Open(p, qwen.Session), released: &released}
				}
				rewrites := 0
				res, err := Process(ctx, stores, naming.Policy{}, ProcessOptions{Apply: apply, ApplyOptions: ApplyOptions{StateDir: filepath.Join(dir, "state"), Workers: 2}},
					func(r *StoreResult) error {
						require.NoError(t, r.ScanErr)
						// Each decision is its plan's own (pooled decisions are not given back
						// before the result was emitted): one per site, pointing into the
						// plan's sites, in order.
						sites := r.Plan.Snap.Sites
						if r.Batch == nil || !r.Batch.Last {
							require.Len(t, r.Plan.Decisions, len(sites))
						}
						for i, d := range r.Plan.Decisions {
							require.Same(t, &sites[i], d.Site, "decision %d", i)
							require.NotEqual(t, "POISON", d.Site.Name)
							require.True(t, strings.HasPrefix(d.Site.Name, "mcp__srv.x__t"), d.Site.Name)
							require.Positive(t, d.Site.Loc.Offset)
						}
						rewrites += r.Plan.Count(naming.ActRewrite)
						if r.Outcome != nil {
							require.NoError(t, r.Outcome.Err)
						}
						return nil
					})
				require.NoError(t, err)
				if !apply {
					assert.Equal(t, 75_300, rewrites)
					assert.Positive(t, released.Load())
					return
				}
				assert.Equal(t, 75_300, rewrites)
				assert.Equal(t, 4, res.Files)
				for _, p := range paths {
					b, err := os.ReadFile(p)
					require.NoError(t, err)
					assert.False(t, strings.Contains(string(b), "POISON"), p)
					assert.False(t, strings.Contains(string(b), "mcp__srv.x"), p)
					assert.Equal(t, strings.Count(string(b), "\n"), strings.Count(string(b), `"function_name":"mcp__srv_x__t`), p)
				}
			})
		}
	}
}
