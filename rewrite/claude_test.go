package rewrite

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

const claudeFx = "../fixtures/claude-real/dot-claude/projects/"

// claudeFixtureKeys are the server keys of fixtures/claude-real/mcp-config.json.
var claudeFixtureKeys = []claude.ClaudeKey{{Key: "lit", Source: "mcp-config.json"}, {Key: "foo.bar", Source: "mcp-config.json"},
	{Key: "com.example.enterprise-search-platform", Source: "mcp-config.json"}, {Key: "my server", Source: "mcp-config.json"}}

var claudeFixtureTools = []mcpname.ClaudeTool{
	{Server: "lit", Tool: "literature.search_pubmed"}, {Server: "lit", Tool: "literature_search_pubmed"}, {Server: "lit", Tool: "get+data"}, {Server: "lit", Tool: "搜索文献"},
	{Server: "lit", Tool: "get_data_for_a_specific_location_and_date_range_extended_with_more_words"}, {Server: "lit", Tool: "ok_tool"},
	{Server: "foo.bar", Tool: "get_data"}, {Server: "foo.bar", Tool: "deploy.prod"},
	{Server: "com.example.enterprise-search-platform", Tool: "query_documents_by_semantic_similarity_and_rank"}, {Server: "my server", Tool: "ping"},
}

// claudePolicy is a Policy whose Claude Code part is cp (the default of every session).
func claudePolicy(cp claude.ClaudePolicy) naming.Policy {
	var pol naming.Policy
	naming.SetAgent(&pol, claude.ID, &naming.PathPolicy[claude.ClaudePolicy]{Default: cp})
	return pol
}

func planClaude(t *testing.T, rel string, cp claude.ClaudePolicy) *StorePlan {
	t.Helper()
	st := jsonl.Open(claudeFx+rel, claude.Session)
	snap, err := st.Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	return PlanStore(st, snap, claudePolicy(cp))
}

// verdicts maps each stored name to "action class new" (all sites of a name agree).
func verdicts(t *testing.T, sp *StorePlan) map[string]string {
	out := map[string]string{}
	for _, d := range sp.Decisions {
		v := strings.TrimSpace(string(d.Action) + " " + string(d.Class) + " " + d.New)
		if prev, ok := out[d.Site.Name]; ok && d.Site.Kind != claude.ClaudeSiteText {
			assert.Equal(t, prev, v, d.Site.Name)
		}
		if d.Site.Kind != claude.ClaudeSiteText {
			out[d.Site.Name] = v
		}
	}
	return out
}

// TestClaudeRepair1051: the 1.0.51 session as 2.1.332 would name it. With the server keys of
// --mcp-config (or the inventory) the dotted, "+" and CJK tool names get their 2.1.332 names;
// mcp__lit__literature.search_pubmed now normalizes to the name literature_search_pubmed has, so
// it is rewritten only with --allow-shared, and the raw literature_search_pubmed call is reported
// as shared (it reaches literature.search_pubmed now); the 82- and 92-unit names are kept with
// the providers that reject them; nothing is attributed without keys or inventory.
func TestClaudeRepair1051(t *testing.T) {
	rel := "-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl"
	want := map[string]string{
		"mcp__foo_bar__get_data":             "none clean",
		"mcp__foo_bar__deploy.prod":          "rewrite claude-renamed mcp__foo_bar__deploy_prod",
		"mcp__my_server__ping":               "none clean",
		"mcp__lit__literature.search_pubmed": "keep claude-shared",
		"mcp__lit__literature_search_pubmed": "keep claude-shared",
		"mcp__lit__get+data":                 "rewrite claude-renamed mcp__lit__get_data",
		"mcp__lit__搜索文献":                     "rewrite claude-renamed mcp__lit______",
		"mcp__lit__ok_tool":                  "none clean",
		"mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank": "keep claude-over-long",
		"mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words":           "keep claude-over-long",
	}
	for name, cp := range map[string]claude.ClaudePolicy{
		"server keys": {Keys: claudeFixtureKeys},
		"inventory":   {Tools: claudeFixtureTools, ToolsSource: "inventory.json"},
	} {
		sp := planClaude(t, rel, cp)
		w := want
		if cp.Tools == nil {
			// Server keys only: whether literature_search_pubmed is still a tool of lit is
			// unknown, so the names may be shared (issue 23 item 10), counted apart.
			w = maps.Clone(want)
			w["mcp__lit__literature.search_pubmed"] = "keep claude-may-share"
			w["mcp__lit__literature_search_pubmed"] = "keep claude-may-share"
		}
		assert.Equal(t, w, verdicts(t, sp), name)
		assert.Equal(t, 3, sp.Count(naming.ActRewrite), name)
		for _, d := range sp.Decisions {
			switch d.Site.Name {
			case "mcp__lit__literature.search_pubmed":
				assert.Contains(t, d.Note, "lit/literature.search_pubmed, lit/literature_search_pubmed", name)
				assert.Contains(t, d.Note, "--allow-shared", name)
			case "mcp__lit__literature_search_pubmed":
				assert.Contains(t, d.Note, "written for lit/literature_search_pubmed, which can no longer be called under it", name)
			case "mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words":
				assert.Contains(t, d.Note, "82 units", name)
				assert.Contains(t, d.Note, "bedrock (82 code points > 64)", name)
				assert.NotContains(t, d.Note, "xai", "xAI has no 64 limit")
			}
		}
		shared := planClaude(t, rel, claude.ClaudePolicy{Keys: cp.Keys, Tools: cp.Tools, AllowShared: true})
		assert.Equal(t, 4, shared.Count(naming.ActRewrite), name)
		class := "claude-shared"
		if cp.Tools == nil {
			class = "claude-may-share"
		}
		assert.Equal(t, "rewrite "+class+" mcp__lit__literature_search_pubmed", verdicts(t, shared)["mcp__lit__literature.search_pubmed"], name)
	}
	none := verdicts(t, planClaude(t, rel, claude.ClaudePolicy{}))
	for _, n := range []string{"mcp__foo_bar__deploy.prod", "mcp__lit__get+data", "mcp__lit__搜索文献", "mcp__lit__literature.search_pubmed"} {
		assert.Equal(t, "keep claude-unattributed", none[n], n)
	}
	// Pretending the current release were 1.0.51 changes nothing.
	same := planClaude(t, rel, claude.ClaudePolicy{Keys: claudeFixtureKeys, Version: "1.0.51"})
	assert.Zero(t, same.Count(naming.ActRewrite))
}

// TestClaudeRepairRefusalText: names inside refusal messages are reported, never rewritten.
func TestClaudeRepairRefusalText(t *testing.T) {
	sp := planClaude(t, "-home-demo-src-lab/d848c0de-9878-4606-93d3-ab6dda5f2c41.jsonl", claude.ClaudePolicy{Keys: claudeFixtureKeys})
	text := 0
	for _, d := range sp.Decisions {
		if d.Site.Kind == claude.ClaudeSiteText {
			text++
			assert.NotEqual(t, naming.ActRewrite, d.Action)
		}
	}
	assert.Equal(t, 4, text)
	assert.Equal(t, 3, sp.Count(naming.ActRewrite))
}

// TestClaudeRepair21332: a 2.1.332 session already holds 2.1.332's names: nothing to rewrite,
// with or without an inventory; the shared name written by 2.1.332 reached
// literature.search_pubmed, so it is reported shared but not kept as broken.
func TestClaudeRepair21332(t *testing.T) {
	for _, cp := range []claude.ClaudePolicy{{Keys: claudeFixtureKeys}, {Tools: claudeFixtureTools}, {}} {
		sp := planClaude(t, "-home-demo-src-api/fee043f7-27fe-47f6-83b1-76d8335c15e3.jsonl", cp)
		assert.Zero(t, sp.Count(naming.ActRewrite))
		for _, d := range sp.Decisions {
			assert.NotEqual(t, claude.ClassClaudeUnattributed, d.Class, d.Site.Name)
			if d.Site.Name == "mcp__lit__literature_search_pubmed" && cp.Tools != nil {
				assert.Equal(t, claude.ClassClaudeShared, d.Class)
				assert.Equal(t, naming.ActNone, d.Action)
			}
		}
	}
}
