package rewrite

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// checkPairsAcross reads the counts and the index of calls that checkPairsOf made of both
// batches (as planStore leaves them) instead of going over their decisions again: comparing a
// batch of 2,000 responses with the batch before allocates nothing (no map is built), and
// warns exactly as with plans checked from scratch.
func TestCheckPairsAcrossReusesIndexes(t *testing.T) {
	plan := func(sites []store.Site) *StorePlan {
		sp := &StorePlan{}
		for i := range sites {
			sp.Decisions = append(sp.Decisions, naming.Decision{Site: &sites[i], Action: naming.ActNone})
		}
		return sp
	}
	var prevSites, curSites []store.Site
	for i := range 2000 {
		id := fmt.Sprintf("call_%d", i%100)
		prevSites = append(prevSites, store.Site{Kind: store.SiteCall, CallID: id, Name: "mcp__s__" + id, Loc: store.Loc{Line: int64(i + 1)}},
			store.Site{Kind: store.SiteResponse, CallID: id, Name: "mcp__s__" + id, Loc: store.Loc{Line: int64(i + 1)}})
		name := "mcp__s__" + id
		if i == 1500 {
			name = "mcp__s__other"
		}
		// responses whose calls are in the batch before (ids past the batch's own calls)
		curSites = append(curSites, store.Site{Kind: store.SiteResponse, CallID: id, Name: name, Loc: store.Loc{Line: int64(3000 + i)}})
	}
	prev, cur := plan(prevSites), plan(curSites)
	checkPairs(prev)
	checkPairs(cur)
	require.Empty(t, prev.Warnings)
	checkPairsAcross(prev, cur)
	require.Len(t, cur.Warnings, 1)
	assert.Equal(t, `response "mcp__s__other" of call id call_0 ends as "mcp__s__other" but its call (line 1901) ends as "mcp__s__call_0"`, cur.Warnings[0].Reason)

	fresh, freshPrev := plan(curSites), plan(prevSites) // never checked: no counts, no index
	checkPairsAcross(freshPrev, fresh)
	assert.Equal(t, cur.Warnings, fresh.Warnings)

	cur.Warnings = nil
	curSites[1500].Name = "mcp__s__call_0" // every response agrees: no warning allocates
	if !raceEnabled {
		allocs := testing.AllocsPerRun(5, func() { checkPairsAcross(prev, cur) })
		assert.Zero(t, allocs, "the batches' counts and indexes are reused")
	}
	require.Empty(t, cur.Warnings)
}

// planStore drops the index of calls checkPairsOf made when it then sorts the decisions (the
// index points at decisions by their place): the next batch is compared with the calls
// themselves, not with what took their places.
func TestCheckPairsAcrossAfterSort(t *testing.T) {
	snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Agent: qwen.ID}
	add := func(kind store.SiteKind, off int64, id, name string) {
		snap.Sites = append(snap.Sites, store.Site{Kind: kind, CallID: id, Name: name, Raw: []byte(`"` + name + `"`), Loc: store.Loc{Line: off, Offset: off}})
	}
	// out of position order: sorted after checkPairsOf built the index of calls x and y
	add(store.SiteCall, 30, "x", "mcp__s__a")
	add(store.SiteCall, 20, "y", "mcp__s__b")
	add(store.SiteResponse, 10, "q", "mcp__s__c")
	for _, pooled := range []bool{false, true} {
		prev := planStore(nil, snap, naming.Policy{}, pooled)
		require.Equal(t, int64(10), prev.Decisions[0].Site.Loc.Offset, "sorted")
		cur := &StorePlan{}
		resp := []store.Site{{Kind: store.SiteResponse, CallID: "x", Name: "mcp__s__a"}, {Kind: store.SiteResponse, CallID: "y", Name: "mcp__s__z"}}
		for i := range resp {
			cur.Decisions = append(cur.Decisions, naming.Decision{Site: &resp[i], Action: naming.ActNone})
		}
		checkPairs(cur)
		checkPairsAcross(prev, cur)
		require.Len(t, cur.Warnings, 1, "pooled %v: %v", pooled, cur.Warnings)
		assert.Equal(t, `response "mcp__s__z" of call id y ends as "mcp__s__z" but its call (line 20) ends as "mcp__s__b"`, cur.Warnings[0].Reason)
		prev.release()
	}
}

// A plan PlanStore returns holds no index of calls (only the next batch of a store planned
// batch by batch reads it): the map is not kept alive with the plan.
func TestPlanStoreKeepsNoCallIndex(t *testing.T) {
	snap := &store.Snapshot{Ref: store.Ref{Path: "/x/s.jsonl", Kind: qwen.KindSession}, Agent: qwen.ID}
	for i, k := range []store.SiteKind{store.SiteCall, store.SiteResponse} {
		n := "mcp__s__t"
		snap.Sites = append(snap.Sites, store.Site{Kind: k, CallID: "x", Name: n, Raw: []byte(`"` + n + `"`), Loc: store.Loc{Line: int64(i + 1), Offset: int64(10 * i)}})
	}
	sp := PlanStore(nil, snap, naming.Policy{})
	require.Len(t, sp.Decisions, 2)
	assert.Nil(t, sp.calls)
	assert.Equal(t, pairSites{responses: 1, liveCalls: 1}, sp.pairSites())
}
