package claude

import (
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/store"
)

// HomeSessions is the sessions of one Claude Code config directory (the home whose
// ~/.claude.json, beside it, and projects' .mcp.json files tell the server keys): FromEnv
// marks the environment's ($CLAUDE_CONFIG_DIR, else ~/.claude), whose global config is
// GlobalConfigPath.
type HomeSessions = agent.HomeSessions

// GroupByHome sorts the Claude Code sessions among stores by the config directory each lies
// in (agent.GroupByHome with HomeOf: a copied ~/.claude is planned with the claude.json beside
// it); a session in no such directory, or in the same directory as envHome, goes to envHome
// (FromEnv). Groups come sorted by home. It looks at the file system.
func GroupByHome(stores []store.Store, lexical func(string) string, envHome string) []*HomeSessions {
	return agent.GroupByHome(stores, []store.Kind{KindSession}, HomeOf, lexical, envHome)
}

// IsConfigDir reports whether dir is a Claude Code config directory (~/.claude or a copy):
// named .claude, or holding session files directly under projects/<dir>/ (another agent keeps its
// sessions one level deeper, in projects/<id>/chats/). Its settings.json holds Claude Code
// rules (agent.Agent.OwnsSettings). It looks at the file system.
func IsConfigDir(dir string) bool {
	if filepath.Base(filepath.Clean(dir)) == ".claude" {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "projects", "*", "*.jsonl"))
	return len(m) > 0
}
