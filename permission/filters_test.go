package permission_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/permission"
)

// TestIsToolDisabled covers ToolRegistry.isToolDisabled (qwen-reference.md §2.7).
func TestIsToolDisabled(t *testing.T) {
	dotted := permission.NewTool("zybio.db", "literature.search_pubmed")
	premium := permission.NewTool("weather-forecast-server-premium", "get_extended_forecast_for_next_week")
	tests := []struct {
		name    string
		entries []string
		tool    permission.Tool
		want    bool
	}{
		{"registered name", []string{dotted.Name}, dotted, true},
		{"raw alias", []string{"mcp__zybio.db__literature.search_pubmed"}, dotted, true},
		{"ungated truncated legacy alias", []string{premium.Legacy}, premium, true},
		{"entry normalizing to the name", []string{"mcp__zybio.db__literature.search_pubmed"}, permission.Tool{Name: dotted.Name}, true},
		{"no wildcards", []string{"mcp__zybio_db__*"}, dotted, false},
		{"other tool", []string{"mcp__github__create_issue"}, dotted, false},
		{"empty list", nil, dotted, false},
		// Fail-closed collision: the forged verbatim registration equals the dotted
		// server's normalized name, so a raw-spelled entry for foo.bar disables it too.
		{"colliding server's entry", []string{"mcp__foo.bar__evil"}, permission.NewTool("foo_bar", "evil_1oxrpi0"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.IsToolDisabled(tt.entries, tt.tool.Name, tt.tool.DisabledToolAliases))
		})
	}
	t.Run("non-mcp name is exact only", func(t *testing.T) {
		assert.True(t, permission.IsToolDisabled([]string{"read_file"}, "read_file", nil))
		assert.False(t, permission.IsToolDisabled([]string{"Read"}, "read_file", nil))
	})
}

// TestToolFilter covers includeTools / excludeTools (mcp-client isEnabled).
func TestToolFilter(t *testing.T) {
	tests := []struct {
		name   string
		filter permission.ToolFilter
		tool   string
		want   bool
	}{
		{"unset", permission.ToolFilter{}, "search", true},
		{"include exact", permission.ToolFilter{Include: []string{"search"}}, "search", true},
		{"include with args", permission.ToolFilter{Include: []string{"search(query)"}}, "search", true},
		{"include prefix is not enough", permission.ToolFilter{Include: []string{"search_all"}}, "search", false},
		{"empty include enables nothing", permission.ToolFilter{Include: []string{}}, "search", false},
		{"exclude wins", permission.ToolFilter{Include: []string{"search"}, Exclude: []string{"search"}}, "search", false},
		{"exclude is exact", permission.ToolFilter{Exclude: []string{"search(query)"}}, "search", true},
		{"nameless tool", permission.ToolFilter{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.filter.Allows(tt.tool))
		})
	}
}

// TestServerPatterns covers mcp.allowed / mcp.excluded globs.
func TestServerPatterns(t *testing.T) {
	tests := []struct {
		name, key, pattern string
		want               bool
	}{
		{"exact", "github", "github", true},
		{"exact is whole", "github", "git", false},
		{"dot is literal", "zybio.db", "zybio_db", false},
		{"star any", "github-enterprise", "github*", true},
		{"star empty", "github", "github*", true},
		{"star middle", "foo.prod.bar", "foo*bar", true},
		{"star backtracks", "abcbc", "a*bc", true},
		{"question one unit", "foo1", "foo?", true},
		{"question not zero", "foo", "foo?", false},
		{"question counts UTF-16 units", "x🎉", "x??", true},
		{"question counts UTF-16 units (one is short)", "x🎉", "x?", false},
		{"no regex", "a+b", "a+*", true},
		{"only stars", "", "**", true},
		{"tail mismatch", "github", "*hubx", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, permission.MatchesServerPattern(tt.key, tt.pattern))
		})
	}
	assert.False(t, permission.MatchesAnyServerPattern("github", nil))
	assert.True(t, permission.ServerEnabled("github", nil, nil))
	assert.True(t, permission.ServerEnabled("github", []string{"git*"}, nil))
	assert.False(t, permission.ServerEnabled("github", []string{}, nil), "set but empty allowed list")
	assert.False(t, permission.ServerEnabled("github", []string{"*"}, []string{"github"}), "excluded wins")
	assert.False(t, permission.ServerEnabled("gitlab", []string{"github"}, nil))
}
