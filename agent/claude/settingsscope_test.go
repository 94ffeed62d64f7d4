package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/permission"
)

// TestSettingsScopeOf: a bare --settings FILE takes the scope its place says (issue 23 item
// 14); a place that says nothing gives "".
func TestSettingsScopeOf(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{".claude/projects", "src/app/.claude", "copy/dot-claude/todos", "cfg", "etc/managed-settings.d", "elsewhere"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(home, ".claude"), filepath.Join(home, "link-to-claude")))
	noEnv := func(string) string { return "" }
	cfgEnv := func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return filepath.Join(home, "cfg")
		}
		return ""
	}
	for _, c := range []struct {
		path   string
		getenv func(string) string
		want   permission.ClaudeScope
	}{
		{".claude/settings.json", noEnv, permission.ClaudeScopeUser},
		{"link-to-claude/settings.json", noEnv, permission.ClaudeScopeUser},  // resolved: the home's ~/.claude
		{"cfg/settings.json", cfgEnv, permission.ClaudeScopeUser},            // $CLAUDE_CONFIG_DIR
		{"copy/dot-claude/settings.json", noEnv, permission.ClaudeScopeUser}, // a copied ~/.claude (todos/ inside)
		{"src/app/.claude/settings.json", noEnv, permission.ClaudeScopeProject},
		{"src/app/.claude/settings.local.json", noEnv, permission.ClaudeScopeLocal},
		{".claude/settings.local.json", noEnv, permission.ClaudeScopeLocal},
		{"etc/managed-settings.json", noEnv, permission.ClaudeScopeManaged},
		{"etc/managed-settings.d/10-team.json", noEnv, permission.ClaudeScopeManaged},
		{"cfg/settings.json", noEnv, ""},          // without the variable, a plain directory
		{"elsewhere/settings.json", noEnv, ""},    // says nothing
		{"src/app/.claude/other.json", noEnv, ""}, // not a rule file name
	} {
		got := SettingsScopeOf(filepath.Join(home, c.path), c.getenv, home)
		assert.Equal(t, c.want, got, c.path)
	}
}
