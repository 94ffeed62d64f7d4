// Package kilo is everything sessionfix knows about Kilo Code's CLI (@kilocode/cli 7.x, an
// fork of another agent's CLI whose store and naming it keeps, docs/kilo.md; issue 27, fixtures/kilo-real/README.md, recorded with 7.0.33 and 7.7.7;
// docs/kilo.md).
//
// Stores: one SQLite database, $XDG_DATA_HOME/kilo/kilo.db (else ~/.local/share/kilo/kilo.db;
// WAL mode) with its upstream's tables: tool names in part.data ($.tool of tool parts), from 7.7 also
// in the event log (event.data $.part.tool of message.part.updated.* events), session-scoped
// permission rules in session.permission. Its schema is its upstream's, so the database is told
// apart by Kilo's own tables (kilo_board, 7.7) or, for older schemas, by its file name
// (kilo.db, kilo-*.db). A database of the 7.0 schema (__drizzle_migrations, no event log) is
// one Kilo 7.7 cannot open in place (every command fails with "SQLiteError: no such column:
// name"): it is read and reported, never rewritten (RefuseOldSchema).
//
// Configs: $XDG_CONFIG_HOME/kilo (else ~/.config/kilo) kilo.json, kilo.jsonc, opencode.json or
// opencode.jsonc, and a project's .kilo/ with the same names: MCP servers under "mcp", rules under
// "permission" (package permission/kilo). Prepare reads them (and --kilo-config FILE) to report
// what Kilo's naming does to the configured tools: names over 64 (strict providers reject the
// live tool list, and history), two raw tools merged into one name, and rules that reach several
// servers.
//
// Naming: mcpname.KiloName, sanitize(server) + "_" + sanitize(tool), no hash, no cap, the same
// in 7.0.33 and 7.7.7. fix rewrites only a stored name the current release registers
// differently (Namer): a name Kilo would sanitize now, and, when --inventory or --discover
// shows the tool is no longer configured, an over-long name (then to mcpname.Normalize's
// provider-safe name); a name Kilo registers as it is stays, even over 64: the live tool list
// holds it too, and the fix there is the server's tool name or disabling the tool.
package kilo

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Kilo Code CLI's agent id.
const ID store.AgentID = "kilo"

// Environment variables Kilo reads to find its directories (xdg-basedir).
const (
	EnvDataHome   = "XDG_DATA_HOME"
	EnvConfigHome = "XDG_CONFIG_HOME"
)

// DBName is the database file of a Kilo data directory.
const DBName = "kilo.db"

// tables are the name sites of a Kilo database (its upstream's layout, recorded in both releases).
var tables = []sqlite.TableSpec{
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
}

// Profile is a Kilo database recognised by Kilo's own table kilo_board (7.7 and later), whatever
// its file name.
var Profile = &sqlite.Profile{
	Name:   "kilo",
	Agent:  ID,
	Detect: []string{"part.data", "message.data", "session.id", "kilo_board.root_session_id"},
	Tables: tables,
	Refuse: RefuseOldSchema,
}

// ProfileByName is a Kilo database without Kilo's own tables (7.0's schema is its upstream's),
// recognised by its file name: kilo.db, or kilo-<channel>.db.
var ProfileByName = &sqlite.Profile{
	Name:   "kilo-file",
	Agent:  ID,
	Files:  []string{DBName, "kilo-*.db"},
	Detect: []string{"part.data", "message.data", "session.id"},
	Tables: tables,
	Refuse: RefuseOldSchema,
}

// DataDir is Kilo's data directory: $XDG_DATA_HOME/kilo, else home/.local/share/kilo.
func DataDir(getenv func(string) string, home string) string {
	if d := getenv(EnvDataHome); d != "" {
		return filepath.Join(d, "kilo")
	}
	return filepath.Join(home, ".local", "share", "kilo")
}

// ConfigDir is Kilo's global config directory: $XDG_CONFIG_HOME/kilo, else home/.config/kilo.
func ConfigDir(getenv func(string) string, home string) string {
	if d := getenv(EnvConfigHome); d != "" {
		return filepath.Join(d, "kilo")
	}
	return filepath.Join(home, ".config", "kilo")
}

// ConfigNames are the config file names Kilo reads in a config directory (the global one and
// a project's .kilo/), in the order Prepare merges them (a later file's entries win).
// [The order between the upstream's names and kilo.json[c] is assumed: the recording used kilo.json only.]
var ConfigNames = []string{"opencode.json", "opencode.jsonc", "kilo.json", "kilo.jsonc"}

// Roots are the databases of the environment's data directory (kilo.db, kilo-*.db); when there
// is none, the kilo.db path itself, so the error names what was tried.
func Roots(env agent.Env) []string {
	dir := DataDir(env.Getenv, env.Home)
	var out []string
	if _, err := os.Stat(filepath.Join(dir, DBName)); err == nil {
		out = append(out, filepath.Join(dir, DBName))
	}
	more, _ := filepath.Glob(filepath.Join(dir, "kilo-*.db"))
	slices.Sort(more)
	out = append(out, more...)
	if len(out) == 0 {
		return []string{filepath.Join(dir, DBName)}
	}
	return out
}

// KnownFile says what a Kilo config file is: kilo.json[c] anywhere, and opencode.json[c] in a
// directory named kilo or .kilo; "" for any other file.
func KnownFile(path string) string {
	base, dir := filepath.Base(path), filepath.Base(filepath.Dir(path))
	kiloDir := dir == "kilo" || dir == ".kilo"
	if base == "kilo.json" || base == "kilo.jsonc" || (kiloDir && (base == "opencode.json" || base == "opencode.jsonc")) {
		return "Kilo config (MCP servers, permission rules): read by scan, fix and check --agent kilo with the database (--kilo-config FILE names one); not a store"
	}
	return ""
}

// ConfigOption is scan's, fix's and check's flag naming more Kilo config files.
const ConfigOption = "kilo-config"

// Agent describes Kilo Code's CLI to agent/all. It comes before its upstream in the list: a
// Kilo database has the upstream's tables too.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "Kilo Code CLI",
	Roots: Roots,
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		tried = "$" + EnvDataHome + " (not set), so ~/.local/share/kilo"
		if v := env.Getenv(EnvDataHome); v != "" {
			tried = "$" + EnvDataHome + "=" + v + ", so " + filepath.Join(v, "kilo")
		}
		return "Kilo database", tried, "set " + EnvDataHome
	},
	SQLite:  []*sqlite.Profile{Profile, ProfileByName},
	Namer:   namer{},
	Prepare: Prepare,
},
	Classed:       agent.Classed{Of: Classes},
	KnownFileFunc: KnownFile,
	Optioned:      agent.Optioned{Of: options},
	Helped:        agent.Helped{Of: Help},
	Audited:       agent.Audited{Of: Audit},
}

// room is Kilo Code CLI's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.Classed
	agent.KnownFileFunc
	agent.Optioned
	agent.Helped
	agent.Audited
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.Classifier = (*room)(nil)
	_ agent.FileKnower = (*room)(nil)
	_ agent.Optioner   = (*room)(nil)
	_ agent.Helper     = (*room)(nil)
	_ agent.Auditor    = (*room)(nil)
)

// options are Kilo's own flags of scan, fix and check.
var options = []agent.Option{
	{Name: ConfigOption, Repeatable: true, File: true, Plan: "kilo_config", PlanAfter: "profile",
		Usage: "Kilo config file (kilo.json[c] or opencode.json[c], repeatable; read after ~/.config/kilo's and each session directory's .kilo/): its MCP servers and permission rules show which stored names Kilo registers as they are (with --discover its servers are listed)"},
}

// Help is what sessionfix's --help says of Kilo.
var Help = &agent.Help{
	Dir: "~/.local/share/kilo",
	Roots: `kilo.db under
$XDG_DATA_HOME/kilo else ~/.local/share/kilo`,
	Scan: []agent.Example{{Args: "--agent kilo"}},
	Fix: []agent.Example{
		{Args: "--agent kilo --inventory tools.json", Comment: "Kilo: tools the inventory lacks are gone"},
	},
	Rewrite: `In a Kilo Code CLI database (kilo.db under $XDG_DATA_HOME/kilo or ~/.local/share/kilo;
--agent kilo) a stored name is rewritten only where the current release registers the tool
differently: a name Kilo now sanitizes, and an over-long name of a tool --inventory or
--discover shows is gone. A name Kilo registers as it is stays, even over 64 (the live tool
list has it too: rename the tool at its server or disable it). A database of Kilo 7.0's
schema, which Kilo 7.7 cannot open in place, is reported and never rewritten.`,
}
