// Package goose is everything sessionfix knows about goose (block/goose): its SQLite session
// store sessions.db (stores.md §3.1) and its naming scheme. goose names an MCP tool
// "<extension>__<tool>", never "mcp__<server>__<tool>", so its names follow the provider-safe
// rule: only a name a provider rejects is rewritten, with normalize (rewrite.NamerFor).
// Without a PATH its sessions.db is looked for in goose's data directory (Roots).
package goose

import (
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// ID is goose's agent id.
const ID store.AgentID = "goose"

// sites are the name sites of one goose content_json array (a Vec<MessageContent>).
var sites = []sqlite.SiteSpec{
	{Path: "$[*].toolCall.value.name", When: &sqlite.JSONCond{Path: "$[*].type", In: []string{"toolRequest", "frontendToolRequest"}}, Kind: "call", CallID: "$[*].id"},
	{Path: "$[*].toolName", When: &sqlite.JSONCond{Path: "$[*].type", In: []string{"toolConfirmationRequest"}}, CallID: "$[*].id"},
	{Path: "$[*].data.toolName", When: &sqlite.JSONCond{Path: "$[*].type", In: []string{"actionRequired"}}, CallID: "$[*].data.id"},
}

// Profile is goose's sessions.db: messages.content_json, and thread_messages (schema v10+).
var Profile = &sqlite.Profile{
	Name:   "goose",
	Agent:  ID,
	Detect: []string{"messages.content_json", "sessions.id"},
	Tables: []sqlite.TableSpec{
		{Table: "messages", Column: "content_json", CallScope: "session_id", Sites: sites},
		{Table: "thread_messages", Column: "content_json", Optional: true, Sites: sites},
	},
}

// Agent describes goose to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "goose", SQLite: []*sqlite.Profile{Profile},
	Roots: func(env agent.Env) []string { return []string{SessionsDB(env)} },
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		return "goose sessions database", DataDirTried(env) + ": sessions/sessions.db", "set GOOSE_PATH_ROOT"
	},
},
	Helped: agent.Helped{Of: help},
}

// room is goose's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var _ agent.Helper = (*room)(nil)

// help is what sessionfix's --help says of goose.
var help = &agent.Help{Roots: "sessions/sessions.db under $GOOSE_PATH_ROOT/data, else\n$XDG_DATA_HOME/goose, else ~/.local/share/goose"}

// DataDir is goose's data directory (block/goose crates/goose/src/config/paths.rs): an absolute
// $GOOSE_PATH_ROOT's data/, else the XDG data directory: $XDG_DATA_HOME/goose, else
// ~/.local/share/goose.
func DataDir(env agent.Env) string {
	if v := env.Getenv("GOOSE_PATH_ROOT"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "data")
	}
	if v := env.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "goose")
	}
	return filepath.Join(env.Home, ".local", "share", "goose")
}

// DataDirTried says how DataDir was chosen.
func DataDirTried(env agent.Env) string {
	if v := env.Getenv("GOOSE_PATH_ROOT"); v != "" && filepath.IsAbs(v) {
		return "$GOOSE_PATH_ROOT=" + v + ", so " + DataDir(env)
	}
	if v := env.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return "$GOOSE_PATH_ROOT (not set), $XDG_DATA_HOME=" + v + ", so " + DataDir(env)
	}
	return "$GOOSE_PATH_ROOT and $XDG_DATA_HOME (not set), so ~/.local/share/goose"
}

// SessionsDB is goose's session database, DataDir's sessions/sessions.db.
func SessionsDB(env agent.Env) string { return filepath.Join(DataDir(env), "sessions", "sessions.db") }
