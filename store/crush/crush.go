// Package crush is everything sessionfix knows about crush (charmbracelet/crush): its SQLite
// session store .crush/crush.db (stores.md §3.1) and its naming scheme. crush names an MCP
// tool "mcp_<server>_<tool>", never "mcp__<server>__<tool>", so its names follow the
// provider-safe rule: only a name a provider rejects is rewritten, with normalize
// (rewrite.NamerFor). crush.db is found under paths the user names (no default root).

package crush

import (
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/sqlite"
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

// Agent describes crush to store/all.
var Agent = &agent.Agent{ID: ID, Name: "crush", SQLite: []*sqlite.Profile{Profile}}
