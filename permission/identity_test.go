package permission_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// TestNewToolComputedExamples checks every row of the "Computed examples" table of
// qwen-reference.md §1.6.
func TestNewToolComputedExamples(t *testing.T) {
	const url52 = "https://mcp.services.example.internal/sse?team=infra"
	t40 := strings.Repeat("t", 40)
	x80 := strings.Repeat("x", 80)
	k53 := strings.Repeat("k", 53)
	tests := []struct {
		server, tool string
		vouches      bool
		registered   string
		legacy       string
		disabled     []string
		perm         []string
	}{
		{"github", "create_issue", true, "mcp__github__create_issue", "mcp__github__create_issue", []string{}, []string{}},
		{"foo.bar", "evil", true, "mcp__foo_bar__evil_1oxrpi0", "mcp__foo.bar__evil",
			[]string{"mcp__foo.bar__evil"}, []string{"mcp__foo.bar__evil"}},
		{"foo.bar", "my+tool", true, "mcp__foo_bar__my_tool_0ob72ab", "mcp__foo.bar__my_tool",
			[]string{"mcp__foo.bar__my+tool", "mcp__foo.bar__my_tool"}, []string{"mcp__foo.bar__my+tool", "mcp__foo.bar__my_tool"}},
		{"foo:bar", "a.b", true, "mcp__foo_bar__a_b_1aofxjh", "mcp__foo_bar__a.b",
			[]string{"mcp__foo:bar__a.b", "mcp__foo_bar__a.b"}, []string{"mcp__foo:bar__a.b", "mcp__foo_bar__a.b"}},
		{"foo_bar", "get+data", true, "mcp__foo_bar__get_data_0t75oeu", "mcp__foo_bar__get_data",
			[]string{"mcp__foo_bar__get+data", "mcp__foo_bar__get_data"}, []string{"mcp__foo_bar__get+data", "mcp__foo_bar__get_data"}},
		{"zybio.db", "literature.search_pubmed", true, "mcp__zybio_db__literature_search_pubmed_06591vz", "mcp__zybio.db__literature.search_pubmed",
			[]string{"mcp__zybio.db__literature.search_pubmed"}, []string{"mcp__zybio.db__literature.search_pubmed"}},
		{"github.com/octocat", "search", true, "mcp__github_com_octocat__search_1ijkwfp", "mcp__github.com_octocat__search",
			[]string{"mcp__github.com/octocat__search", "mcp__github.com_octocat__search"}, []string{"mcp__github.com/octocat__search", "mcp__github.com_octocat__search"}},
		{"weather-forecast-serve", t40, false, "mcp__weather-forecast-serve__tttttttttttttttttttttttttt_1i9r0dz", "mcp__weather-forecast-serve____tttttttttttttttttttttttttttttttt",
			[]string{"mcp__weather-forecast-serve__" + t40, "mcp__weather-forecast-serve____tttttttttttttttttttttttttttttttt"},
			[]string{"mcp__weather-forecast-serve__" + t40}},
		{"weather-forecast-server", t40, true, "mcp__weather-forecast-server__ttttttttttttttttttttttttt_1wtb1jj", "mcp__weather-forecast-server___tttttttttttttttttttttttttttttttt",
			[]string{"mcp__weather-forecast-server__" + t40, "mcp__weather-forecast-server___tttttttttttttttttttttttttttttttt"},
			[]string{"mcp__weather-forecast-server__" + t40, "mcp__weather-forecast-server___tttttttttttttttttttttttttttttttt"}},
		{"weather-forecast-server-premium", "get_extended_forecast_for_next_week", false,
			"mcp__weather-forecast-server-premium__get_extended_fore_0k5jbsc", "mcp__weather-forecast-server____extended_forecast_for_next_week",
			[]string{"mcp__weather-forecast-server-premium__get_extended_forecast_for_next_week", "mcp__weather-forecast-server____extended_forecast_for_next_week"},
			[]string{"mcp__weather-forecast-server-premium__get_extended_forecast_for_next_week"}},
		{"acme-weather-forecast_", "get_extended_weather_forecast_for_week", false,
			"mcp__acme-weather-forecast___get_extended_weather_forec_1xwfned", "mcp__acme-weather-forecast_____tended_weather_forecast_for_week",
			[]string{"mcp__acme-weather-forecast___get_extended_weather_forecast_for_week", "mcp__acme-weather-forecast_____tended_weather_forecast_for_week"},
			[]string{"mcp__acme-weather-forecast___get_extended_weather_forecast_for_week"}},
		{"a__b", "_hidden", false, "mcp__a__b___hidden", "mcp__a__b___hidden", []string{}, []string{}},
		{"foo_", "_internal", false, "mcp__foo____internal", "mcp__foo____internal", []string{}, []string{}},
		{"srv", x80, true, "mcp__srv__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_0a39344", "mcp__srv__xxxxxxxxxxxxxxxxxx___xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			[]string{"mcp__srv__" + x80, "mcp__srv__xxxxxxxxxxxxxxxxxx___xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
			[]string{"mcp__srv__" + x80, "mcp__srv__xxxxxxxxxxxxxxxxxx___xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}},
		{k53, "tool", false, "mcp__kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk_12a0juy", "mcp__kkkkkkkkkkkkkkkkkkkkkkk___kkkkkkkkkkkkkkkkkkkkkkkkkk__tool",
			[]string{"mcp__" + k53 + "__tool", "mcp__kkkkkkkkkkkkkkkkkkkkkkk___kkkkkkkkkkkkkkkkkkkkkkkkkk__tool"},
			[]string{"mcp__" + k53 + "__tool"}},
		{url52, "deploy", false, "mcp__https___mcp_services_example_internal_sse_team_inf_01wr6ix", "mcp__https___mcp.services.ex___.internal_sse_team_infra__deploy",
			[]string{"mcp__" + url52 + "__deploy", "mcp__https___mcp.services.ex___.internal_sse_team_infra__deploy"},
			[]string{"mcp__" + url52 + "__deploy"}},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			tool := permission.NewTool(tt.server, tt.tool)
			assert.Equal(t, permission.Identity{Server: tt.server, Tool: tt.tool}, tool.Identity)
			assert.Equal(t, mcpname.Raw(tt.server, tt.tool), tool.Raw)
			assert.Equal(t, tt.vouches, permission.LegacyReductionVouchesForServer(tt.server), "vouches")
			assert.Equal(t, tt.registered, tool.Name, "registered")
			assert.Equal(t, tt.legacy, tool.Legacy, "legacy")
			assert.Equal(t, tt.disabled, tool.DisabledToolAliases, "disabledToolAliases")
			assert.Equal(t, tt.perm, tool.PermissionAliases, "permissionAliases")
		})
	}
}

// TestLegacyReductionVouchesByKeyLength pins "key length 0..21 or exactly 23 can vouch; 22 and
// >= 24 never vouch" (qwen-reference.md §1.6) for plain keys, and the image checks.
func TestLegacyReductionVouchesByKeyLength(t *testing.T) {
	for n := 0; n <= 40; n++ {
		want := n <= 21 || n == 23
		assert.Equal(t, want, permission.LegacyReductionVouchesForServer(strings.Repeat("s", n)), "key length %d", n)
	}
	tests := []struct {
		name, server string
		want         bool
	}{
		{"double underscore in key", "a__b", false},
		{"trailing underscore", "foo_", false},
		{"legacy image gains __", "a:_b", false},
		{"dots are kept by legacy", "foo.bar", true},
		{"emoji is two units (22 → no)", strings.Repeat("s", 20) + "🎉", false},
		{"emoji becomes __ in the legacy image", strings.Repeat("s", 19) + "🎉", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.LegacyReductionVouchesForServer(tt.server))
		})
	}
}

// TestToolContextLevels checks what each §3.2 ctx level passes.
func TestToolContextLevels(t *testing.T) {
	tool := permission.NewTool("foo:bar", "a.b")
	assert.Equal(t, permission.Context{ToolName: "mcp__foo_bar__a_b_1aofxjh"}, tool.Context(permission.ContextNone))
	assert.Equal(t, permission.Context{ToolName: "mcp__foo_bar__a_b_1aofxjh", Aliases: []string{"mcp__foo:bar__a.b", "mcp__foo_bar__a.b"}},
		tool.Context(permission.ContextAliases))
	p := tool.Context(permission.ContextProducer)
	assert.Equal(t, &permission.Identity{Server: "foo:bar", Tool: "a.b"}, p.Identity)
	assert.Equal(t, tool.PermissionAliases, p.Aliases)
}
