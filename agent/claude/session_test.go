package claude

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

const claudeFx = "../../fixtures/claude-real/dot-claude/projects/"

func scanClaude(t *testing.T, rel string) *store.Snapshot {
	t.Helper()
	snap, err := jsonl.Open(claudeFx+rel, Session).Scan(context.Background(), store.ScanOptions{})
	require.NoError(t, err)
	require.Empty(t, snap.Problems)
	return snap
}

func namesOfKind(snap *store.Snapshot, kind store.SiteKind) []string {
	var out []string
	for _, s := range snap.Sites {
		if s.Kind == kind {
			out = append(out, s.Name)
		}
	}
	return out
}

// lineTypes maps each line number of a fixture to its "type".
func lineTypes(t *testing.T, rel string) map[int64]string {
	f, err := os.Open(claudeFx + rel)
	require.NoError(t, err)
	defer f.Close()
	out := map[int64]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 8<<20)
	for n := int64(1); sc.Scan(); n++ {
		var l struct{ Type string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		out[n] = l.Type
	}
	return out
}

// TestClaudeSession1051: the 1.0.51 session holds one tool_use name per assistant line — the
// ten names 1.0.51 gave the fixture's tools, dotted, "+" and CJK ones included — and nothing
// else; every line is of release 1.0.51.
func TestClaudeSession1051(t *testing.T) {
	snap := scanClaude(t, "-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl")
	assert.Equal(t, ID, snap.Agent)
	assert.Equal(t, []string{
		"mcp__foo_bar__get_data", "mcp__foo_bar__deploy.prod",
		"mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank",
		"mcp__my_server__ping", "mcp__lit__literature.search_pubmed", "mcp__lit__literature_search_pubmed",
		"mcp__lit__get+data", "mcp__lit__搜索文献",
		"mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words", "mcp__lit__ok_tool",
	}, namesOfKind(snap, store.SiteCall))
	assert.Len(t, snap.Sites, 10)
	for _, s := range snap.Sites {
		assert.NotEmpty(t, s.CallID)
		assert.Equal(t, "message.content[0].name", s.Path)
	}
	m := ClaudeMetaOf(snap)
	require.NotNil(t, m)
	assert.Equal(t, []ClaudeVersionFrom{{Line: 1, Version: "1.0.51"}}, m.Versions)
	assert.Equal(t, "/home/demo/src/lab", m.Cwd)
	assert.Equal(t, "1.0.51", m.VersionAt(22))
	assert.Empty(t, snap.Identities)
}

// TestClaudeSessionRefusals: refused calls name the tool inside free text (tool_result content
// and toolUseResult): read-only text sites.
func TestClaudeSessionRefusals(t *testing.T) {
	snap := scanClaude(t, "-home-demo-src-lab/d848c0de-9878-4606-93d3-ab6dda5f2c41.jsonl")
	text := namesOfKind(snap, ClaudeSiteText)
	assert.Equal(t, []string{"mcp__foo_bar__get_data", "mcp__foo_bar__get_data", "mcp__my_server__ping", "mcp__my_server__ping"}, text)
	paths := map[string]bool{}
	for _, s := range snap.Sites {
		if s.Kind == ClaudeSiteText {
			assert.True(t, s.ReadOnly)
			paths[s.Path] = true
		}
	}
	assert.Equal(t, map[string]bool{"message.content[0].content": true, "toolUseResult": true}, paths)
	assert.Len(t, namesOfKind(snap, store.SiteCall), 10)
}

// TestClaudeSession21332: the sites 2.1.332 sends back on resume (tool_use, the ToolSearch
// select: list, tool_reference, deferred-tool names), the attribution pairs as identities, and
// no site on lines it does not send back (api-request-blob/-shape, tools-used, records).
func TestClaudeSession21332(t *testing.T) {
	rel := "-home-demo-src-api/fee043f7-27fe-47f6-83b1-76d8335c15e3.jsonl"
	snap := scanClaude(t, rel)
	mcp9 := []string{
		"mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank",
		"mcp__foo_bar__deploy_prod", "mcp__foo_bar__get_data", "mcp__lit______", "mcp__lit__get_data",
		"mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words",
		"mcp__lit__literature_search_pubmed", "mcp__lit__ok_tool", "mcp__my_server__ping",
	}
	refs := namesOfKind(snap, ClaudeSiteReference)
	assert.Equal(t, mcp9, refs)
	sel := namesOfKind(snap, ClaudeSiteSelect)
	require.Len(t, sel, 1)
	assert.Equal(t, "select:mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank,mcp__foo_bar__deploy_prod,mcp__foo_bar__get_data,mcp__lit______,mcp__lit__get_data,mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words,mcp__lit__literature_search_pubmed,mcp__lit__ok_tool,mcp__my_server__ping", sel[0])
	var deferredMCP []string
	for _, n := range namesOfKind(snap, ClaudeSiteDeferred) {
		if len(n) > 5 && n[:5] == "mcp__" {
			deferredMCP = append(deferredMCP, n)
		}
	}
	assert.Equal(t, mcp9, deferredMCP)
	calls := namesOfKind(snap, store.SiteCall)
	sort.Strings(calls)
	assert.Equal(t, append([]string{"ToolSearch"}, mcp9...), calls)
	require.Len(t, snap.Identities, 1)
	assert.Equal(t, "my server", snap.Identities[0].Server)
	assert.Equal(t, "ping", snap.Identities[0].Tool)
	types := lineTypes(t, rel)
	for _, s := range snap.Sites {
		assert.Contains(t, []string{"assistant", "user", "attachment"}, types[s.Loc.Line], "%s at line %d", s.Path, s.Loc.Line)
	}
	assert.Equal(t, "2.1.332", ClaudeMetaOf(snap).VersionAt(1))
}

// TestClaudeSubagentSummary: the main transcript of a session whose MCP calls a subagent made
// holds the names only inside <tools-used-before-summary> text; the subagent file has the
// same sites as a main transcript.
func TestClaudeSubagentSummary(t *testing.T) {
	snap := scanClaude(t, "-home-demo-src-api/441566c6-e193-4f5e-98cf-abf3928419e9.jsonl")
	assert.Equal(t, []string{"Agent"}, namesOfKind(snap, store.SiteCall))
	// 9 in the deferred-tool listing's rendered text, 9 in the summary of the tools the
	// subagent used.
	paths := map[string]int{}
	for _, s := range snap.Sites {
		if s.Kind == ClaudeSiteText {
			paths[s.Path]++
		}
	}
	assert.Equal(t, map[string]int{"rendered[0].content": 9, "message.content": 9}, paths)
	sub := scanClaude(t, "-home-demo-src-api/441566c6-e193-4f5e-98cf-abf3928419e9/subagents/agent-a02640152bea9bd4b.jsonl")
	assert.Len(t, namesOfKind(sub, ClaudeSiteReference), 9)
	assert.Len(t, namesOfKind(sub, ClaudeSiteSelect), 1)
}

func TestClaudeTextNames(t *testing.T) {
	for text, want := range map[string][]string{
		"Claude requested permissions to use mcp__foo_bar__get_data, but you haven't granted it yet.":       {"mcp__foo_bar__get_data"},
		"Permission to use mcp__my_server__ping has been denied.":                                           {"mcp__my_server__ping"},
		"<tools-used-before-summary>ToolSearch, mcp__lit______, mcp__lit__搜索文献</tools-used-before-summary>": {"mcp__lit______", "mcp__lit__搜索文献"},
		"use `mcp__foo.bar__deploy.prod`: done":                                                             {"mcp__foo.bar__deploy.prod"},
		"no names here; mcp__ alone":                                                                        nil,
	} {
		assert.Equal(t, want, ClaudeTextNames(text), text)
	}
	m := &ClaudeMeta{Versions: []ClaudeVersionFrom{{3, "1.0.51"}, {23, "2.1.332"}}}
	assert.Equal(t, "1.0.51", m.VersionAt(1))
	assert.Equal(t, "1.0.51", m.VersionAt(22))
	assert.Equal(t, "2.1.332", m.VersionAt(23))
	assert.Equal(t, "", (*ClaudeMeta)(nil).VersionAt(4))
}
