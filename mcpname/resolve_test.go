package mcpname

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The tools of fixtures/qwen-settings/inventory.json (foo.bar and foo_bar flatten alike), plus a
// tool whose safe name forges foo.bar/evil's registered name.
var resolveTools = []QwenTool{
	{"lit", "literature.search_pubmed"}, {"lit", "literature_search_pubmed"}, {"lit", "get+data"},
	{"lit", "get_data_for_a_specific_location_and_date_range_extended"}, {"lit", "搜索文献"}, {"lit", "ok_tool"},
	{"foo.bar", "get_data"}, {"foo.bar", "deploy.prod"}, {"foo.bar", "evil"},
	{"foo_bar", "get_data"}, {"foo_bar", "evil_1oxrpi0"},
}

func TestQwenDispatch(t *testing.T) {
	for _, c := range []struct {
		stored string
		called QwenTool
		want   Dispatch
		to     []QwenTool
	}{
		// A legacy dotted call (Qwen Code 0.12.0) is sent hashed and reaches the tool it called.
		{"mcp__foo.bar__get_data", QwenTool{"foo.bar", "get_data"}, DispatchSame, []QwenTool{{"foo.bar", "get_data"}}},
		{"mcp__lit__literature.search_pubmed", QwenTool{"lit", "literature.search_pubmed"}, DispatchSame, []QwenTool{{"lit", "literature.search_pubmed"}}},
		// foo.bar's call stored under the flattened key is read as foo_bar's tool now.
		{"mcp__foo_bar__get_data", QwenTool{"foo.bar", "get_data"}, DispatchOther, []QwenTool{{"foo_bar", "get_data"}}},
		// The legacy middle-truncated name is safe and 63 units: sent as is, registered by none.
		{"mcp__lit__get_data_for_a_spe___location_and_date_range_extended", QwenTool{"lit", "get_data_for_a_specific_location_and_date_range_extended"}, DispatchNone, nil},
		// A safe name equal to another's hashed name: two tools register it.
		{"mcp__foo_bar__evil_1oxrpi0", QwenTool{"foo.bar", "evil"}, DispatchSeveral, []QwenTool{{"foo.bar", "evil"}, {"foo_bar", "evil_1oxrpi0"}}},
	} {
		got, to := QwenDispatch(c.stored, c.called, resolveTools)
		assert.Equal(t, c.want, got, c.stored)
		assert.Equal(t, c.to, to, c.stored)
	}
	assert.Equal(t, "redispatch", DispatchOther.String())
	assert.Equal(t, "ambiguous", DispatchSeveral.String())
}

// TestQwenCallers: which inventory tool a stored spelling belongs to (0.12.0 legacy, raw,
// 0.24.x registered), with the enterprise-search-prod-eu/-us pair of qwen-reference.md §1.5 that
// shares one middle-truncated legacy name.
func TestQwenCallers(t *testing.T) {
	long := "get_extended_forecast_for_the_next_weeks"
	tools := append(slices.Clone(resolveTools), QwenTool{"enterprise-search-prod-eu", long}, QwenTool{"enterprise-search-prod-us", long},
		QwenTool{"foo:bar", "x"}, QwenTool{"foo_bar", "x"})
	assert.Equal(t, []QwenTool{{"foo.bar", "get_data"}}, QwenCallers("mcp__foo.bar__get_data", "", tools))
	assert.Equal(t, []QwenTool{{"foo.bar", "get_data"}}, QwenCallers("mcp__foo_bar__get_data_0xybsnb", "", tools))
	assert.Equal(t, []QwenTool{{"lit", "get+data"}}, QwenCallers("mcp__lit__get_data", "", tools))
	shared := "mcp__enterprise-search-prod-___nded_forecast_for_the_next_weeks"
	assert.Equal(t, []QwenTool{{"enterprise-search-prod-eu", long}, {"enterprise-search-prod-us", long}}, QwenCallers(shared, "", tools))
	assert.Equal(t, []QwenTool{{"enterprise-search-prod-us", long}}, QwenCallers(shared, "enterprise-search-prod-us", tools))
	// Legacy flattens ':' to '_': foo:bar/x was stored as mcp__foo_bar__x, foo_bar/x's own name.
	assert.Equal(t, []QwenTool{{"foo:bar", "x"}, {"foo_bar", "x"}}, QwenCallers("mcp__foo_bar__x", "", tools))
	called := QwenTool{"foo:bar", "x"}
	d, to := QwenDispatch("mcp__foo_bar__x", called, tools)
	assert.Equal(t, DispatchOther, d)
	assert.Equal(t, []QwenTool{{"foo_bar", "x"}}, to)
	// Both shared-truncation tools register hashed names today: the stored call reaches none.
	d, _ = QwenDispatch(shared, QwenTool{"enterprise-search-prod-eu", long}, tools)
	assert.Equal(t, DispatchNone, d)
}

// TestClaudeDispatch uses the tools of fixtures/claude-real (README: lit lists
// literature.search_pubmed before literature_search_pubmed; 2.1.332 offers their shared name
// once and calls under it reach literature.search_pubmed).
func TestClaudeDispatch(t *testing.T) {
	tools := []ClaudeTool{{"lit", "literature.search_pubmed"}, {"lit", "literature_search_pubmed"}, {"lit", "get+data"},
		{"lit", "搜索文献"}, {"lit", "ok_tool"}, {"foo.bar", "get_data"}, {"foo.bar", "deploy.prod"}, {"my server", "ping"}}
	dot, under := ClaudeTool{"lit", "literature.search_pubmed"}, ClaudeTool{"lit", "literature_search_pubmed"}
	shared := "mcp__lit__literature_search_pubmed"
	// 1.0.51 named literature_search_pubmed so (server normalized, tool raw): one caller.
	assert.Equal(t, []ClaudeTool{under}, ClaudeToolsNamed(ClaudeEraServerNormalized, shared, tools))
	d, to := ClaudeDispatch(ClaudeEraDedup, shared, &under, tools)
	assert.Equal(t, DispatchOther, d, "2.1.332 answers the shared name with the first tool")
	assert.Equal(t, []ClaudeTool{dot, under}, to)
	d, _ = ClaudeDispatch(ClaudeEraDedup, shared, &dot, tools)
	assert.Equal(t, DispatchSame, d)
	d, _ = ClaudeDispatch(ClaudeEraDedup, shared, nil, tools)
	assert.Equal(t, DispatchSeveral, d, "caller unknown")
	d, _ = ClaudeDispatch(ClaudeEraNormalized, shared, &dot, tools)
	assert.Equal(t, DispatchSeveral, d, "2.0.14 offers the name twice")
	// A 1.0.51 name that is no current name reaches nothing (fix renames it).
	d, _ = ClaudeDispatch(ClaudeEraDedup, "mcp__foo_bar__deploy.prod", &ClaudeTool{"foo.bar", "deploy.prod"}, tools)
	assert.Equal(t, DispatchNone, d)
	d, _ = ClaudeDispatch(ClaudeEraDedup, "mcp__my_server__ping", nil, tools)
	assert.Equal(t, DispatchUnattributed, d)
	// Two servers whose keys normalize alike (my server, my_server): the first configured answers.
	two := append(slices.Clone(tools), ClaudeTool{"my_server", "ping"})
	d, to = ClaudeDispatch(ClaudeEraDedup, "mcp__my_server__ping", &ClaudeTool{"my_server", "ping"}, two)
	assert.Equal(t, DispatchOther, d)
	assert.Equal(t, []ClaudeTool{{"my server", "ping"}, {"my_server", "ping"}}, to)
}

// TestCodexDispatch uses schemes.md §A.5 (allocator set and E3 batch).
func TestCodexDispatch(t *testing.T) {
	e6 := CodexE6Params()
	myDash, myUnder := CodexTool{"my-server", "search"}, CodexTool{"my_server", "search"}
	// A session of the days when only my-server was configured stored its E6 name
	// mcp__my_server / search.
	stored := CodexAllocate([]CodexTool{myDash}, e6)[myDash]
	assert.Equal(t, CodexName{"mcp__my_server", "search"}, stored)
	// The key renamed to my_server: the same namespaced name now reaches another raw identity.
	d, to := CodexDispatch(stored, &myDash, []CodexTool{myUnder}, e6)
	assert.Equal(t, DispatchOther, d)
	assert.Equal(t, []CodexTool{myUnder}, to)
	// Both configured: each namespace gets its SHA-1 suffix (§A.5 #8/#9), the stored one is gone.
	d, _ = CodexDispatch(stored, &myDash, []CodexTool{myDash, myUnder}, e6)
	assert.Equal(t, DispatchNone, d)
	assert.Equal(t, []CodexTool{myDash}, CodexResolve(CodexName{"mcp__my_server_497a8b629ad2", "search"}, []CodexTool{myDash, myUnder}, e6))
	// E3 flat mcp__fs__read_file was fs/read.file (the batch's first); with only fs/read_file
	// configured today the flat lookup reaches that one.
	readDot, readUnder := CodexTool{"fs", "read.file"}, CodexTool{"fs", "read_file"}
	assert.Equal(t, "mcp__fs__read_file", CodexFlatE3("fs", "read.file"))
	d, to = CodexDispatch(CodexName{Name: "mcp__fs__read_file"}, &readDot, []CodexTool{readUnder}, e6)
	assert.Equal(t, DispatchOther, d)
	assert.Equal(t, []CodexTool{readUnder}, to)
	d, _ = CodexDispatch(CodexName{Name: "mcp__fs__read_file"}, &readDot, []CodexTool{readDot, readUnder}, e6)
	assert.Equal(t, DispatchNone, d, "both hashed (§A.5 #10/#11)")
	// The joined spelling of a/b__c and a__b/c is the same string: a flat call is ambiguous.
	ab := []CodexTool{{"a", "b__c"}, {"a__b", "c"}}
	d, to = CodexDispatch(CodexName{Name: "mcp__a__b__c"}, nil, ab, e6)
	assert.Equal(t, DispatchSeveral, d)
	assert.Equal(t, ab, to)
	d, _ = CodexDispatch(CodexName{"mcp__a", "b__c"}, &ab[0], ab, e6)
	assert.Equal(t, DispatchSame, d, "namespaced: exact")
}

func TestQwenSendsNormalized(t *testing.T) {
	for v, want := range map[string]bool{"0.12.0": false, "0.23.9": false, "0.24.0": true, "0.24.4": true, "1.0.0-beta.1": true} {
		got, err := QwenSendsNormalized(v)
		assert.NoError(t, err, v)
		assert.Equal(t, want, got, v)
	}
	_, err := QwenSendsNormalized("latest")
	assert.ErrorIs(t, err, ErrClaudeVersion)
}
