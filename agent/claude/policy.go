package claude

import (
	"path/filepath"
	"sort"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// HomeSessions is the sessions of one Claude Code config directory (the home whose
// ~/.claude.json, beside it, and projects' .mcp.json files tell the server keys).
type HomeSessions struct {
	// Home is the config directory; FromEnv marks the environment's ($CLAUDE_CONFIG_DIR, else
	// ~/.claude: Home), whose global config is GlobalConfigPath.
	Home     string
	FromEnv  bool
	Sessions []string // store paths, in the order given
}

// GroupByHome sorts the Claude Code sessions among stores by the config directory each lies
// in (HomeOf of lexical(path), the path as the walk reached it: a copied ~/.claude is planned
// with the claude.json beside it); a session in no such directory, or in the same directory as
// envHome, goes to envHome (FromEnv). Groups come sorted by home. It looks at the file system.
func GroupByHome(stores []store.Store, lexical func(string) string, envHome string) []*HomeSessions {
	byHome := map[string]*HomeSessions{}
	for _, st := range stores {
		if st.Ref().Kind != KindSession {
			continue
		}
		path := st.Ref().Path
		h := HomeOf(lexical(path))
		fromEnv := h == "" || fileio.SameFile(h, envHome)
		if fromEnv {
			h = envHome
		}
		g := byHome[h]
		if g == nil {
			g = &HomeSessions{Home: h, FromEnv: fromEnv}
			byHome[h] = g
		}
		g.Sessions = append(g.Sessions, path)
	}
	out := make([]*HomeSessions, 0, len(byHome))
	for _, g := range byHome {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Home < out[j].Home })
	return out
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
