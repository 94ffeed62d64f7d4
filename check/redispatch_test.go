package check

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// qwenSnap is a Qwen Code store holding one call of name (record line 3, as in the 0.12.0
// session of fixtures/qwen-real) and, when server is not "", its telemetry record naming the
// server (line 4, ui_telemetry mcp_server_name).
func qwenSnap(name, server string) *store.Snapshot {
	snap := &store.Snapshot{Ref: store.Ref{Path: "s.jsonl", Kind: "qwen-session"}, Agent: qwen.ID}
	snap.Sites = append(snap.Sites, store.Site{Loc: store.Loc{Line: 3}, Kind: store.SiteCall, Path: "message.parts[0].functionCall.name", Name: name, Raw: []byte(`"` + name + `"`)})
	if server != "" {
		snap.Sites = append(snap.Sites, store.Site{Loc: store.Loc{Line: 4}, Kind: store.SiteTelemetry, Path: "systemPayload.uiEvent.function_name", Name: name, Server: server, Raw: []byte(`"` + name + `"`)})
	}
	return snap
}

// TestQwenRedispatches: legacy (0.12.0) flattened foo:bar's key to foo_bar; with foo_bar
// configured too, the stored call is foo_bar/x's own registered name today. The telemetry
// names the server that was called: redispatch; without it: ambiguous (two tools spell it).
// The fix plan leaves the name (provider-safe) and says so.
func TestQwenRedispatches(t *testing.T) {
	tools := NewInventoryTools(map[string][]string{"foo:bar": {"x"}, "foo_bar": {"x"}, "lit": {"ok_tool"}})
	lk := &Lookup{Inventory: tools, InventorySource: "inv.json"}
	ix := mcpname.NewIndex("mcp__foo:bar__x", "mcp__foo_bar__x", "mcp__lit__ok_tool")

	sp := rewrite.PlanStore(nil, qwenSnap("mcp__foo_bar__x", "foo:bar"), naming.Policy{Index: ix})
	got := Redispatches(sp, lk)
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, "redispatch", r.Class)
	assert.Equal(t, &Tool{Server: "foo:bar", Tool: "x"}, r.Called)
	assert.Equal(t, `telemetry mcp_server_name "foo:bar", line 4`, r.CalledFrom)
	assert.Equal(t, []Tool{{Server: "foo_bar", Tool: "x"}}, r.Reaches)
	assert.Equal(t, int64(3), r.Loc.Line)
	assert.Equal(t, "Qwen Code sends the stored call mcp__foo_bar__x as it is (provider-safe), the registered name of foo_bar/x (normalize(mcp__foo_bar__x)); the call was foo:bar/x (the stored name is the legacy spelling of foo:bar/x, where ':' flattened to '_')", r.Rule)
	assert.Contains(t, r.Fix, "fix leaves it: renaming the call to another tool's name")
	assert.Equal(t, naming.ActNone, sp.Decisions[0].Action, "never rewritten")

	sp = rewrite.PlanStore(nil, qwenSnap("mcp__foo_bar__x", ""), naming.Policy{Index: ix})
	got = Redispatches(sp, lk)
	require.Len(t, got, 1)
	assert.Equal(t, "ambiguous", got[0].Class)
	assert.Nil(t, got[0].Called)
	assert.Equal(t, []Tool{{Server: "foo:bar", Tool: "x"}, {Server: "foo_bar", Tool: "x"}}, got[0].Candidates)

	// A call that reaches the tool it called, or no tool at all, is no finding; nor is any call
	// without an inventory.
	assert.Empty(t, Redispatches(rewrite.PlanStore(nil, qwenSnap("mcp__lit__ok_tool", "lit"), naming.Policy{Index: ix}), lk))
	assert.Empty(t, Redispatches(rewrite.PlanStore(nil, qwenSnap("mcp__gone__x", "gone"), naming.Policy{Index: ix}), lk))
	assert.Empty(t, Redispatches(sp, &Lookup{}))
}
