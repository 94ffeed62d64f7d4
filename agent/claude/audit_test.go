package claude

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/audit"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// claudeFixtureInput reads the fixture's rule files for project p ("lab" or "api") the way
// audit --agent claude does: user settings, the project's settings.json and
// settings.local.json, ~/.claude.json's trust and allowedTools for /home/demo/src/<p>.
func claudeFixtureInput(t *testing.T, p string, now, before permission.ClaudeRelease) ClaudeInput {
	t.Helper()
	var in ClaudeInput
	add := func(path string, scope permission.ClaudeScope) {
		f, err := LoadRuleFile(path, scope)
		if err != nil {
			require.ErrorContains(t, err, "no such file")
			return
		}
		for _, r := range f.Rules {
			in.Rules = append(in.Rules, ClaudeRuleEntry{ClaudeRule: r.ClaudeRule, File: r.File, Key: r.Key, Index: r.Index, Line: r.Line, Column: r.Column})
		}
	}
	add(claudeReal+"dot-claude/settings.json", permission.ClaudeScopeUser)
	add(claudeReal+"project-settings/"+p+"/settings.json", permission.ClaudeScopeProject)
	add(claudeReal+"project-settings/"+p+"/settings.local.json", permission.ClaudeScopeLocal)
	g, err := LoadGlobalConfig(claudeReal + "claude.json")
	require.NoError(t, err)
	in.Trusted, _ = g.Trusted("/home/demo/src/" + p)
	inv, err := mcpinventory.Load("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	for _, k := range inv.Keys() {
		for _, tl := range inv.Servers[k].Tools {
			in.Tools = append(in.Tools, mcpname.ClaudeTool{Server: k, Tool: tl.Name})
		}
	}
	in.Now, in.Before = now, before
	return in
}

// recorded is README "What the result lines show", per tool: ran, refused (ask in -p),
// denied (block), not offered.
var recorded = map[string]map[string]permission.ClaudeOutcome{}

func init() {
	ran, ask, block, hidden := permission.ClaudeOutcomeRan, permission.ClaudeOutcomeAsk, permission.ClaudeOutcomeBlock, permission.ClaudeOutcomeNotOffered
	lit := []string{"lit/literature.search_pubmed", "lit/literature_search_pubmed", "lit/get+data", "lit/搜索文献",
		"lit/get_data_for_a_specific_location_and_date_range_extended_with_more_words", "lit/ok_tool"}
	set := func(session string, o map[string]permission.ClaudeOutcome, litOutcome permission.ClaudeOutcome) {
		for _, l := range lit {
			if _, ok := o[l]; !ok {
				o[l] = litOutcome
			}
		}
		recorded[session] = o
	}
	set("1.0.51 lab", map[string]permission.ClaudeOutcome{
		"foo.bar/deploy.prod": ran, "foo.bar/get_data": ask,
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": ran,
		"my server/ping": block}, ran)
	set("2.1.332 lab", map[string]permission.ClaudeOutcome{
		"foo.bar/deploy.prod": ask, "foo.bar/get_data": ask,
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": ran,
		"my server/ping": hidden}, ran)
	set("2.1.332 api", map[string]permission.ClaudeOutcome{
		"lit/literature.search_pubmed": hidden, "lit/literature_search_pubmed": hidden,
		"foo.bar/deploy.prod": ask, "foo.bar/get_data": ran,
		"com.example.enterprise-search-platform/query_documents_by_semantic_similarity_and_rank": ask,
		"my server/ping": ask}, ran)
}

// TestClaudeAuditPredictsTheRecording is issue 11's second acceptance bullet as a test: the
// audit of the fixture's rule files predicts, per tool, what 1.0.51 (before) and 2.1.332 (now)
// did in the recorded sessions.
func TestClaudeAuditPredictsTheRecording(t *testing.T) {
	for _, p := range []string{"lab", "api"} {
		rep := RunClaude(claudeFixtureInput(t, p, permission.Claude2_1_332, permission.Claude1_0_51))
		require.Len(t, rep.Tools, 10)
		for _, tl := range rep.Tools {
			id := tl.Server + "/" + tl.Tool
			assert.Equal(t, recorded["2.1.332 "+p][id], tl.Now.Outcome, "2.1.332 %s: %s", p, id)
			if want, ok := recorded["1.0.51 "+p][id]; ok {
				assert.Equal(t, want, tl.Before.Outcome, "1.0.51 %s: %s", p, id)
			}
		}
	}
}

func TestClaudeAuditLab(t *testing.T) {
	rep := RunClaude(claudeFixtureInput(t, "lab", permission.Claude2_1_332, permission.Claude1_0_51))
	assert.True(t, rep.Trusted)
	// The local allow mcp__foo_bar__deploy.prod is 1.0.51's spelling: lost under 2.1.332.
	res := evaluate(rep)
	require.NotEmpty(t, res.Pairs)
	first := res.Pairs[0]
	assert.Equal(t, permission.ChangeLost, first.Change)
	assert.Equal(t, "mcp__foo_bar__deploy.prod", rep.Rules[first.Rule].Text)
	assert.Equal(t, "deploy.prod", rep.Tools[first.Tool].Tool)
	assert.Equal(t, 1, res.Counts.Lost)
	assert.Equal(t, 0, res.Counts.LostRestrictions)
	assert.Empty(t, res.LostRestrictions())
	// ask mcp__lit__get+data names get+data in 1.0.51 but 1.0.51 had no ask list; now it
	// names nothing.
	for _, pr := range res.Pairs {
		if rep.Rules[pr.Rule].Text == "mcp__lit__get+data" && rep.Tools[pr.Tool].Tool == "get+data" {
			assert.Equal(t, permission.ClaudeIgnored, rep.BeforeMatch(pr.Rule, pr.Tool))
			assert.Equal(t, rules.NotApplied, pr.Before)
			assert.Equal(t, rules.No, pr.Now)
			assert.Equal(t, permission.ChangeSame, pr.Change)
		}
	}
	// the shared name: literature_search_pubmed is unreachable under 2.1.332
	tools := audit.Build(rep.RuleAudit(&ClaudeLoaded{}, nil), false, time.Time{}, "test").Tools
	for i, tl := range rep.Tools {
		if tl.Tool == "literature_search_pubmed" {
			assert.True(t, tl.Now.Unreachable)
			assert.Equal(t, "lit/literature.search_pubmed (unreachable: lit/literature.search_pubmed answers)", tools.Rows[i][10])
			assert.False(t, tl.Before.Unreachable)
			assert.Empty(t, tl.Before.SharedWith)
		}
	}
	assert.Equal(t, 2, res.Counts.Changed, "deploy.prod ran→ask, ping block→not offered")
}

// From 1.0.0 (raw names) the user deny mcp__foo.bar__deploy.prod denied deploy.prod; under
// 2.1.332 it denies nothing: a lost restriction, listed first.
func TestClaudeAuditLostRestriction(t *testing.T) {
	rep := RunClaude(claudeFixtureInput(t, "lab", permission.Claude2_1_332, permission.Claude1_0_0))
	r := audit.Build(rep.RuleAudit(&ClaudeLoaded{}, nil), false, time.Time{}, "test")
	lost := r.Result.LostRestrictions()
	require.Len(t, lost, 1)
	assert.Equal(t, lost[0], r.Result.Pairs[0])
	assert.Equal(t, "mcp__foo.bar__deploy.prod", rep.Rules[lost[0].Rule].Text)
	assert.Equal(t, permission.ClaudeDeny, rep.Rules[lost[0].Rule].Kind)
	tl := rep.Tools[lost[0].Tool]
	assert.Equal(t, "deploy.prod", tl.Tool)
	assert.Equal(t, "mcp__foo.bar__deploy.prod", tl.Before.Name)
	assert.Equal(t, permission.ClaudeOutcomeBlock, tl.Before.Outcome)
	assert.Equal(t, permission.ClaudeOutcomeAsk, tl.Now.Outcome)
	assert.Equal(t, 1, r.Result.Counts.LostRestrictions)
	row := r.Pairs.Rows[0]
	assert.Equal(t, []string{claudeReal + "dot-claude/settings.json", "user", "permissions.deny", "0", "mcp__foo.bar__deploy.prod", "deny",
		"foo.bar", "deploy.prod", "mcp__foo_bar__deploy_prod", "mcp__foo.bar__deploy.prod", "no", "match", "lost"}, row)
}

// An untrusted api project under 2.1.332: its allow rules are ignored (get_data asks), its
// deny still hides the literature tools.
func TestClaudeAuditUntrusted(t *testing.T) {
	in := claudeFixtureInput(t, "api", permission.Claude2_1_332, permission.Claude1_0_51)
	in.Trusted = false
	rep := RunClaude(in)
	for _, tl := range rep.Tools {
		switch tl.Server + "/" + tl.Tool {
		case "foo.bar/get_data":
			assert.Equal(t, permission.ClaudeOutcomeAsk, tl.Now.Outcome)
			assert.Equal(t, permission.ClaudeOutcomeRan, tl.Before.Outcome, "1.0.51 applied it regardless of trust")
		case "lit/literature.search_pubmed":
			assert.Equal(t, permission.ClaudeOutcomeNotOffered, tl.Now.Outcome)
		}
	}
	for _, p := range evaluate(rep).Pairs {
		if rep.Rules[p.Rule].Text == "mcp__foo_bar__get_data" && rep.Tools[p.Tool].Tool == "get_data" {
			assert.Equal(t, rules.NotApplied, p.Now)
			assert.Equal(t, permission.ChangeLost, p.Change)
		}
	}
}

// evaluate is the engine's evaluation of rep (lost restrictions first).
func evaluate(rep *ClaudeReport) *rules.Result {
	return rules.Evaluate(rep.Evaluation(), rules.LostFirst)
}
