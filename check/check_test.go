package check

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/agent/codex"
	"github.com/sessionfix/sessionfix/agent/qwen"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

func TestGroupNamesFlat(t *testing.T) {
	ns := &store.Site{Field: "namespace", Name: "mcp__lit", Group: "g"}
	nm := &store.Site{Field: "name", Name: "get_data_for_a_specific_location_and_date_range_extended", Group: "g"}
	now, after, act := groupNames(codex.ID, []naming.Decision{{Site: ns, Action: naming.ActNone}, {Site: nm, Action: naming.ActNone}})
	assert.Equal(t, "mcp__lit__get_data_for_a_specific_location_and_date_range_extended", now)
	assert.Equal(t, now, after)
	assert.Equal(t, naming.ActNone, act)
	// A flat Codex 0.50 name rewritten to namespace (inserted: no Raw) + name.
	ins := &store.Site{Field: "namespace", Group: "h"}
	old := &store.Site{Field: "name", Name: "mcp__foo-bar__deploy.prod", Group: "h"}
	now, after, act = groupNames(codex.ID, []naming.Decision{{Site: old, Action: naming.ActRewrite, New: "deploy_prod"}, {Site: ins, Action: naming.ActRewrite, New: "mcp__foo_bar"}})
	assert.Equal(t, "mcp__foo-bar__deploy.prod", now)
	assert.Equal(t, "mcp__foo_bar__deploy_prod", after)
	assert.Equal(t, naming.ActRewrite, act)
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

// TestQwenReleaseSentAs: a Qwen Code 0.24.x resume sends normalizeMcp of a stored dotted call
// name to OpenAI-compatible endpoints (recorded against fake_openai.py STRICT=1: 0 names
// rejected), but not to Gemini; "stored" checks the bytes as 0.12.0 sends them (the same 5
// names the endpoint rejected).
func TestQwenReleaseSentAs(t *testing.T) {
	snap := qwenSnap("mcp__foo.bar__get_data", "")
	sp := rewrite.PlanStore(nil, snap, naming.Policy{})
	ps := []*provider.Provider{provider.ByID("openai-chat"), provider.ByID("gemini"), provider.ByID("kimi")}

	var stored Result
	require.NoError(t, stored.SetRelease(qwen.ID, "stored"))
	stored.Store(sp, ps)
	require.Len(t, stored.Findings, 1)
	assert.Equal(t, "", stored.Findings[0].Sent)
	assert.Equal(t, 1, stored.Count("openai-chat", false))
	assert.Equal(t, 1, stored.Count("kimi", false))

	var r Result
	require.NoError(t, r.SetRelease(qwen.ID, "0.24.4"))
	r.Store(sp, ps)
	assert.Equal(t, "0.24.4", r.Release)
	// Nothing is rejected: openai-chat and kimi receive mcp__foo_bar__get_data_0xybsnb, Gemini
	// the stored dotted name, which its character set allows.
	assert.Empty(t, r.Findings)

	var old Result
	require.NoError(t, old.SetRelease(qwen.ID, "0.12.0"))
	old.Store(sp, ps)
	require.Len(t, old.Findings, 1)
	assert.Equal(t, "", old.Findings[0].Sent)

	var bad Result
	assert.Error(t, bad.SetRelease(qwen.ID, "newest"))
}

// SetRelease of an agent whose room has no SentAs (every release sends the stored names) is
// an error naming the agent; "stored" is the stored bytes for any agent.
func TestSetReleaseWithoutSentAs(t *testing.T) {
	var r Result
	assert.EqualError(t, r.SetRelease(codex.ID, "1.0"), "codex: no release sends other names than the stored ones")
	require.NoError(t, r.SetRelease(codex.ID, "stored"))
	assert.Equal(t, "", r.Release)
}
