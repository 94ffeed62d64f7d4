package mcpname

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const geminiFixtures = "../fixtures/gemini-real/"

// geminiFixtureTools are the raw tools of the gemini-real runs (fixtures/gemini-real/README.md,
// the server table).
var geminiFixtureTools = []GeminiTool{
	{"lit", "literature.search_pubmed"}, {"lit", "literature_search_pubmed"}, {"lit", "get+data"},
	{"lit", "get_data_for_a_specific_location_and_date_range_extended_with_more_words"},
	{"lit", "搜索文献"}, {"lit", "search"}, {"lit", "3d_render"}, {"lit", "ok_tool"},
	{"foo.bar", "get_data"}, {"foo.bar", "deploy.prod"}, {"foo.bar", "search"},
	{"foo_bar", "get_data"}, {"foo_bar", "status"},
	{"foo bar", "get_data"}, {"foo bar", "ping"},
	{"com.example.enterprise-search-platform", "query_documents_by_semantic_similarity_and_rank"},
}

func TestGeminiValidNameVectors(t *testing.T) {
	// fixtures/gemini-real/README.md "Names each release declared".
	v1 := map[string]string{
		"get+data": "get_data",
		"搜索文献":     "____",
		"get_data_for_a_specific_location_and_date_range_extended_with_more_words": "get_data_for_a_specific_loca___e_range_extended_with_more_words",
		"deploy.prod": "deploy.prod",
		"3d_render":   "3d_render",
	}
	for in, want := range v1 {
		assert.Equal(t, want, GeminiValidNameV1(in), in)
		assert.LessOrEqual(t, len(GeminiValidNameV1(in)), 63)
	}
	g3 := []struct{ server, tool, want string }{
		{"lit", "literature.search_pubmed", "mcp_lit_literature.search_pubmed"},
		{"lit", "get+data", "mcp_lit_get_data"},
		{"lit", "get_data_for_a_specific_location_and_date_range_extended_with_more_words", "mcp_lit_get_data_for_a_specifi...range_extended_with_more_words"},
		{"lit", "搜索文献", "mcp_lit_____"},
		{"lit", "3d_render", "mcp_lit_3d_render"},
		{"foo.bar", "deploy.prod", "mcp_foo.bar_deploy.prod"},
		{"foo_bar", "get_data", "mcp_foo_bar_get_data"},
		{"foo bar", "get_data", "mcp_foo_bar_get_data"},
		{"foo bar", "ping", "mcp_foo_bar_ping"},
		{"com.example.enterprise-search-platform", "query_documents_by_semantic_similarity_and_rank", "mcp_com.example.enterprise-sea...y_semantic_similarity_and_rank"},
		// generateValidName: no second prefix; ':' kept; an astral character is two units.
		{"mcp_x", "t", "mcp_x_t"},
		{"mcp", "tool", "mcp_tool"},
		{"a:b", "c", "mcp_a:b_c"},
		{"s", "😀", "mcp_s___"},
	}
	for _, c := range g3 {
		assert.Equal(t, c.want, GeminiName(c.server, c.tool), "%s/%s", c.server, c.tool)
	}
	assert.Equal(t, "mcp_foo_bar_", GeminiServerPrefix("foo bar"))
	assert.Equal(t, 63, len(GeminiName("lit", strings.Repeat("x", 100))))
}

func TestGeminiCollisionNamesPerEra(t *testing.T) {
	assert.Equal(t, "foo bar__get+data", GeminiCollisionName(GeminiEraBare, "foo bar", "get+data"))
	assert.Equal(t, "foo bar__get_data", GeminiCollisionName(GeminiEraBareSanitized, "foo bar", "get+data"))
	assert.Equal(t, "mcp_foo_bar_get_data", GeminiCollisionName(GeminiEraQualified, "foo bar", "get+data"))
	assert.Equal(t, []string{"get_data", "foo.bar__get_data"}, GeminiNamesIn(GeminiEraBareSanitized, "foo.bar", "get_data"))
	assert.Equal(t, []string{"mcp_foo.bar_get_data"}, GeminiNamesIn(GeminiEraQualified, "foo.bar", "get_data"))
}

func TestGeminiEraOf(t *testing.T) {
	for v, want := range map[string]GeminiEra{
		"0.4.1": GeminiEraBare, "0.10.0": GeminiEraBare, "0.25.2": GeminiEraBare,
		"0.26.0": GeminiEraBareSanitized, "0.32.1": GeminiEraBareSanitized,
		"0.33.0": GeminiEraQualified, "0.33.0-preview.1": GeminiEraQualified, "0.61.0": GeminiEraQualified, "1.0.0": GeminiEraQualified,
	} {
		got, err := GeminiEraOf(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	_, err := GeminiEraOf("latest")
	assert.ErrorIs(t, err, ErrGeminiVersion)
	assert.Contains(t, err.Error(), `"latest"`)
}

func TestParseGeminiDisplayName(t *testing.T) {
	s, tl, amb, ok := ParseGeminiDisplayName("get+data (lit MCP Server)", nil)
	assert.True(t, ok)
	assert.False(t, amb)
	assert.Equal(t, [2]string{"lit", "get+data"}, [2]string{s, tl})
	s, tl, _, ok = ParseGeminiDisplayName("get_data (foo bar MCP Server)", nil)
	assert.True(t, ok)
	assert.Equal(t, [2]string{"foo bar", "get_data"}, [2]string{s, tl})
	// A tool name holding " (": the key list decides; without it the last split is taken.
	s, tl, amb, ok = ParseGeminiDisplayName("a (b (c (d MCP Server)", []string{"c (d"})
	assert.True(t, ok)
	assert.False(t, amb)
	assert.Equal(t, [2]string{"c (d", "a (b"}, [2]string{s, tl})
	s, tl, amb, ok = ParseGeminiDisplayName("a (b (c MCP Server)", nil)
	assert.True(t, ok)
	assert.True(t, amb)
	assert.Equal(t, [2]string{"c", "a (b"}, [2]string{s, tl})
	_, _, _, ok = ParseGeminiDisplayName("ReadFile", nil)
	assert.False(t, ok)
	assert.Equal(t, "搜索文献 (lit MCP Server)", GeminiDisplayName("lit", "搜索文献"))
}

// geminiStoredCall is a tool call of a recorded session: its stored name and displayName.
type geminiStoredCall struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
}

func readGeminiSession(t *testing.T, path string) []geminiStoredCall {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Messages []struct {
			ToolCalls []geminiStoredCall `json:"toolCalls"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var out []geminiStoredCall
	for _, m := range doc.Messages {
		out = append(out, m.ToolCalls...)
	}
	require.NotEmpty(t, out)
	return out
}

// TestGeminiNamesOfRecordedCalls: every stored call of the recorded 0.10.0, 0.32.1 and 0.33.2
// sessions is one of the names GeminiNamesIn gives its raw tool (read from its displayName) in the
// era of the release that wrote it; and GeminiName of that raw tool is a name 0.61.0 declared for
// the same raw tool (requests-summary.json, declared_raw).
func TestGeminiNamesOfRecordedCalls(t *testing.T) {
	declared61 := geminiDeclared(t, "0.61.0")
	require.Len(t, declared61, 15, "0.61.0 declared 15 MCP names (mcp_foo_bar_get_data once)")
	sessions := map[string]string{"0.10.0": "s1", "0.32.1": "s2", "0.33.2": "s3"}
	n := 0
	for release, s := range sessions {
		era, err := GeminiEraOf(release)
		require.NoError(t, err)
		for _, c := range readGeminiSession(t, geminiFixtures+"sessions/"+s+"-session-before-resume.json") {
			server, tool, amb, ok := ParseGeminiDisplayName(c.DisplayName, nil)
			require.True(t, ok, c.DisplayName)
			require.False(t, amb)
			assert.Contains(t, GeminiNamesIn(era, server, tool), c.Name, "%s: %s/%s", release, server, tool)
			cur := GeminiName(server, tool)
			raw, ok := declared61[cur]
			if assert.True(t, ok, "0.61.0 declared %s (for %s/%s)", cur, server, tool) {
				assert.Equal(t, tool, raw, "0.61.0's %s is the raw tool %s", cur, tool)
			}
			n++
		}
	}
	assert.Equal(t, 16+16+15, n, "0.33.2 called mcp_foo_bar_get_data once: it declared it once")
	// Every recorded declaration of 0.61.0 is GeminiName of a fixture tool.
	var ours []string
	for _, tl := range geminiFixtureTools {
		ours = append(ours, GeminiName(tl.Server, tl.Tool))
	}
	for name := range declared61 {
		assert.Contains(t, ours, name)
	}
}

// TestGeminiToolsNamedBareCollisions: a bare 0.32.1 name is the name of several tools (the one
// that registered first owns it); the collision forms name one.
func TestGeminiToolsNamedBareCollisions(t *testing.T) {
	e := GeminiEraBareSanitized
	assert.Equal(t, []GeminiTool{{"lit", "get+data"}, {"foo.bar", "get_data"}, {"foo_bar", "get_data"}, {"foo bar", "get_data"}},
		GeminiToolsNamed(&e, "get_data", geminiFixtureTools))
	assert.Equal(t, []GeminiTool{{"foo bar", "get_data"}}, GeminiToolsNamed(&e, "foo bar__get_data", geminiFixtureTools))
	assert.Equal(t, []GeminiTool{{"lit", "3d_render"}}, GeminiToolsNamed(nil, "3d_render", geminiFixtureTools))
	q := GeminiEraQualified
	assert.Equal(t, []GeminiTool{{"foo_bar", "get_data"}, {"foo bar", "get_data"}}, GeminiToolsNamed(&q, "mcp_foo_bar_get_data", geminiFixtureTools))
}

// geminiDeclared returns the MCP names (and their raw tools) the first request of release's first
// run declared (fixtures/gemini-real/requests-summary.json).
func geminiDeclared(t *testing.T, release string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(geminiFixtures + "requests-summary.json")
	require.NoError(t, err)
	var doc struct {
		Runs []struct {
			Version  string `json:"version"`
			Requests []struct {
				DeclaredMCP []string          `json:"declared_mcp"`
				DeclaredRaw map[string]string `json:"declared_raw"`
			} `json:"requests"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, r := range doc.Runs {
		if r.Version == release && len(r.Requests) > 0 && len(r.Requests[0].DeclaredMCP) > 0 {
			return r.Requests[0].DeclaredRaw
		}
	}
	t.Fatalf("no run of %s", release)
	return nil
}

func TestGeminiDisplayNameSplits(t *testing.T) {
	assert.Equal(t, []GeminiTool{{Server: "lit", Tool: "get+data"}}, GeminiDisplayNameSplits("get+data (lit MCP Server)"))
	assert.Equal(t, []GeminiTool{{Server: "b (c", Tool: "a"}, {Server: "c", Tool: "a (b"}}, GeminiDisplayNameSplits("a (b (c MCP Server)"))
	assert.Nil(t, GeminiDisplayNameSplits("ReadFile"))
	assert.Nil(t, GeminiDisplayNameSplits("x MCP Server)"))
}
