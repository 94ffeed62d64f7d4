package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// fixtureKeys are the server keys of fixtures/claude-real/mcp-config.json.
var fixtureKeys = []ClaudeKey{{Key: "lit", Source: "mcp-config.json"}, {Key: "foo.bar", Source: "mcp-config.json"},
	{Key: "com.example.enterprise-search-platform", Source: "mcp-config.json"}, {Key: "my server", Source: "mcp-config.json"}}

// policyWith is a naming.Policy whose Claude Code part is cp.
func policyWith(cp ClaudePolicy) naming.Policy {
	var pol naming.Policy
	naming.SetAgent(&pol, ID, &naming.PathPolicy[ClaudePolicy]{Default: cp})
	return pol
}

// TestClaudeSelectQuery: a ToolSearch select: list is rewritten as a whole, each listed name
// decided as its tool_use would be.
func TestClaudeSelectQuery(t *testing.T) {
	q := "select:mcp__foo_bar__deploy.prod,mcp__lit__ok_tool,mcp__lit__get+data"
	snap := &store.Snapshot{Agent: ID, Sites: []store.Site{
		{Kind: ClaudeSiteSelect, Name: q, Raw: []byte(`"` + q + `"`), Loc: store.Loc{Line: 1, Offset: 10}},
		{Kind: ClaudeSiteReference, Name: "mcp__foo_bar__deploy.prod", Raw: []byte(`"mcp__foo_bar__deploy.prod"`), Loc: store.Loc{Line: 2, Offset: 200}},
		{Kind: ClaudeSiteDeferred, Name: "mcp__foo.bar__deploy.prod", Raw: []byte(`"mcp__foo.bar__deploy.prod"`), Loc: store.Loc{Line: 3, Offset: 300}},
	}}
	ds := claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: fixtureKeys}))
	require.Len(t, ds, 3)
	assert.Equal(t, naming.ActRewrite, ds[0].Action)
	assert.Equal(t, "select:mcp__foo_bar__deploy_prod,mcp__lit__ok_tool,mcp__lit__get_data", ds[0].New)
	assert.Equal(t, "mcp__foo_bar__deploy_prod", ds[1].New)
	// No version known: every era is tried, so the raw-era spelling of 1.0.0 is attributed too.
	assert.Equal(t, "mcp__foo_bar__deploy_prod", ds[2].New)
	// A keyword search is not a list of names.
	snap.Sites = snap.Sites[:1]
	snap.Sites[0].Name = "deploy tools"
	assert.Equal(t, naming.ActNone, claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: fixtureKeys}))[0].Action)
}

// TestClaudeAmbiguousKeys: two server keys that normalize alike make a name written before
// tools were normalized the current name of two tools — if both servers still have the tool x.y,
// which the keys alone cannot tell: may be shared (claude-may-share, issue 23 item 10), kept
// without --allow-shared, saying --discover lists the tools. With the tool lists (an inventory
// listing x.y on both servers) it is surely shared (claude-shared).
func TestClaudeAmbiguousKeys(t *testing.T) {
	snap := &store.Snapshot{Agent: ID, Sites: []store.Site{{Kind: store.SiteCall, Name: "mcp__foo_bar__x.y", Raw: []byte(`"mcp__foo_bar__x.y"`)}}}
	store.SetState(snap, &ClaudeMeta{Versions: []ClaudeVersionFrom{{Line: 0, Version: "1.0.51"}}})
	keys := []ClaudeKey{{Key: "foo.bar", Source: "a"}, {Key: "foo_bar", Source: "b"}}
	d := claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: keys}))[0]
	assert.Equal(t, ClassClaudeMayShare, d.Class)
	assert.Equal(t, naming.ActKeep, d.Action)
	assert.True(t, d.KeepsRejected())
	assert.Contains(t, d.Note, "may be shared: the servers' tool lists are unknown (foo.bar/x.y, foo_bar/x.y known from the sessions only); --discover lists them: ")
	assert.Contains(t, d.Note, "foo.bar/x.y, foo_bar/x.y")

	tools := []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "x.y"}, {Server: "foo_bar", Tool: "x.y"}}
	d = claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: keys, Tools: tools}))[0]
	assert.Equal(t, ClassClaudeShared, d.Class)
	assert.NotContains(t, d.Note, "may be shared")

	d = claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: keys, AllowShared: true}))[0]
	assert.Equal(t, ClassClaudeMayShare, d.Class)
	assert.Equal(t, naming.ActRewrite, d.Action, "--allow-shared rewrites a name that may be shared too")
	assert.Equal(t, "mcp__foo_bar__x_y", d.New)
}

// TestClaudeTwoRawToolsOneStoredName: 1.0.51 normalized the server only, so foo.bar/deploy.prod
// and foo_bar/deploy.prod were both stored as mcp__foo_bar__deploy.prod. The note must not
// attribute the call to one of them (review3 D): it names both, and the decision is the same
// shared-name verdict (kept; rewritten only with --allow-shared, to the name both share now).
func TestClaudeTwoRawToolsOneStoredName(t *testing.T) {
	snap := &store.Snapshot{Agent: ID, Sites: []store.Site{{Kind: store.SiteCall, Name: "mcp__foo_bar__deploy.prod", Raw: []byte(`"mcp__foo_bar__deploy.prod"`)}}}
	store.SetState(snap, &ClaudeMeta{Versions: []ClaudeVersionFrom{{Line: 0, Version: "1.0.51"}}})
	cp := ClaudePolicy{ToolsSource: "inv.json", Tools: []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}, {Server: "foo_bar", Tool: "deploy.prod"}}}
	d := claudeNamer{}.Decide(snap, policyWith(cp))[0]
	assert.Equal(t, ClassClaudeShared, d.Class)
	assert.Equal(t, naming.ActKeep, d.Action)
	assert.Contains(t, d.Note, "raw identity foo.bar/deploy.prod or foo_bar/deploy.prod (the stored name fits both) from inv.json")
	assert.NotContains(t, d.Note, "raw identity foo.bar/deploy.prod from")

	cp.AllowShared = true
	d = claudeNamer{}.Decide(snap, policyWith(cp))[0]
	assert.Equal(t, naming.ActRewrite, d.Action)
	assert.Equal(t, "mcp__foo_bar__deploy_prod", d.New)
	assert.Contains(t, d.Note, "raw identity foo.bar/deploy.prod or foo_bar/deploy.prod (the stored name fits both) from inv.json")
}

// TestClaudeCurrentNameOfTwoRawTools: a stored name that is already the current name of two raw
// tools is reported as written for either, not for the first one listed.
func TestClaudeCurrentNameOfTwoRawTools(t *testing.T) {
	snap := &store.Snapshot{Agent: ID, Sites: []store.Site{{Kind: store.SiteCall, Name: "mcp__foo_bar__x_y", Raw: []byte(`"mcp__foo_bar__x_y"`)}}}
	cp := ClaudePolicy{ToolsSource: "inv.json", Tools: []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "x_y"}, {Server: "foo_bar", Tool: "x_y"}}}
	d := claudeNamer{}.Decide(snap, policyWith(cp))[0]
	assert.Equal(t, ClassClaudeShared, d.Class)
	assert.Contains(t, d.Note, "; this name was written for foo_bar/x_y or foo.bar/x_y")
	assert.NotContains(t, d.Note, "written for foo_bar/x_y;")
}
