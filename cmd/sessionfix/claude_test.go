package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const claudeRealFx = "../../fixtures/claude-real"

// copyClaudeFixture copies fixtures/claude-real to dir (writable) and returns dir.
func copyClaudeFixture(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, exec.Command("cp", "-r", claudeRealFx+"/.", dir).Run())
	require.NoError(t, exec.Command("chmod", "-R", "u+w", dir).Run())
	return dir
}

const claude1051 = "dot-claude/projects/-home-demo-src-lab/dd19a9ca-e09f-48a6-9120-d559cf0db6fa.jsonl"

// TestClaudeFixApplyUndo: a copied ~/.claude (with its claude.json beside it) given as PATH,
// with the --mcp-config the sessions were recorded with: the two 1.0.51 sessions get 2.1.332's
// names (3 each; the shared one only with --allow-shared), 2.1.332's own sessions stay byte for
// byte, over-long names are kept and named; undo gives back every byte.
func TestClaudeFixApplyUndo(t *testing.T) {
	env := testEnv(t)
	dir := copyClaudeFixture(t, t.TempDir())
	cfg := filepath.Join(dir, "mcp-config.json")
	orig, err := os.ReadFile(filepath.Join(dir, claude1051))
	require.NoError(t, err)

	r := runCLI(t, env, "", "scan", "--format", "json", "--mcp-config", cfg, filepath.Join(dir, "dot-claude"))
	require.Equal(t, 0, r.code, r.err)
	var rep struct {
		Totals struct {
			Rewrite       int `json:"rewrite"`
			RewriteStores int `json:"rewrite_stores"`
		} `json:"totals"`
		Stores []struct{ Kind string } `json:"stores"`
		Claude []struct {
			Config  string `json:"config"`
			Keys    int    `json:"keys"`
			Version string `json:"version"`
		} `json:"claude"`
		SettingsRules []any `json:"settings_rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &rep), r.out)
	assert.Equal(t, 6, rep.Totals.Rewrite)
	assert.Equal(t, 2, rep.Totals.RewriteStores)
	assert.Len(t, rep.Stores, 7)
	for _, s := range rep.Stores {
		assert.Equal(t, "claude-session", s.Kind)
	}
	require.Len(t, rep.Claude, 1)
	assert.Equal(t, filepath.Join(dir, "claude.json"), rep.Claude[0].Config, "the claude.json beside the copy")
	assert.Equal(t, 4, rep.Claude[0].Keys)
	assert.Equal(t, "2.1.332", rep.Claude[0].Version)
	assert.Empty(t, rep.SettingsRules, "a Claude config dir's settings.json is not read as Qwen settings")

	r = runCLI(t, env, "", "fix", "--apply", "--yes", "--allow-shared", "--mcp-config", cfg, filepath.Join(dir, "dot-claude"))
	require.Equal(t, 0, r.code, r.out+r.err)
	assert.Contains(t, r.out, "rewrote 8 names in 2 files")
	assert.Contains(t, r.out, "claude-over-long")
	b, err := os.ReadFile(filepath.Join(dir, claude1051))
	require.NoError(t, err)
	for _, gone := range []string{`"mcp__foo_bar__deploy.prod"`, `"mcp__lit__get+data"`, `"mcp__lit__搜索文献"`, `"mcp__lit__literature.search_pubmed"`} {
		assert.NotContains(t, string(b), gone)
	}
	// Only name tokens change: 搜索文献 (12 bytes) becomes ____ (4); the others keep their length.
	assert.Equal(t, len(orig)-8, len(b))
	runID := ""
	for _, l := range strings.Split(r.out, "\n") {
		if strings.HasPrefix(l, "run ") {
			runID = strings.Fields(l)[1]
			runID = strings.TrimSuffix(runID, ";")
		}
	}
	require.NotEmpty(t, runID, r.out)
	r = runCLI(t, env, "", "undo", runID)
	require.Equal(t, 0, r.code, r.out+r.err)
	b, err = os.ReadFile(filepath.Join(dir, claude1051))
	require.NoError(t, err)
	assert.Equal(t, orig, b)
}

// TestClaudeDefaultRoot: --agent claude without PATH reads $CLAUDE_CONFIG_DIR/projects (else
// ~/.claude/projects), with the .claude.json of that directory; a missing one is an error naming
// what was tried.
func TestClaudeDefaultRoot(t *testing.T) {
	env := testEnv(t)
	r := runCLI(t, env, "", "scan", "--agent", "claude")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.err, "no Claude Code sessions found: tried $CLAUDE_CONFIG_DIR (not set), so ~/.claude")

	dir := copyClaudeFixture(t, t.TempDir())
	cfgDir := filepath.Join(dir, "dot-claude")
	// $CLAUDE_CONFIG_DIR keeps .claude.json inside; give it MCP servers so no --mcp-config is needed.
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, ".claude.json"), []byte(`{"mcpServers": {"lit": {"command": "x"}, "foo.bar": {"command": "x"}}}`), 0o644))
	get := env.Getenv
	env.Getenv = func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return cfgDir
		}
		return get(k)
	}
	r = runCLI(t, env, "", "fix", "--agent", "claude")
	require.Equal(t, 0, r.code, r.err)
	assert.Contains(t, r.out, "would rewrite 6 names in 2 files")
	assert.Contains(t, r.out, "config "+filepath.Join(cfgDir, ".claude.json")+"; 2 server keys from "+filepath.Join(cfgDir, ".claude.json")+" (2)")
	// Qwen's --agent leaves Claude Code sessions out, with a warning.
	r = runCLI(t, env, "", "scan", "--agent", "qwen", filepath.Join(cfgDir, "projects"))
	assert.Contains(t, r.err, "looks like a Claude Code session: not read with --agent qwen")
}
