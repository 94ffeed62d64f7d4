package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/reports/htmltest"
)

// TestHTMLFits1280 (issue 23 item 13): the HTML pages sessionfix writes — the Qwen Code and
// Claude Code audits of the genuine fixtures and fix --report's page — show every table whole
// in a 1,280-pixel-wide window of a real Chromium: no table off-screen, none scrolling within
// its section, the page itself not scrolling sideways. Before, the audits' pairs tables were
// about 2,000 px wide (cells never wrapped): now, rule, before and change off-screen.
func TestHTMLFits1280(t *testing.T) {
	bin := htmltest.Chromium(t)
	dir := t.TempDir()
	pages := map[string][]string{}

	qs, err := filepath.Abs("../../fixtures/qwen-settings")
	require.NoError(t, err)
	pages["qwen-audit.html"] = []string{"audit", "--settings", qs + "/settings.json", "--settings", qs + "/workspace/.qwen/settings.json",
		"--agents", qs + "/workspace/.qwen/agents", "--inventory", qs + "/inventory.json", "--format", "html"}

	home := filepath.Join(dir, "home")
	copyTree(t, "../../fixtures/claude-real/dot-claude", filepath.Join(home, ".claude"))
	b, err := os.ReadFile("../../fixtures/claude-real/claude.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o644))
	lab := filepath.Join(home, "src", "lab")
	copyTree(t, "../../fixtures/claude-real/project-settings/lab", filepath.Join(lab, ".claude"))
	pages["claude-audit.html"] = []string{"audit", "--agent", "claude", "--inventory", "../../fixtures/claude-audit/inventory.json",
		"--all-pairs", "--project", lab, "--project-key", "/home/demo/src/lab", "--format", "html"}

	qwen := fixtureCopy(t)
	pages["fix-report.html"] = []string{"fix", "--apply", "--yes", "--report"}

	env := testEnv(t)
	env.Home = home
	for name, args := range pages {
		page := filepath.Join(dir, name)
		if args[0] == "fix" {
			args = append(args, page, qwen)
		} else {
			args = append(args, "--out", page)
		}
		r := runCLI(t, env, "", args...)
		require.Contains(t, []int{exitcode.OK, exitcode.Finding}, r.code, "%s: %s", name, r.err)
		assert.Empty(t, htmltest.Overflow(t, bin, page, 1280), "%s: wider than 1,280 px", name)
	}
}
