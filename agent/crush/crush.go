// Package crush is everything sessionfix knows about crush (charmbracelet/crush): its SQLite
// session store .crush/crush.db (stores.md §3.1) and its naming scheme. crush names an MCP
// tool "mcp_<server>_<tool>", never "mcp__<server>__<tool>", so its names follow the
// provider-safe rule: only a name a provider rejects is rewritten, with normalize
// (rewrite.NamerFor). Without a PATH its databases are looked for in the projects crush
// registered in its data directory's projects.json (Roots).
package crush

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// ID is crush's agent id.
const ID store.AgentID = "crush"

// Profile is crush's .crush/crush.db: tool calls and results in messages.parts.
var Profile = &sqlite.Profile{
	Name:   "crush",
	Agent:  ID,
	Detect: []string{"messages.parts", "sessions.id"},
	Tables: []sqlite.TableSpec{
		{Table: "messages", Column: "parts", CallScope: "session_id", Sites: []sqlite.SiteSpec{
			{Path: "$[*].data.name", When: &sqlite.JSONCond{Path: "$[*].type", In: []string{"tool_call"}}, Kind: "call", CallID: "$[*].data.id"},
			{Path: "$[*].data.name", When: &sqlite.JSONCond{Path: "$[*].type", In: []string{"tool_result"}}, Kind: "response", CallID: "$[*].data.tool_call_id"},
		}},
	},
}

// Agent describes crush to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "crush", SQLite: []*sqlite.Profile{Profile},
	Roots: Roots,
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		return "crush project database", DataDirTried(env) + ": projects.json, each project's crush.db", "set CRUSH_GLOBAL_DATA"
	},
},
	Helped: agent.Helped{Of: help},
}

// room is crush's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var _ agent.Helper = (*room)(nil)

// help is what sessionfix's --help says of crush.
var help = &agent.Help{Roots: "the crush.db of every project of projects.json under\n$CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else ~/.local/share/crush"}

// DataDir is crush's global data directory (charmbracelet/crush internal/config
// GlobalConfigData's directory): $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else
// ~/.local/share/crush. It holds projects.json, the projects crush was run in.
func DataDir(env agent.Env) string {
	if v := env.Getenv("CRUSH_GLOBAL_DATA"); v != "" {
		return v
	}
	if v := env.Getenv("XDG_DATA_HOME"); v != "" {
		return filepath.Join(v, "crush")
	}
	return filepath.Join(env.Home, ".local", "share", "crush")
}

// DataDirTried says how DataDir was chosen.
func DataDirTried(env agent.Env) string {
	if v := env.Getenv("CRUSH_GLOBAL_DATA"); v != "" {
		return "$CRUSH_GLOBAL_DATA=" + v
	}
	if v := env.Getenv("XDG_DATA_HOME"); v != "" {
		return "$CRUSH_GLOBAL_DATA (not set), $XDG_DATA_HOME=" + v + ", so " + DataDir(env)
	}
	return "$CRUSH_GLOBAL_DATA and $XDG_DATA_HOME (not set), so ~/.local/share/crush"
}

// Roots are the crush.db of every project of DataDir's projects.json ({"projects": [{"path",
// "data_dir"}]}, crush internal/projects) that exists (a relative data_dir is the project's);
// projects.json itself when it cannot be read (the error names it); none when it names no
// database that exists.
func Roots(env agent.Env) []string {
	list := filepath.Join(DataDir(env), "projects.json")
	b, err := os.ReadFile(list)
	if err != nil {
		return []string{list}
	}
	var doc struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range doc.Projects {
		dir := p.DataDir
		if dir == "" {
			dir = filepath.Join(p.Path, ".crush")
		} else if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Path, dir)
		}
		db := filepath.Join(dir, "crush.db")
		if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() && !seen[db] {
			seen[db] = true
			out = append(out, db)
		}
	}
	return out
}
