package mcpname

import (
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
