package naming

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// TestNormalizeMcpIsShared: the normalizeMcp rule is a Namer of naming itself, so any room can
// set it as its Agent.Namer (rooms never import each other): a dotted name is rewritten to
// normalizeMcp's name, a provider-safe one is left alone, a middle-truncated dotted one is kept
// with KeepTruncated.
func TestNormalizeMcpIsShared(t *testing.T) {
	var n Namer = NormalizeMcp{}
	trunc := "mcp__com.example.enterprise-___documents_by_semantic_similarity"
	snap := &store.Snapshot{Sites: []store.Site{{Name: "mcp__srv__tool.x"}, {Name: "mcp__srv__tool_y"}, {Name: trunc}}}
	ds := n.Decide(snap, Policy{})
	require.Len(t, ds, 3)
	assert.Equal(t, mcpname.ClassLegacyDotted, ds[0].Class)
	assert.Equal(t, ActRewrite, ds[0].Action)
	assert.Equal(t, "mcp__srv__tool_x_03uldg8", ds[0].New)
	assert.Equal(t, "normalizeMcp", ds[0].Source)
	assert.Equal(t, ActNone, ds[1].Action)
	assert.Equal(t, ActRewrite, ds[2].Action)
	ds = n.Decide(snap, Policy{KeepTruncated: true})
	assert.Equal(t, ActKeep, ds[2].Action)
	assert.Equal(t, ActRewrite, ds[0].Action)
}

// The memos that find a name by its string give the decisions the map lookups give: sites
// sharing one string per name (as engine/jsonl's scan makes them), more distinct names than
// memo slots, equal names made apart, empty names and read-only sites, compared with the same
// store whose every name is its own string (the memos never match: the maps decide).
func TestNormalizeMcpMemoSameAsMaps(t *testing.T) {
	names := []string{"", "mcp__srv__tool.x", "mcp__srv__tool_y", "mcp__com.example.enterprise-___documents_by_semantic_similarity",
		"mcp__lit__literature.search_pubmed", "mcp__lit__literature_search_pubmed", "mcp__srv__tool_x_03uldg8"}
	for i := range 3 * memoSlots {
		names = append(names, fmt.Sprintf("mcp__s%d__t.%d", i%7, i), fmt.Sprintf("mcp__s%d__t_%d", i%5, i))
	}
	var shared []store.Site
	for i := range 20 * len(names) {
		name := names[(i*7+i/len(names))%len(names)]
		if i%11 == 0 {
			name = strings.Clone(name) // equal to a shared one, made apart
		}
		shared = append(shared, store.Site{Name: name, ReadOnly: i%13 == 0})
	}
	for i := range 2000 { // a few names over and over: the memos find nearly all
		shared = append(shared, store.Site{Name: names[i%7], ReadOnly: i%3 == 0})
	}
	apart := make([]store.Site, len(shared))
	for i, s := range shared {
		s.Name = strings.Clone(s.Name)
		apart[i] = s
	}
	for _, pol := range []Policy{{}, {KeepTruncated: true}} {
		got := NormalizeMcp{}.Decide(&store.Snapshot{Sites: shared}, pol)
		want := NormalizeMcp{}.Decide(&store.Snapshot{Sites: apart}, pol)
		require.Len(t, got, len(want))
		rewrites := 0
		for i := range got {
			require.Same(t, &shared[i], got[i].Site)
			g, w := got[i], want[i]
			g.Site, w.Site = nil, nil
			require.Equal(t, w, g, "site %d (%q)", i, shared[i].Name)
			if g.Action == ActRewrite {
				rewrites++
			}
		}
		assert.Greater(t, rewrites, len(got)/4, "dotted names are rewritten")
	}
}
