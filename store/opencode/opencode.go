// Package opencode is everything sessionfix knows about opencode (sst/opencode): its SQLite
// session store opencode.db (stores.md §3; checked against the real database in
// fixtures/opencode-real) and its naming scheme. opencode names an MCP tool
// "<server>_<tool>", never "mcp__<server>__<tool>", so its names follow the provider-safe rule:
// only a name a provider rejects is rewritten, with normalize (rewrite.NamerFor). opencode.db
// is found under paths the user names (no default root; --agent does not take it).

package opencode

import (
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/sqlite"
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

// Agent describes opencode to store/all.
var Agent = &agent.Agent{ID: ID, Name: "opencode", SQLite: []*sqlite.Profile{Profile}}
