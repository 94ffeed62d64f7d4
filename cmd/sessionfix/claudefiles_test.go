package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A Claude Code rule or config file given as a PATH is not read as Qwen Code settings (scan
// printed Qwen Code's hashed "current name" for a Claude Code rule) nor refused as an unknown
// store: scan and check say what the file is and where it is handled, and exit 0.
func TestClaudeRuleFilesGivenAsPath(t *testing.T) {
	dir := copyClaudeFixture(t, t.TempDir())
	env := testEnv(t)
	settingsFile := filepath.Join(dir, "dot-claude", "settings.json")
	config := filepath.Join(dir, "claude.json")

	r := runCLI(t, env, "", "scan", settingsFile)
	assert.Equal(t, 0, r.code, r.err)
	assert.NotContains(t, r.out, "0tgvvnc", "a Qwen Code name for a Claude Code rule")
	assert.NotContains(t, r.out, "settings rules in legacy spellings")
	assert.Contains(t, r.err, "note: "+settingsFile+": Claude Code settings")
	assert.Contains(t, r.err, "sessionfix audit --agent claude")

	for _, cmd := range [][]string{{"scan"}, {"check", "--provider", "all"}} {
		r = runCLI(t, env, "", append(cmd, config)...)
		assert.Equal(t, 0, r.code, "%v: %s", cmd, r.err)
		assert.NotContains(t, r.err, "not a known session", "%v", cmd)
		assert.Contains(t, r.err, "note: "+config+": Claude Code config", "%v", cmd)
	}
}
