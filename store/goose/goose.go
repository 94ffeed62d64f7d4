// Package goose is everything sessionfix knows about goose (block/goose): its SQLite session
// store sessions.db (stores.md §3.1) and its naming scheme. goose names an MCP tool
// "<extension>__<tool>", never "mcp__<server>__<tool>", so its names follow the provider-safe
// rule: only a name a provider rejects is rewritten, with normalize (rewrite.NamerFor).
// sessions.db is found under paths the user names (no default root).

package goose

import (
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/sqlite"
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

// Agent describes goose to store/all.
var Agent = &agent.Agent{ID: ID, Name: "goose", SQLite: []*sqlite.Profile{Profile}}
