package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFixRulesBrokenSettingsFileIsAProblem: a rule file that is not valid JSON is an error naming
// file, line and column on stderr (once, the path not doubled), the other rule files are still
// migrated, exit 3. Before, fix --rules panicked (nil RuleSnapshot) after printing the error with
// its path twice.
func TestFixRulesBrokenSettingsFileIsAProblem(t *testing.T) {
	env := testEnv(t)
	dir := claudeRulesCopy(t)
	inv, err := filepath.Abs("../../fixtures/claude-audit/inventory.json")
	require.NoError(t, err)
	broken := filepath.Join(dir, "project-settings", "lab", "settings.json")
	require.NoError(t, os.WriteFile(broken, []byte("{\n \"env\": {\"OPENAI_API_KEY\": \"sk-SECRET7777\"\n \"permissions\": {}}\n"), 0o644))
	res := runCLI(t, env, "", "fix", "--rules", "--inventory", inv, "--project-key", "/home/demo/src/lab",
		filepath.Join(dir, "dot-claude"), filepath.Join(dir, "project-settings", "lab"))
	assert.Equal(t, exitPartial, res.code, res.err)
	assert.NotContains(t, res.err, "panic")
	assert.Contains(t, res.err, broken+":3:2: not valid JSON")
	assert.Equal(t, 1, strings.Count(res.err, broken), "the path once: %s", res.err)
	assert.NotContains(t, res.out+res.err, "SECRET")
	assert.Contains(t, res.out, `dot-claude/settings.json:4:14 user permissions.deny[0]: rewrite "mcp__foo.bar__deploy.prod"`)
}

// TestPlanRecordsClaudeNamingOptions: a plan made with --mcp-config and --allow-shared records
// them (options.mcp_config, options.allow_shared) and --plan plans again with them, so the plan
// applies as made; given again with --plan they are usage errors, as every other naming flag.
// Before, the plan recorded neither: --plan re-planned without the server keys of --mcp-config
// and without --allow-shared and refused every store ("planning it again does not give the
// planned edits", exit 3).
func TestPlanRecordsClaudeNamingOptions(t *testing.T) {
	env := testEnv(t)
	dir := copyClaudeFixture(t, t.TempDir())
	cfg := filepath.Join(dir, "mcp-config.json")
	plan := filepath.Join(t.TempDir(), "plan.json")
	r := runCLI(t, env, "", "fix", "--allow-shared", "--mcp-config", cfg, "--plan-out", plan, filepath.Join(dir, "dot-claude"))
	require.Equal(t, 0, r.code, r.err)
	b, err := os.ReadFile(plan)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"allow_shared": true`)
	assert.Contains(t, string(b), `"mcp_config": [`+"\n"+`      "`+cfg+`"`)

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan, "--allow-shared")
	assert.Equal(t, exitUsage, r.code, r.err)
	assert.Contains(t, r.err, "drop --allow-shared")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--plan", plan)
	assert.Equal(t, 0, r.code, r.err)
	assert.NotContains(t, r.err, "does not give the planned edits")
	assert.Contains(t, r.out, "rewrote 8 names in 2 files")
}
