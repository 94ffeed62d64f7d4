package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/reports"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/claude"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/rulefix"
)

// claudeRulesCopy copies the fixture's rule files (and sessions) into a temp dir and returns it.
func claudeRulesCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	copyTree(t, "../../"+claudeFixture, dir)
	return dir
}

func readFileString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

var ruleFiles = []string{"dot-claude/settings.json", "project-settings/lab/settings.json", "project-settings/lab/settings.local.json",
	"project-settings/api/settings.json", "claude.json"}

func snapshotRules(t *testing.T, dir string) map[string]string {
	m := map[string]string{}
	for _, f := range ruleFiles {
		m[f] = readFileString(t, filepath.Join(dir, f))
	}
	return m
}

func TestFixRulesDryRunApplyUndo(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	orig := snapshotRules(t, dir)
	args := []string{"fix", "--rules", "--inventory", inv, "--project-key", "/home/demo/src/lab"}
	paths := []string{filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab")}

	res := runCLI(t, env, "", append(append([]string{}, args...), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.out, `dot-claude/settings.json:4:14 user permissions.deny[0]: rewrite "mcp__foo.bar__deploy.prod" → mcp__foo_bar__deploy_prod
    matched before (raw spelling): foo.bar/deploy.prod
    mcp__foo_bar__deploy_prod matches under 2.1.332: foo.bar/deploy.prod
`)
	assert.Contains(t, res.out, `settings.local.json:4:7 local permissions.allow[0]: rewrite "mcp__foo_bar__deploy.prod" → mcp__foo_bar__deploy_prod
    matched before (server-normalized spelling): foo.bar/deploy.prod`)
	// Both rewrites of deploy.prod: the deny would override the allow (issue 11, claudeaudit's note).
	assert.Contains(t, res.out, `    CONFLICT: with both rewrites this rule overrides the migrated allow rule "mcp__foo_bar__deploy.prod" → mcp__foo_bar__deploy_prod (local `)
	assert.Contains(t, res.out, `settings.local.json:4:7) for foo.bar/deploy.prod under 2.1.332 (deny wins over allow: not offered); rewrite only one of them if the allow is meant to decide
`)
	assert.Contains(t, res.out, `    CONFLICT: overridden for foo.bar/deploy.prod under 2.1.332 by the migrated deny rule "mcp__foo.bar__deploy.prod" → mcp__foo_bar__deploy_prod (user `)
	assert.Equal(t, 2, strings.Count(res.out, "CONFLICT:"), "the ask of get+data overrides no migrated allow")
	jres := runCLI(t, env, "", append(append(append([]string{}, args...), "--format", "json"), paths...)...)
	require.Equal(t, 0, jres.code, jres.err)
	var plan struct {
		Rules []struct {
			Old       string   `json:"old"`
			Overrides []string `json:"overrides"`
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(jres.out), &plan))
	require.Len(t, plan.Rules, 3)
	assert.Len(t, plan.Rules[0].Overrides, 1)
	assert.Empty(t, plan.Rules[1].Overrides)
	assert.Len(t, plan.Rules[2].Overrides, 1)
	assert.Contains(t, res.out, "dry-run: nothing was changed")
	assert.Equal(t, orig, snapshotRules(t, dir), "a dry run writes nothing")

	res = runCLI(t, env, "", append(append(append([]string{}, args...), "--apply", "--yes"), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.out, "rewrote 3 rules in 2 files")
	after := snapshotRules(t, dir)
	// Only the rule strings changed, byte for byte.
	assert.Equal(t, strings.NewReplacer(`"mcp__foo.bar__deploy.prod"`, `"mcp__foo_bar__deploy_prod"`, `"mcp__lit__get+data"`, `"mcp__lit__get_data"`).
		Replace(orig["dot-claude/settings.json"]), after["dot-claude/settings.json"])
	assert.Equal(t, strings.Replace(orig["project-settings/lab/settings.local.json"], `"mcp__foo_bar__deploy.prod"`, `"mcp__foo_bar__deploy_prod"`, 1),
		after["project-settings/lab/settings.local.json"])
	for _, f := range []string{"project-settings/lab/settings.json", "project-settings/api/settings.json", "claude.json"} {
		assert.Equal(t, orig[f], after[f], f)
	}
	i := strings.Index(res.out, "undo with: sessionfix undo --state-dir ")
	require.Positive(t, i, res.out)
	fields := strings.Fields(res.out[i:])
	runID := fields[6]

	// Again: nothing left to migrate.
	res = runCLI(t, env, "", append(append([]string{}, args...), paths...)...)
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.out, "no legacy-spelled rule")

	res = runCLI(t, env, "", "undo", "--yes", runID)
	require.Equal(t, 0, res.code, res.out+res.err)
	assert.Equal(t, orig, snapshotRules(t, dir), "undo restores the rule files")
}

// Comments and formatting survive: only the string token is replaced.
func TestFixRulesKeepsCommentsAndFlagsSharedGrants(t *testing.T) {
	env := testEnv(t)
	proj := filepath.Join(env.Home, "src", "app")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, ".claude"), 0o755))
	settings := "{\r\n  // team rules — keep\r\n  \"permissions\": {\r\n    \"allow\": [\"mcp__lit__literature.search_pubmed\", /* x */ \"mcp__com.example\"],\r\n    \"deny\":  [ \"mcp__lit__literature.search_pubmed\" ],\r\n  },\r\n}\r\n"
	sp := filepath.Join(proj, ".claude", "settings.json")
	require.NoError(t, os.WriteFile(sp, []byte(settings), 0o644))
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"lit": {"tools": ["literature.search_pubmed", "literature_search_pubmed"]}, "com.example": {"tools": ["q"]}}}`), 0o644))

	res := runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project", proj, "--apply", "--yes", "--format", "json")
	require.Equal(t, 0, res.code, res.err)
	var doc claude.FixRulesReport
	require.NoError(t, json.Unmarshal([]byte(res.out), &doc))
	require.Len(t, doc.Rules, 3)
	assert.Equal(t, "keep", doc.Rules[0].Action, "an allow would grant literature_search_pubmed")
	assert.Equal(t, []string{"lit/literature_search_pubmed"}, doc.Rules[0].Extra)
	assert.Equal(t, "rewrite", doc.Rules[1].Action)
	assert.Equal(t, "mcp__com_example", doc.Rules[1].New)
	assert.Equal(t, "rewrite", doc.Rules[2].Action, "a deny restricts more, never less")
	assert.Equal(t, "also restricts lit/literature_search_pubmed (a shared name)", doc.Rules[2].Note)
	assert.Equal(t, "apply", doc.Mode)
	want := strings.NewReplacer(`/* x */ "mcp__com.example"`, `/* x */ "mcp__com_example"`,
		`[ "mcp__lit__literature.search_pubmed" ]`, `[ "mcp__lit__literature_search_pubmed" ]`).Replace(settings)
	assert.Equal(t, want, readFileString(t, sp))

	res = runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project", proj, "--apply", "--yes", "--allow-shared")
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.out, "SHARED NAME: also lit/literature_search_pubmed")
	assert.Contains(t, readFileString(t, sp), `"allow": ["mcp__lit__literature_search_pubmed", /* x */`)
}

// Without --rules, fix never writes a rule file, even with --apply on a Claude Code home.
func TestFixWithoutRulesNeverWritesRuleFiles(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	orig := snapshotRules(t, dir)
	res := runCLI(t, env, "", "fix", "--apply", "--yes", "--inventory", inv, dir)
	assert.NotEqual(t, exitcode.Usage, res.code, res.err)
	assert.Equal(t, orig, snapshotRules(t, dir))
	res = runCLI(t, env, "", "fix", "--apply", "--yes", "--inventory", inv, filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))
	assert.NotEqual(t, exitcode.Usage, res.code, res.err)
	assert.Equal(t, orig, snapshotRules(t, dir))
}

func TestFixRulesUsage(t *testing.T) {
	env := testEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--claude-version", "2.1.332"}, "--claude-version goes with --rules"},
		{[]string{"--rules"}, "fix --rules needs --inventory"},
		{[]string{"--rules", "--inventory", "x.json", "--agent", "qwen"}, "--agent qwen has no rule migration"},
		{[]string{"--rules", "--inventory", "x.json", "--claude-version", "two"}, "--claude-version"},
		{[]string{"--rules", "--inventory", "x.json", "--apply"}, "--apply needs --yes"},
	} {
		res := runCLI(t, env, "", append([]string{"fix"}, c.args...)...)
		assert.Equal(t, exitcode.Usage, res.code, "%v: %s", c.args, res.err)
		assert.Contains(t, res.err, c.want, "%v", c.args)
	}
}

// A legacy-spelled rule in ~/.claude.json allowedTools is not rewritten there for 2.1.332, which
// no longer reads that list: the plan says where to move it; for 1.0.51 it is rewritten in place.
func TestFixRulesLegacyAllowedTools(t *testing.T) {
	env := testEnv(t)
	proj := filepath.Join(env.Home, "src", "app")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	cj := filepath.Join(env.Home, ".claude.json")
	orig := `{"projects": {"` + proj + `": {"allowedTools": ["mcp__foo.bar__deploy.prod"]}}}`
	require.NoError(t, os.WriteFile(cj, []byte(orig), 0o644))
	inv := filepath.Join(t.TempDir(), "inv.json")
	require.NoError(t, os.WriteFile(inv, []byte(`{"servers": {"foo.bar": {"tools": ["deploy.prod"]}}}`), 0o644))
	res := runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project", proj, "--apply", "--yes")
	require.Equal(t, 0, res.code, res.err)
	assert.Contains(t, res.out, `legacy projects["`+proj+`"].allowedTools[0]: keep "mcp__foo.bar__deploy.prod" → (kept)`)
	assert.Contains(t, res.out, "2.1.332 no longer reads allowedTools of ~/.claude.json: move the rule, as mcp__foo_bar__deploy_prod, into the project's .claude/settings.local.json")
	assert.Equal(t, orig, readFileString(t, cj))
	res = runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project", proj, "--claude-version", "1.0.51", "--apply", "--yes")
	require.Equal(t, 0, res.code, res.err)
	assert.Equal(t, strings.Replace(orig, "mcp__foo.bar__deploy.prod", "mcp__foo_bar__deploy.prod", 1), readFileString(t, cj))
}

// TestFixRulesRefusalFromRooms: the flags --rules refuses are the naming flags it does not read
// and every other agent's own options, named from the rooms' data (no agent named in cmd); the
// migrating agent's own options (--allow-shared, which it reads) are not among them.
func TestFixRulesRefusalFromRooms(t *testing.T) {
	a := rulefix.Default()
	require.NotNil(t, a)
	names, set := rulefix.Refused(a, false, agent.Values{})
	assert.False(t, set)
	assert.Equal(t, []string{"--discover", "--keep-truncated", "--rewrite-lossy", "--codex-config", "--kilo-config"}, names)
	assert.Equal(t, "--discover, --keep-truncated, --rewrite-lossy, --codex-config and --kilo-config", reports.AndList(names))
	_, set = rulefix.Refused(a, false, agent.Values{"codex-config": {"c.toml"}})
	assert.True(t, set, "another agent's option given")
	_, set = rulefix.Refused(a, false, agent.Values{"allow-shared": {"true"}})
	assert.False(t, set, "the migrating agent's own options are not refused here (--allow-shared is read: RuleFix.Uses)")
	_, set = rulefix.Refused(a, true, nil)
	assert.True(t, set)
	assert.Equal(t, []string{"plan-out", "plan", "fail-on", "force", "all-users", "report", "mcp-config", "profile", "busy-timeout", "gemini-version", "before", "approval-mode", "copilot-version", "rules-from"}, rulefix.NotTaken(a),
		"the migrating agent's options it does not read (RuleFix.Uses) are refused with the flags it has no use for")
	env := testEnv(t)
	r := runCLI(t, env, "", "fix", "--rules", "--inventory", "i.json", "--codex-config", "c.toml", ".")
	assert.Equal(t, exitcode.Usage, r.code)
	assert.Contains(t, r.err, "--rules migrates "+all.RuleFixOf(a).Rules+" only: --discover, --keep-truncated, --rewrite-lossy, --codex-config and --kilo-config do not go with it")
}
