package check

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/codex"
)

func TestGroupNamesFlat(t *testing.T) {
	ns := &store.Site{Field: "namespace", Name: "mcp__lit", Group: "g"}
	nm := &store.Site{Field: "name", Name: "get_data_for_a_specific_location_and_date_range_extended", Group: "g"}
	now, after, act := groupNames(codex.ID, []rewrite.Decision{{Site: ns, Action: rewrite.ActNone}, {Site: nm, Action: rewrite.ActNone}})
	assert.Equal(t, "mcp__lit__get_data_for_a_specific_location_and_date_range_extended", now)
	assert.Equal(t, now, after)
	assert.Equal(t, rewrite.ActNone, act)
	// A flat Codex 0.50 name rewritten to namespace (inserted: no Raw) + name.
	ins := &store.Site{Field: "namespace", Group: "h"}
	old := &store.Site{Field: "name", Name: "mcp__foo-bar__deploy.prod", Group: "h"}
	now, after, act = groupNames(codex.ID, []rewrite.Decision{{Site: old, Action: rewrite.ActRewrite, New: "deploy_prod"}, {Site: ins, Action: rewrite.ActRewrite, New: "mcp__foo_bar"}})
	assert.Equal(t, "mcp__foo-bar__deploy.prod", now)
	assert.Equal(t, "mcp__foo_bar__deploy_prod", after)
	assert.Equal(t, rewrite.ActRewrite, act)
}

func TestDeclaredAndCount(t *testing.T) {
	var r Result
	ps := []*provider.Provider{provider.ByID("dashscope"), provider.ByID("kimi")}
	r.Declared("declared", []string{"search", "ok_tool", "_x"}, ps)
	assert.Equal(t, 3, r.Checked)
	assert.Len(t, r.Findings, 2)
	assert.Equal(t, 1, r.Count("dashscope", false))
	assert.Equal(t, 1, r.Count("kimi", true))
	assert.Equal(t, "reserved", r.Findings[0].Now[0].Rules[0].Rule)
}

// TestClaudeSitesSent: of a Claude Code session, tool_use and tool_reference names are sent as
// tool names; a ToolSearch select: list and the deferred-tool names reach the model as text, and
// free-text names are read-only: none of those is checked.
func TestClaudeSitesSent(t *testing.T) {
	assert.True(t, sent(&store.Site{Kind: store.SiteCall}))
	assert.True(t, sent(&store.Site{Kind: claude.ClaudeSiteReference}))
	assert.False(t, sent(&store.Site{Kind: claude.ClaudeSiteSelect}))
	assert.False(t, sent(&store.Site{Kind: claude.ClaudeSiteDeferred}))
	assert.False(t, sent(&store.Site{Kind: claude.ClaudeSiteText, ReadOnly: true}))
}
