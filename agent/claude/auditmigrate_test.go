package claude

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

func migrations(t *testing.T, p string, allowShared bool, extra ...permission.ClaudeRule) (ClaudeInput, []ClaudeMigration) {
	in := claudeFixtureInput(t, p, permission.Claude2_1_332, permission.Claude1_0_51)
	var rules []permission.ClaudeRule
	for _, r := range in.Rules {
		rules = append(rules, r.ClaudeRule)
	}
	rules = append(rules, extra...)
	return in, PlanClaudeRules(rules, in.Tools, permission.Claude2_1_332, allowShared)
}

func summary(in ClaudeInput, ms []ClaudeMigration) []string {
	var out []string
	for _, m := range ms {
		out = append(out, string(m.Action)+" "+m.Old+" → "+m.New+" ["+m.WrittenFor+"] before: "+toolList(m.Before)+"; after: "+toolList(m.After)+"; extra: "+toolList(m.Extra))
	}
	return out
}

// The fixture's rule files under 2.1.332: the user deny (1.0.0's raw spelling), the user ask and
// the lab local allow (1.0.51's spelling), the api allow of the raw server key.
func TestPlanClaudeRulesFixture(t *testing.T) {
	in, lab := migrations(t, "lab", false)
	assert.Equal(t, []string{
		"rewrite mcp__foo.bar__deploy.prod → mcp__foo_bar__deploy_prod [raw] before: foo.bar/deploy.prod; after: foo.bar/deploy.prod; extra: ",
		"rewrite mcp__lit__get+data → mcp__lit__get_data [server-normalized] before: lit/get+data; after: lit/get+data; extra: ",
		"rewrite mcp__foo_bar__deploy.prod → mcp__foo_bar__deploy_prod [server-normalized] before: foo.bar/deploy.prod; after: foo.bar/deploy.prod; extra: ",
	}, summary(in, lab))
	in, api := migrations(t, "api", false)
	assert.Equal(t, []string{
		"rewrite mcp__foo.bar__deploy.prod → mcp__foo_bar__deploy_prod [raw] before: foo.bar/deploy.prod; after: foo.bar/deploy.prod; extra: ",
		"rewrite mcp__lit__get+data → mcp__lit__get_data [server-normalized] before: lit/get+data; after: lit/get+data; extra: ",
		"rewrite mcp__com.example.enterprise-search-platform → mcp__com_example_enterprise-search-platform [raw server key] before: com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank; after: com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank; extra: ",
	}, summary(in, api))
}

// 1.0.51's mcp__lit__literature.search_pubmed becomes mcp__lit__literature_search_pubmed, a
// name literature_search_pubmed shares: an allow would grant it (kept without --allow-shared),
// a deny restricts it too (rewritten, noted).
func TestPlanClaudeRulesSharedName(t *testing.T) {
	allow := permission.ClaudeRule{Text: "mcp__lit__literature.search_pubmed", Kind: permission.ClaudeAllow, Scope: permission.ClaudeScopeUser}
	deny := permission.ClaudeRule{Text: "mcp__lit__literature.search_pubmed", Kind: permission.ClaudeDeny, Scope: permission.ClaudeScopeUser}
	shared := mcpname.ClaudeTool{Server: "lit", Tool: "literature_search_pubmed"}
	for _, c := range []struct {
		rule        permission.ClaudeRule
		allowShared bool
		action      MigrationAction
		note        string
	}{
		{allow, false, MigrateKeep, "mcp__lit__literature_search_pubmed would also grant lit/literature_search_pubmed (a shared name): not rewritten without --allow-shared"},
		{allow, true, MigrateRewrite, "also grants lit/literature_search_pubmed (a shared name; --allow-shared)"},
		{deny, false, MigrateRewrite, "also restricts lit/literature_search_pubmed (a shared name)"},
	} {
		_, ms := migrations(t, "lab", c.allowShared, c.rule)
		m := ms[len(ms)-1]
		require.Equal(t, c.rule.Text, m.Old)
		assert.Equal(t, c.action, m.Action)
		assert.Equal(t, "mcp__lit__literature_search_pubmed", m.New)
		assert.Equal(t, []mcpname.ClaudeTool{shared}, m.Extra)
		assert.Equal(t, c.note, m.Note)
		assert.True(t, m.Grants(permission.ClaudeAllow))
	}
}

func TestPlanClaudeRulesLeavesOthersAlone(t *testing.T) {
	tools := []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}, {Server: "foo_bar", Tool: "x"}}
	rules := []permission.ClaudeRule{
		{Text: "mcp__foo_bar__deploy_prod", Kind: permission.ClaudeDeny}, // current spelling
		{Text: "Bash(rm *)", Kind: permission.ClaudeDeny},
		{Text: "mcp__foo.bar__deploy.prod(x)", Kind: permission.ClaudeDeny},
		{Text: "mcp__nothing__here", Kind: permission.ClaudeDeny},
		{Text: "mcp__foo.bar", Kind: permission.ClaudeAllow}, // raw key; foo_bar normalizes alike
		{Text: "mcp__foo.bar__*", Kind: permission.ClaudeDeny},
	}
	ms := PlanClaudeRules(rules, tools, permission.Claude2_1_332, false)
	require.Len(t, ms, 2)
	assert.Equal(t, 4, ms[0].Rule)
	assert.Equal(t, MigrateKeep, ms[0].Action, "would grant foo_bar/x")
	assert.Equal(t, "mcp__foo_bar", ms[0].New)
	assert.Equal(t, []mcpname.ClaudeTool{{Server: "foo_bar", Tool: "x"}}, ms[0].Extra)
	assert.Equal(t, MigrateRewrite, ms[1].Action)
	assert.Equal(t, "mcp__foo_bar__*", ms[1].New)
	// under 2.0.14 mcp__<server>__* is not supported: kept
	ms = PlanClaudeRules(rules[5:], tools, permission.Claude2_0_14, false)
	require.Len(t, ms, 1)
	assert.Equal(t, MigrateKeep, ms[0].Action)
	assert.Contains(t, ms[0].Note, "matches nothing under 2.0.14")
}

// The fixture's lab: the user deny (raw spelling) and the local allow (1.0.51's spelling) of
// foo.bar/deploy.prod are both migrated to mcp__foo_bar__deploy_prod; the deny then overrides
// the allow under 2.1.332 (deploy.prod not offered) where 1.0.51 ran it. The ask of get+data
// has no migrated allow of that tool.
func TestClaudeMigrationOverridesFixture(t *testing.T) {
	in, lab := migrations(t, "lab", false)
	var ms []ClaudeMigratedRule
	for _, m := range lab {
		ms = append(ms, ClaudeMigratedRule{Kind: in.Rules[m.Rule].Kind, ClaudeMigration: m})
	}
	require.Len(t, ms, 3)
	got := ClaudeMigrationOverrides(ms)
	assert.Equal(t, []ClaudeOverride{{Restrict: 0, Allow: 2, Tools: []mcpname.ClaudeTool{{Server: "foo.bar", Tool: "deploy.prod"}}}}, got)
	// A kept allow is no override (it stays in its legacy spelling).
	ms[2].Action = MigrateKeep
	assert.Empty(t, ClaudeMigrationOverrides(ms))
}
