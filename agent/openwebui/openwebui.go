// Package openwebui is everything sessionfix knows about Open WebUI's chat store: its tables on
// SQLite (webui.db) and on PostgreSQL (a team's server, a postgres:// reference as PATH), read
// by the same table profile (docs/openwebui.md, fixtures/openwebui-schema).
//
// Open WebUI names an MCP tool "{server_id}_{tool name}" (an OpenAPI tool server's tool: its raw
// operationId) with no cleaning and no length cap (middleware process_chat_payload), stores each
// call as an output item {"type": "function_call", "name": …, "call_id": …} in both
// chat_message.output and the chat.chat document (history.messages.<id>.output and the
// messages list), and sends the stored name back verbatim on later turns
// (convert_output_to_messages: tool_calls[].function.name = item['name']). A stored name a
// provider rejects (a dotted server id, non-ASCII, over 64 characters, a leading digit) makes
// every later turn of the chat fail; Open WebUI has no rule that would give the tool another
// name, so its names follow the provider-safe rule (naming.ProviderSafe: only a rejected name is
// rewritten, with normalize), and both places of one call get the same new name, in one
// transaction per chat on PostgreSQL (chat_message's spec names chat as its parent). The
// display copy in a message's content ("<details type=\"tool_calls\" name=…>") is never sent
// for a message that has output items and is left as it is.
// The profile is data: the SQLite and the PostgreSQL engine read the same one.
package openwebui

import (
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Open WebUI's agent id (--agent openwebui).
const ID store.AgentID = "openwebui"

// call is a function_call output item at prefix (a JSON path ending in an output array).
func call(prefix string) sqlite.SiteSpec {
	return sqlite.SiteSpec{Path: prefix + "[*].name", When: &sqlite.JSONCond{Path: prefix + "[*].type", In: []string{"function_call"}},
		Kind: "call", CallID: prefix + "[*].call_id"}
}

// Profile is Open WebUI's chat and chat_message tables (models/chats.py class Chat,
// models/chat_messages.py class ChatMessage; columns JSON, json on PostgreSQL). It is detected
// by chat.chat with the chat columns Open WebUI's models add (share_id, folder_id), so another
// program's "chat" table is not taken for it.
var Profile = &sqlite.Profile{
	Name:   "openwebui",
	Agent:  ID,
	Detect: []string{"chat.chat", "chat.share_id", "chat.folder_id", "chat.user_id"},
	Tables: []sqlite.TableSpec{
		{Table: "chat", Column: "chat", Key: []string{"id"},
			Sites: []sqlite.SiteSpec{call("$.history.messages.*.output"), call("$.messages[*].output")}},
		{Table: "chat_message", Column: "output", Key: []string{"id"}, Optional: true,
			Parent: &sqlite.ParentSpec{Table: "chat", Column: "chat_id"},
			Sites:  []sqlite.SiteSpec{call("$")}},
	},
}

// Open WebUI's own variables for its database (backend/open_webui/env.py): DATABASE_URL
// (default sqlite:///$DATA_DIR/webui.db), DATA_DIR (the Docker image's /app/backend/data).
const (
	EnvDatabaseURL = "DATABASE_URL"
	EnvDataDir     = "DATA_DIR"
	// DockerDB is webui.db in Open WebUI's Docker image.
	DockerDB = "/app/backend/data/webui.db"
)

// Roots is the store Open WebUI itself would open: $DATABASE_URL when it names a PostgreSQL
// database (its password stays in the Store, never printed) or a SQLite file, else
// $DATA_DIR/webui.db, else the Docker image's /app/backend/data/webui.db.
func Roots(env agent.Env) []string {
	if u := env.Getenv(EnvDatabaseURL); u != "" {
		if store.IsReference(u) {
			return []string{u}
		}
		if p, ok := strings.CutPrefix(u, "sqlite:///"); ok {
			return []string{"/" + strings.TrimPrefix(p, "/")}
		}
	}
	if d := env.Getenv(EnvDataDir); d != "" {
		return []string{filepath.Join(d, "webui.db")}
	}
	return []string{DockerDB}
}

// RootsTried says how Roots chose the store, for the error about one that does not exist.
func RootsTried(env agent.Env) (what, tried, hint string) {
	switch {
	case env.Getenv(EnvDatabaseURL) != "":
		tried = "$" + EnvDatabaseURL + "=" + store.Redact(env.Getenv(EnvDatabaseURL))
	case env.Getenv(EnvDataDir) != "":
		tried = "$" + EnvDataDir + "=" + env.Getenv(EnvDataDir) + ", so $" + EnvDataDir + "/webui.db"
	default:
		tried = "$" + EnvDatabaseURL + " and $" + EnvDataDir + " (not set), so " + DockerDB
	}
	return "Open WebUI database", tried, "pass webui.db or a postgres:// URL, or set " + EnvDatabaseURL
}

// Agent describes Open WebUI to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "Open WebUI",
	Roots: Roots, RootsTried: RootsTried, SQLite: []*sqlite.Profile{Profile},
}}

// room is Open WebUI's agent: its Core and the capabilities pinned below.
type room struct{ core agent.Core }

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var _ agent.Helper = (*room)(nil)

func (*room) Help() *agent.Help { return Help }

// Help is what sessionfix's --help says of Open WebUI.
var Help = &agent.Help{
	Roots:  "$DATABASE_URL (a postgres:// URL or\nsqlite:///…), else $DATA_DIR/webui.db, else " + DockerDB,
	Stores: "Open WebUI databases (webui.db, or a postgres:// URL as PATH)",
	Rewrite: `In an Open WebUI database (webui.db, or PostgreSQL named by a postgres:// URL; --agent
openwebui) a stored tool name a provider rejects ("{server_id}_{tool}", never cleaned by Open
WebUI) is rewritten with normalize in chat.chat and chat_message.output alike; on PostgreSQL
one transaction per batch of chats, each old value kept in the table sessionfix_backup
(sessionfix fix --apply --yes postgres://USER@HOST/DB; the password from the URL, PGPASSWORD
or ~/.pgpass, never printed or recorded).`,
}
