package permission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedTool is one raw tool of fixtures/claude-real with the name each recorded release
// gave it (README "Names").
type recordedTool struct {
	server, tool string
	n1051, n2332 string
}

var recordedTools = []recordedTool{
	{"lit", "literature.search_pubmed", "mcp__lit__literature.search_pubmed", "mcp__lit__literature_search_pubmed"},
	{"lit", "literature_search_pubmed", "mcp__lit__literature_search_pubmed", "mcp__lit__literature_search_pubmed"},
	{"lit", "get+data", "mcp__lit__get+data", "mcp__lit__get_data"},
	{"lit", "搜索文献", "mcp__lit__搜索文献", "mcp__lit______"},
	{"lit", "get_data_for_a_specific_location_and_date_range_extended_with_more_words",
		"mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words",
		"mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words"},
	{"lit", "ok_tool", "mcp__lit__ok_tool", "mcp__lit__ok_tool"},
	{"foo.bar", "get_data", "mcp__foo_bar__get_data", "mcp__foo_bar__get_data"},
	{"foo.bar", "deploy.prod", "mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy_prod"},
	{"com.example.enterprise-search-platform", "query_documents_by_semantic_similarity_and_rank",
		"mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank",
		"mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank"},
	{"my server", "ping", "mcp__my_server__ping", "mcp__my_server__ping"},
}

// The rule files of fixtures/claude-real (README "Rules").
var (
	recordedUser = []ClaudeRule{
		{"mcp__lit", ClaudeAllow, ClaudeScopeUser},
		{"mcp__foo.bar__deploy.prod", ClaudeDeny, ClaudeScopeUser},
		{"mcp__lit__get+data", ClaudeAsk, ClaudeScopeUser},
	}
	recordedLab = []ClaudeRule{
		{"mcp__com_example_enterprise-search-platform", ClaudeAllow, ClaudeScopeProject},
		{"mcp__my_server__ping", ClaudeDeny, ClaudeScopeProject},
		{"mcp__foo_bar__deploy.prod", ClaudeAllow, ClaudeScopeLocal},
	}
	recordedAPI = []ClaudeRule{
		{"mcp__foo_bar__get_data", ClaudeAllow, ClaudeScopeProject},
		{"mcp__com.example.enterprise-search-platform", ClaudeAllow, ClaudeScopeProject},
		{"mcp__lit__literature_search_pubmed", ClaudeDeny, ClaudeScopeProject},
		{"mcp__my_server", ClaudeAsk, ClaudeScopeProject},
	}
)

// TestClaudeDecideRecording replays README "What the result lines show": every tool in the
// three sessions (1.0.51 lab d848c0de, 2.1.332 lab 98492a7d, 2.1.332 api 65553c36). "refused"
// in headless mode is ClaudeOutcomeAsk; "denied" is block; "not offered" is not offered.
func TestClaudeDecideRecording(t *testing.T) {
	ran, ask, block, hidden := ClaudeOutcomeRan, ClaudeOutcomeAsk, ClaudeOutcomeBlock, ClaudeOutcomeNotOffered
	sessions := []struct {
		name    string
		release ClaudeRelease
		rules   []ClaudeRule
		want    []ClaudeOutcome // in recordedTools order
		rule    []string        // the deciding rule ("" for default)
	}{
		{"1.0.51 lab d848c0de", Claude1_0_51, append(append([]ClaudeRule{}, recordedUser...), recordedLab...),
			[]ClaudeOutcome{ran, ran, ran, ran, ran, ran, ask, ran, ran, block},
			[]string{"mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "",
				"mcp__foo_bar__deploy.prod", "mcp__com_example_enterprise-search-platform", "mcp__my_server__ping"}},
		{"2.1.332 lab 98492a7d", Claude2_1_332, append(append([]ClaudeRule{}, recordedUser...), recordedLab...),
			[]ClaudeOutcome{ran, ran, ran, ran, ran, ran, ask, ask, ran, hidden},
			[]string{"mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "mcp__lit", "",
				"", "mcp__com_example_enterprise-search-platform", "mcp__my_server__ping"}},
		{"2.1.332 api 65553c36", Claude2_1_332, append(append([]ClaudeRule{}, recordedUser...), recordedAPI...),
			[]ClaudeOutcome{hidden, hidden, ran, ran, ran, ran, ran, ask, ask, ask},
			[]string{"mcp__lit__literature_search_pubmed", "mcp__lit__literature_search_pubmed", "mcp__lit", "mcp__lit",
				"mcp__lit", "mcp__lit", "mcp__foo_bar__get_data", "", "", "mcp__my_server"}},
	}
	for _, s := range sessions {
		f := ClaudeFeaturesOf(s.release)
		for i, tool := range recordedTools {
			name := tool.n2332
			if s.release == Claude1_0_51 {
				name = tool.n1051
			}
			require.Equal(t, name, s.release.Name(tool.server, tool.tool), "recorded name of %s/%s", tool.server, tool.tool)
			d := ClaudeDecide(f, s.rules, name, true)
			assert.Equal(t, s.want[i], d.Outcome, "%s: %s/%s (%s)", s.name, tool.server, tool.tool, name)
			got := ""
			if d.Rule >= 0 {
				got = s.rules[d.Rule].Text
			}
			assert.Equal(t, s.rule[i], got, "%s: %s/%s deciding rule", s.name, tool.server, tool.tool)
		}
	}
}

func TestClaudeRuleMatchesPerRelease(t *testing.T) {
	cases := []struct {
		rule, name string
		want       map[ClaudeRelease]bool // releases not listed: false
	}{
		// whole names match only the release's own spelling
		{"mcp__foo.bar__deploy.prod", "mcp__foo_bar__deploy.prod", nil},
		{"mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy.prod", all(true)},
		{"mcp__foo_bar__deploy.prod", "mcp__foo_bar__deploy_prod", nil},
		{"mcp__foo.bar__deploy.prod", "mcp__foo.bar__deploy.prod", all(true)}, // 1.0.0's raw spelling
		// server-level: normalized key from 1.0.51, the raw key never
		{"mcp__lit", "mcp__lit__ok_tool", from(Claude1_0_51)},
		{"mcp__com_example_enterprise-search-platform", "mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank", from(Claude1_0_51)},
		{"mcp__com.example.enterprise-search-platform", "mcp__com_example_enterprise-search-platform__query_documents_by_semantic_similarity_and_rank", nil},
		{"mcp__my_server", "mcp__my_server__ping", from(Claude1_0_51)},
		{"mcp__my server", "mcp__my_server__ping", nil},
		// mcp__<s>__* from 2.1.90; partial globs only in 2.1.332; mcp__* never
		{"mcp__lit__*", "mcp__lit__ok_tool", from(Claude2_1_90)},
		{"mcp__lit__get_*", "mcp__lit__get_data", from(Claude2_1_332)},
		{"mcp__lit__get_*", "mcp__lit__get_data_for_a_specific_location_and_date_range_extended_with_more_words", from(Claude2_1_332)},
		{"mcp__lit__get_*", "mcp__lit__ok_tool", nil},
		{"mcp__lit__get_*", "mcp__foo_bar__get_data", nil},
		{"mcp__lit__*data", "mcp__lit__get_data", from(Claude2_1_332)},
		{"mcp__*", "mcp__lit__ok_tool", nil},
		{"mcp__*__*", "mcp__lit__ok_tool", nil},
		{"mcp__li*", "mcp__lit__ok_tool", nil},
		// content never matches an MCP tool; built-in names are not MCP
		{"mcp__lit__ok_tool(x)", "mcp__lit__ok_tool", nil},
		{"mcp__lit(x)", "mcp__lit__ok_tool", nil},
		{"Bash", "mcp__lit__ok_tool", nil},
		{"mcp__lit__ok", "mcp__lit__ok_tool", nil},
	}
	for _, c := range cases {
		for _, r := range ClaudeKnownReleases {
			got := ClaudeRuleMatches(ClaudeFeaturesOf(r), c.rule, c.name)
			assert.Equal(t, c.want[r], got, "%s: rule %q, tool %q", r, c.rule, c.name)
		}
	}
}

func all(v bool) map[ClaudeRelease]bool {
	m := map[ClaudeRelease]bool{}
	for _, r := range ClaudeKnownReleases {
		m[r] = v
	}
	return m
}

func from(first ClaudeRelease) map[ClaudeRelease]bool {
	m := map[ClaudeRelease]bool{}
	for _, r := range ClaudeKnownReleases {
		m[r] = r.AtLeast(first)
	}
	return m
}

// An untrusted project: 2.1.332 ignores the allow rules of its .claude/settings.json but applies
// its deny and ask, and the allow rules of .claude/settings.local.json (run with the 2.1.332
// binary: the local allow ran, the project allow was "Ignoring 1 permissions.allow entry from
// .claude/settings.json"); 1.0.51 applied them all. User allow rules are never gated.
func TestClaudeTrust(t *testing.T) {
	rules := []ClaudeRule{
		{"mcp__foo_bar__get_data", ClaudeAllow, ClaudeScopeProject},
		{"mcp__foo_bar__get_data", ClaudeAllow, ClaudeScopeLocal},
		{"mcp__my_server", ClaudeDeny, ClaudeScopeProject},
		{"mcp__lit", ClaudeAsk, ClaudeScopeProject},
		{"mcp__com_example", ClaudeAllow, ClaudeScopeUser},
	}
	now, old := ClaudeFeaturesOf(Claude2_1_332), ClaudeFeaturesOf(Claude1_0_51)
	assert.Equal(t, ClaudeIgnored, ClaudePairMatch(now, rules[0], "mcp__foo_bar__get_data", false))
	assert.Equal(t, ClaudeMatched, ClaudePairMatch(now, rules[1], "mcp__foo_bar__get_data", false), "the local file is not gated")
	assert.Equal(t, ClaudeMatched, ClaudePairMatch(now, rules[0], "mcp__foo_bar__get_data", true))
	assert.Equal(t, ClaudeMatched, ClaudePairMatch(old, rules[0], "mcp__foo_bar__get_data", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionAllow, 1, ClaudeOutcomeRan}, ClaudeDecide(now, rules, "mcp__foo_bar__get_data", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionDefault, -1, ClaudeOutcomeAsk}, ClaudeDecide(now, rules[:1], "mcp__foo_bar__get_data", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionAllow, 0, ClaudeOutcomeRan}, ClaudeDecide(old, rules, "mcp__foo_bar__get_data", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionDeny, 2, ClaudeOutcomeNotOffered}, ClaudeDecide(now, rules, "mcp__my_server__ping", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionAsk, 3, ClaudeOutcomeAsk}, ClaudeDecide(now, rules, "mcp__lit__ok_tool", false))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionAllow, 4, ClaudeOutcomeRan}, ClaudeDecide(now, rules, "mcp__com_example__q", false))
	// 1.0.51 has no ask list: the ask rule names the tool but is ignored.
	assert.Equal(t, ClaudeIgnored, ClaudePairMatch(old, rules[3], "mcp__lit__ok_tool", true))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionDefault, -1, ClaudeOutcomeAsk}, ClaudeDecide(old, rules, "mcp__lit__ok_tool", true))
}

func TestParseClaudeRelease(t *testing.T) {
	for in, want := range map[string]ClaudeRelease{"2.1.332": Claude2_1_332, "v1.0.51": Claude1_0_51, "2.0.14-beta.1": Claude2_0_14, " 1.0.0 ": Claude1_0_0} {
		got, err := ParseClaudeRelease(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "2.1", "2.1.x", "2.+1.3", "1.0.0.0", "2.-1.0", "x2.1.3"} {
		_, err := ParseClaudeRelease(in)
		assert.Error(t, err, in)
	}
	assert.True(t, Claude2_1_332.AtLeast(Claude2_1_90))
	assert.False(t, Claude2_1_90.AtLeast(Claude2_1_332))
	assert.Equal(t, "2.1.90", Claude2_1_90.String())
	assert.Equal(t, Claude2_1_332, ClaudeNewest())
}

// "mcp__*" (run with the 2.1.332 binary): in ask every MCP call was refused
// (reasonCode rule:userSettings), in deny no MCP tool was offered, in allow it was skipped as an
// invalid rule. 1.0.51's matcher compares "*" as a server name: never.
func TestClaudeServerStar(t *testing.T) {
	now, old := ClaudeFeaturesOf(Claude2_1_332), ClaudeFeaturesOf(Claude1_0_51)
	for _, k := range []ClaudeKind{ClaudeDeny, ClaudeAsk} {
		assert.True(t, ClaudeKindMatches(now, k, "mcp__*", "mcp__srv2__t1"), k)
		assert.False(t, ClaudeKindMatches(now, k, "mcp__*", "Bash"), k)
		assert.False(t, ClaudeKindMatches(old, k, "mcp__*", "mcp__srv2__t1"), k)
	}
	assert.False(t, ClaudeKindMatches(now, ClaudeAllow, "mcp__*", "mcp__srv2__t1"))
	rules := []ClaudeRule{{"mcp__lit", ClaudeAllow, ClaudeScopeUser}, {"mcp__*", ClaudeDeny, ClaudeScopeUser}}
	assert.Equal(t, ClaudeDecision{ClaudeDecisionDeny, 1, ClaudeOutcomeNotOffered}, ClaudeDecide(now, rules, "mcp__lit__get_a", true))
	assert.Equal(t, ClaudeDecision{ClaudeDecisionAllow, 0, ClaudeOutcomeRan}, ClaudeDecide(old, rules, "mcp__lit__get_a", true))
}

// Legacy allowedTools of ~/.claude.json: 1.0.51 reads them as allow rules (rcA); 2.1.332 does
// not (run with the binary: the entry granted nothing and stayed in the file).
func TestClaudeLegacyAllowedTools(t *testing.T) {
	r := ClaudeRule{"mcp__srv2", ClaudeAllow, ClaudeScopeLegacy}
	assert.Equal(t, ClaudeMatched, ClaudePairMatch(ClaudeFeaturesOf(Claude1_0_51), r, "mcp__srv2__t1", true))
	assert.Equal(t, ClaudeIgnored, ClaudePairMatch(ClaudeFeaturesOf(Claude2_1_332), r, "mcp__srv2__t1", true))
	assert.Equal(t, ClaudeMatched, ClaudePairMatch(ClaudeFeaturesOf(Claude1_0_51), r, "mcp__srv2__t1", false), "not trust-gated")
}
