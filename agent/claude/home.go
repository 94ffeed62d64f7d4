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

// ruleFilesHint is where a Claude Code rule or config file is read instead of scan and check.
const ruleFilesHint = "its permission rules are audited by sessionfix audit --agent claude and migrated by sessionfix fix --agent claude --rules; scan and check read sessions only"

// KnownFile says what a Claude Code file that is no session store is (agent.Agent.KnownFile):
// settings.json or settings.local.json in a config directory or a project's .claude/ (rule
// files), ~/.claude.json or the claude.json a copied config directory has beside it
// (ConfigFileOf), or a project's .mcp.json (server keys, read with --mcp-config); "" for any
// other file. It looks at the file system (IsConfigDir, ConfigFileOf).
func KnownFile(path string) string {
	path = filepath.Clean(path)
	dir, base := filepath.Dir(path), filepath.Base(path)
	switch {
	case (base == "settings.json" || base == "settings.local.json") && IsConfigDir(dir):
		return "Claude Code settings: " + ruleFilesHint
	case base == ".mcp.json":
		return "Claude Code MCP config (server keys): pass it with --mcp-config; scan and check read sessions only"
	case base == ".claude.json":
		return "Claude Code config: " + ruleFilesHint
	case base == "claude.json":
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if d := filepath.Join(dir, e.Name()); e.IsDir() && IsConfigDir(d) && ConfigFileOf(d) == path {
				return "Claude Code config: " + ruleFilesHint
			}
		}
	}
	return ""
}
