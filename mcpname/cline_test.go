package mcpname

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	clineFixtures = "../fixtures/cline-real/"
	kiloFixtures  = "../fixtures/kilo-real/"
)

// fixtureTool is one raw (server, tool) pair of a recording, in configuration order.
type fixtureTool struct{ server, tool string }

// recordedTools reads the servers of a recording's config (member: "mcpServers" for Cline,
// "mcp" for Kilo) and each server's TOOLS variable (env / environment), in file order.
func recordedTools(t *testing.T, path, member, envMember string) []fixtureTool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &doc))
	// Server keys in file order: decode the object token by token.
	dec := json.NewDecoder(strings.NewReader(string(doc[member])))
	_, err = dec.Token()
	require.NoError(t, err)
	var out []fixtureTool
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var srv map[string]json.RawMessage
		require.NoError(t, dec.Decode(&srv))
		var env map[string]string
		require.NoError(t, json.Unmarshal(srv[envMember], &env))
		for _, tool := range strings.Split(env["TOOLS"], ",") {
			out = append(out, fixtureTool{k.(string), tool})
		}
	}
	require.NotEmpty(t, out)
	return out
}

// recordedRequests reads requests-summary.json: per run, each request's offered MCP tools.
func recordedRequests(t *testing.T, path string) map[string][]struct {
	Status  int      `json:"status"`
	Offered []string `json:"mcp_tools_offered"`
	History []string `json:"history_tool_calls"`
} {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var runs map[string][]struct {
		Status  int      `json:"status"`
		Offered []string `json:"mcp_tools_offered"`
		History []string `json:"history_tool_calls"`
	}
	require.NoError(t, json.Unmarshal(b, &runs))
	return runs
}

// TestCline3NamesEqualWhat3065Offered: the 3.x name of every recorded tool, in configuration
// order, is the tool list 3.0.65 offered in every request of its runs (issue 27 acceptance).
func TestCline3NamesEqualWhat3065Offered(t *testing.T) {
	tools := recordedTools(t, clineFixtures+"dot-cline-data-after-3.0.65/settings/cline_mcp_settings.json", "mcpServers", "env")
	require.Len(t, tools, 11)
	var got []string
	for _, tl := range tools {
		n := Cline3Name(tl.server, tl.tool)
		assert.True(t, IsClineSafe(n), n)
		assert.Equal(t, n, Cline3Normalize(n), "the rule keeps its own result")
		got = append(got, n)
	}
	runs := recordedRequests(t, clineFixtures+"requests-summary.json")
	for _, run := range []string{"c3-new", "c3-resume-new"} {
		require.NotEmpty(t, runs[run], run)
		for i, req := range runs[run] {
			assert.Equal(t, req.Offered, got, "%s request %d", run, i)
			// The history 3.0.65 sent back: every call of the turns before, each tool called
			// once per turn in configuration order, under the same names.
			require.Zero(t, len(req.History)%len(got), "%s request %d: whole turns", run, i)
			for k := 0; k < len(req.History); k += len(got) {
				assert.Equal(t, got, req.History[k:k+len(got)], "%s request %d history turn %d", run, i, k/len(got))
			}
		}
	}
	require.Len(t, runs["c3-resume-new"][1].History, 2*len(got), "the resumed session sent both turns")

	// The session 3.0.65 stored: each tool_use (and its tool_result) holds the name computed for
	// the raw tool the result echoes (the recording's MCP servers answer "… from <raw tool> …").
	b, err := os.ReadFile(clineFixtures + "dot-cline-data-after-3.0.65/sessions/1796512611515_x7e5r/1796512611515_x7e5r.messages.json")
	require.NoError(t, err)
	var sess struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(b, &sess))
	type block struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		ToolUse string          `json:"tool_use_id"`
		Name    string          `json:"name"`
		Content json.RawMessage `json:"content"`
	}
	var uses, results []block
	for _, m := range sess.Messages {
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain text message
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "tool_use":
				uses = append(uses, bl)
			case "tool_result":
				results = append(results, bl)
			}
		}
	}
	require.Len(t, uses, 2*len(tools), "two turns, every tool called in each")
	require.Len(t, results, len(uses))
	for i, u := range uses {
		tl := tools[i%len(tools)]
		assert.Equal(t, Cline3Name(tl.server, tl.tool), u.Name, "call %d (%s / %s)", i, tl.server, tl.tool)
		r := results[i]
		assert.Equal(t, u.ID, r.ToolUse, "result %d answers call %d", i, i)
		assert.Equal(t, u.Name, r.Name, "result %d names its call", i)
		assert.Contains(t, string(r.Content), " from "+strings.Trim(strconv.Quote(tl.tool), `"`)+" for", "result %d echoes the raw tool %s", i, tl.tool)
	}
}

// TestCline3NameVectors: the README's named vectors, one by one.
func TestCline3NameVectors(t *testing.T) {
	for _, v := range []struct{ server, tool, want string }{
		{"lit", "literature.search_pubmed", "lit__literature_search_pubmed_afec155c"},
		{"lit", "literature_search_pubmed", "lit__literature_search_pubmed"},
		{"lit", "get+data", "lit__get_data_f270f97a"},
		{"lit", "搜索文献", "lit____e662ee59"},
		{"lit", "search", "lit__search"},
		{"lit", "get_data_for_a_specific_location_and_date_range_extended", "lit__get_data_for_a_specific_location_and_date_range_extended"},
		{"lit", "query_documents_by_semantic_similarity_with_metadata_filters_and_reranking", "lit__query_documents_by_semantic_similarity_with_metada_1f0667a5"},
		{"foo.bar", "get_data", "foo_bar__get_data_99ad0764"},
		{"foo.bar", "deploy.prod", "foo_bar__deploy_prod_b54cbe54"},
		{"foo_bar", "get_data", "foo_bar__get_data"},
		{"foo_bar", "deploy.prod", "foo_bar__deploy_prod_8a75186a"},
	} {
		assert.Equal(t, v.want, Cline3Name(v.server, v.tool), "%s / %s", v.server, v.tool)
	}
	// Edges: exactly 64 safe characters kept; 65 hashed to 64; a run of symbols is one "_".
	s64 := "s__" + strings.Repeat("t", 61)
	assert.Equal(t, s64, Cline3Normalize(s64))
	h := Cline3Normalize(s64 + "t")
	assert.Len(t, h, 64)
	assert.Equal(t, s64[:55]+"_", h[:56])
	assert.Equal(t, "a_b_c", Cline3Sanitize("a.+b  c"))
	assert.Equal(t, "_", Cline3Sanitize("搜索"))
}

// TestCline2NamesEqualWhat2180Offered: with the uids of each recorded hub start, Cline2Name of
// every recorded tool gives the list 2.18.0 offered, the two tools over 64 left out.
func TestCline2NamesEqualWhat2180Offered(t *testing.T) {
	tools := recordedTools(t, clineFixtures+"dot-cline-data-after-2.18.0/settings/cline_mcp_settings.json", "mcpServers", "env")
	runs := recordedRequests(t, clineFixtures+"requests-summary.json")
	for run, uids := range map[string]map[string]string{
		"c2-native":        {"lit": "cOeQcj", "foo.bar": "cGCQxv", "foo_bar": "chKP03"},
		"c2-resume-strict": {"lit": "cb2gfV", "foo.bar": "c86UyY", "foo_bar": "c2mMGn"},
	} {
		var got, dropped []string
		for _, tl := range tools {
			n, ok := Cline2Name(uids[tl.server], tl.tool)
			if !ok {
				dropped = append(dropped, tl.tool)
				continue
			}
			got = append(got, n)
			uid, tool, split := Cline2Split(n)
			assert.True(t, split, n)
			assert.Equal(t, uids[tl.server], uid)
			assert.Equal(t, tl.tool, tool)
		}
		assert.Equal(t, []string{"get_data_for_a_specific_location_and_date_range_extended",
			"query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"}, dropped)
		for i, req := range runs[run] {
			assert.Equal(t, req.Offered, got, "%s request %d", run, i)
		}
	}
	for _, n := range []string{"attempt_completion", "c0mcp0x", "cOeQcj0mcp0", "dOeQcj0mcp0x", "cOe.cj0mcp0x", "lit__search"} {
		_, _, ok := Cline2Split(n)
		assert.False(t, ok, n)
	}
	// 64 UTF-16 units are offered, 65 are not; an astral character counts 2.
	_, ok := Cline2Name("cAAAAA", strings.Repeat("x", 64-11))
	assert.True(t, ok)
	_, ok = Cline2Name("cAAAAA", strings.Repeat("x", 64-12)+"😀")
	assert.False(t, ok)
}

// TestKiloNamesEqualWhatKiloOffered: KiloName of every recorded tool, later registrations
// replacing earlier ones of the same name, is the set 7.0.33 and 7.7.7 offered (minus the tool
// the config's deny hides).
func TestKiloNamesEqualWhatKiloOffered(t *testing.T) {
	tools := recordedTools(t, kiloFixtures+"kilo.json", "mcp", "environment")
	names := map[string]fixtureTool{}
	for _, tl := range tools {
		names[KiloName(tl.server, tl.tool)] = tl // later wins
	}
	assert.Equal(t, fixtureTool{"lit", "literature_search_pubmed"}, names["lit_literature_search_pubmed"])
	assert.Equal(t, fixtureTool{"foo_bar", "deploy.prod"}, names["foo_bar_deploy_prod"])
	assert.Len(t, KiloName("lit", "query_documents_by_semantic_similarity_with_metadata_filters_and_reranking"), 78)
	assert.Equal(t, "lit_____", KiloName("lit", "搜索文献"))
	assert.Equal(t, "a___", KiloName("a", "😀"), "the join, then one _ per UTF-16 unit")
	delete(names, "foo_bar_deploy_prod") // "foo_bar_deploy_prod": "deny"
	runs := recordedRequests(t, kiloFixtures+"requests-summary.json")
	for _, run := range []string{"k0-run", "k7-resume-strict"} {
		for i, req := range runs[run] {
			if len(req.Offered) == 0 {
				continue
			}
			assert.ElementsMatch(t, keys(names), req.Offered, "%s request %d", run, i)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
