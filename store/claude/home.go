package claude

import (
	"os"
	"path/filepath"
	"strings"
)

// Claude Code's home (issue 11 item 1): the config directory is $CLAUDE_CONFIG_DIR, else
// ~/.claude; sessions are <config dir>/projects/<dir>/<session>.jsonl and subagent transcripts
// <config dir>/projects/<dir>/<session>/subagents/agent-*.jsonl. The global config (MCP servers,
// per-project state, legacy allowedTools) is ~/.claude.json, or <config dir>/.claude.json when
// $CLAUDE_CONFIG_DIR is set.

// EnvConfigDir is the variable that moves Claude Code's config directory.
const EnvConfigDir = "CLAUDE_CONFIG_DIR"

// Home returns the environment's config directory: $CLAUDE_CONFIG_DIR, else home/.claude.
func Home(getenv func(string) string, home string) string {
	if d := getenv(EnvConfigDir); d != "" {
		return d
	}
	return filepath.Join(home, ".claude")
}

// GlobalConfigPath returns the environment's global config file: $CLAUDE_CONFIG_DIR/.claude.json
// when the variable is set, else home/.claude.json.
func GlobalConfigPath(getenv func(string) string, home string) string {
	if d := getenv(EnvConfigDir); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(home, ".claude.json")
}

// ProjectsRoot is where a config directory keeps its sessions.
func ProjectsRoot(configDir string) string { return filepath.Join(configDir, "projects") }

// HomeOf returns the config directory a session file lies in, from its path alone:
// <home>/projects/<dir>/<session>.jsonl or <home>/projects/<dir>/<session>/subagents/<f>.jsonl
// (the last "projects" element that fits); "" when the path has neither shape.
func HomeOf(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	n := len(parts)
	for _, back := range []int{3, 5} { // projects/<dir>/<file>, projects/<dir>/<s>/subagents/<file>
		i := n - back
		if i < 1 || parts[i] != "projects" {
			continue
		}
		if back == 5 && parts[n-2] != "subagents" {
			continue
		}
		return filepath.FromSlash(strings.Join(parts[:i], "/"))
	}
	return ""
}

// ConfigFileOf returns the global config file that belongs to a config directory, the first
// that exists of: <home>/.claude.json ($CLAUDE_CONFIG_DIR layout), and beside the directory
// <parent>/.claude.json and <parent>/claude.json (~/.claude next to ~/.claude.json; a copied
// .claude with its claude.json beside it, as in fixtures/claude-real); "" when none exists.
func ConfigFileOf(home string) string {
	parent := filepath.Dir(filepath.Clean(home))
	for _, p := range []string{filepath.Join(home, ".claude.json"), filepath.Join(parent, ".claude.json"), filepath.Join(parent, "claude.json")} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return ""
}
