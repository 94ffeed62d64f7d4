package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
// tools were normalized the current name of two tools: shared, kept without --allow-shared.
func TestClaudeAmbiguousKeys(t *testing.T) {
	snap := &store.Snapshot{Agent: ID, Sites: []store.Site{{Kind: store.SiteCall, Name: "mcp__foo_bar__x.y", Raw: []byte(`"mcp__foo_bar__x.y"`)}}}
	store.SetState(snap, &ClaudeMeta{Versions: []ClaudeVersionFrom{{Line: 0, Version: "1.0.51"}}})
	keys := []ClaudeKey{{Key: "foo.bar", Source: "a"}, {Key: "foo_bar", Source: "b"}}
	d := claudeNamer{}.Decide(snap, policyWith(ClaudePolicy{Keys: keys}))[0]
	assert.Equal(t, ClassClaudeShared, d.Class)
	assert.Equal(t, naming.ActKeep, d.Action)
	assert.Contains(t, d.Note, "foo.bar/x.y, foo_bar/x.y")
}
