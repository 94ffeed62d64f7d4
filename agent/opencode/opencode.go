// Package opencode is everything sessionfix knows about opencode (sst/opencode): its SQLite
// session store opencode.db (stores.md §3; checked against the real database in
// fixtures/opencode-real) and its naming scheme. opencode names an MCP tool
// "<server>_<tool>", never "mcp__<server>__<tool>", so its names follow the provider-safe rule:
// only a name a provider rejects is rewritten, with normalize (rewrite.NamerFor). Without a PATH
// its database is looked for in opencode's data directory (Roots).
package opencode

import (
	"os"
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// ID is opencode's agent id.
const ID store.AgentID = "opencode"

// Profile is opencode's opencode.db (opencode 1.18, fixtures/opencode-real): tool parts in
// part.data, their copies in the event log (message.part.updated.* events), permission rules in
// session.permission.
var Profile = &sqlite.Profile{
	Name:   "opencode",
	Agent:  ID,
	Detect: []string{"part.data", "message.data", "session.id"},
	Tables: []sqlite.TableSpec{
		{Table: "part", Column: "data", CallScope: "session_id", Sites: []sqlite.SiteSpec{
			{Path: "$.tool", When: &sqlite.JSONCond{Path: "$.type", In: []string{"tool"}}, Kind: "call", CallID: "$.callID"},
		}},
		{Table: "event", Column: "data", Optional: true, CallScope: "aggregate_id",
			Where: []sqlite.ColumnCond{{Column: "type", Prefix: "message.part.updated."}},
			Sites: []sqlite.SiteSpec{
				{Path: "$.part.tool", When: &sqlite.JSONCond{Path: "$.part.type", In: []string{"tool"}}, Kind: "call", CallID: "$.part.callID"},
			}},
		{Table: "session", Column: "permission", Sites: []sqlite.SiteSpec{
			{Path: "$[*].permission", Kind: "rule"},
		}},
	},
}

// Agent describes opencode to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "opencode", SQLite: []*sqlite.Profile{Profile},
	Roots: Roots,
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		return "opencode database", DataDirTried(env), "set XDG_DATA_HOME"
	},
},
	Helped: agent.Helped{Of: help},
}

// room is opencode's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var _ agent.Helper = (*room)(nil)

// help is what sessionfix's --help says of opencode.
var help = &agent.Help{Roots: "opencode*.db under $XDG_DATA_HOME/opencode else\n~/.local/share/opencode"}

// DataDir is opencode's data directory: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode
// (opencode's Global.Path.data: xdg-basedir's data home).
func DataDir(env agent.Env) string {
	if v := env.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "opencode")
	}
	return filepath.Join(env.Home, ".local", "share", "opencode")
}

// DataDirTried says how DataDir was chosen ("$XDG_DATA_HOME (not set), so ~/.local/share/opencode").
func DataDirTried(env agent.Env) string {
	if v := env.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return "$XDG_DATA_HOME=" + v + ", so " + DataDir(env)
	}
	return "$XDG_DATA_HOME (not set), so ~/.local/share/opencode"
}

// Roots are opencode's databases in its data directory (opencode.db, and the opencode-*.db of
// other release channels) that exist; else the data directory's opencode.db (missing: the
// error names it).
func Roots(env agent.Env) []string {
	dir := DataDir(env)
	m, _ := filepath.Glob(filepath.Join(dir, "opencode*.db"))
	var out []string
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{filepath.Join(dir, "opencode.db")}
	}
	return out
}
