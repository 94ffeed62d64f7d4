// Package cline is everything sessionfix knows about Cline's stores (issue 27;
// fixtures/cline-real/README.md, recorded with the npm releases cline 2.18.0 and 3.0.65;
// docs/cline.md): the CLI (~/.cline/data, or $CLINE_DATA_DIR) and the VS Code extension
// (saoudrizwan.claude-dev under the globalStorage of Code, Code - Insiders, VSCodium, Cursor
// and Windsurf, Linux and macOS paths), two generations with two stores:
//
//   - Cline 2.x (the extension core, the CLI 2.x): tasks/<id>/api_conversation_history.json
//     (KindTask), an Anthropic-shaped JSON array. With native tool calling an MCP call is an
//     assistant tool_use block named uid + "0mcp0" + the raw tool (mcpname.Cline2Name, the uid
//     drawn anew at every start of the MCP hub); its result is user text
//     "[use_mcp_tool for '<server>'] Result: …", in the order of the calls: that is where the
//     server of a call is read (Site.Server). In the XML era names are only text.
//     ui_messages.json repeats the raw server and tool for display; task_metadata.json,
//     state/taskHistory.json and globalState.json hold no tool names.
//   - Cline 3.x (the SDK CLI, 3.0.65): sessions/<id>/<id>.messages.json (KindSession),
//     {…, messages: [{role, content: […]}]}: tool_use and tool_result blocks both carry the
//     name (mcpname.Cline3Name: "server__tool", or sanitized, cut and hashed). 3.x never reads
//     the 2.x tasks/ (they are orphaned, Orphans lists them); db/session-search.db is an FTS5
//     index of the same text (no name a provider sees), db/sessions.db holds no names.
//
// settings/cline_mcp_settings.json (both generations) names the MCP servers and, per server,
// the autoApprove list 3.x drops (permission/cline; the audit is audit.go).
package cline

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Cline's agent id.
const ID store.AgentID = "cline"

// agentName is how messages name the program.
const agentName = "Cline"

// EnvDataDir is the variable that moves the CLI's data directory (both generations).
const EnvDataDir = "CLINE_DATA_DIR"

// ExtensionID is the VS Code extension whose globalStorage folder holds the extension's data.
const ExtensionID = "saoudrizwan.claude-dev"

// Names inside a data directory.
const (
	TasksDir        = "tasks"
	SessionsDir     = "sessions"
	SettingsDir     = "settings"
	MCPSettingsFile = "cline_mcp_settings.json"
	TaskHistoryFile = "api_conversation_history.json"
	MessagesSuffix  = ".messages.json"
)

// Editors are the VS Code family applications whose globalStorage may hold the extension.
var Editors = []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"}

// DataDir is the CLI's data directory: $CLINE_DATA_DIR, else home/.cline/data.
func DataDir(getenv func(string) string, home string) string {
	if d := getenv(EnvDataDir); d != "" {
		return d
	}
	return filepath.Join(home, ".cline", "data")
}

// ExtensionDirs are the extension's globalStorage folders of every editor of Editors, the
// Linux places ($XDG_CONFIG_HOME else ~/.config) then the macOS ones (~/Library/Application
// Support), whether they exist or not.
func ExtensionDirs(getenv func(string) string, home string) []string {
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	var out []string
	for _, base := range []string{cfg, filepath.Join(home, "Library", "Application Support")} {
		for _, e := range Editors {
			out = append(out, filepath.Join(base, e, "User", "globalStorage", ExtensionID))
		}
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Roots are the data directories that exist: the CLI's (DataDir) and the extension's
// (ExtensionDirs); when none does, the CLI's, so the error names what was tried.
func Roots(env agent.Env) []string {
	var out []string
	for _, d := range append([]string{DataDir(env.Getenv, env.Home)}, ExtensionDirs(env.Getenv, env.Home)...) {
		if isDir(d) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return []string{DataDir(env.Getenv, env.Home)}
	}
	return out
}

// RootsTried says where Roots looked (agent.Agent.RootsTried).
func RootsTried(env agent.Env) (what, tried, hint string) {
	tried = "$" + EnvDataDir + " (not set), so ~/.cline/data"
	if v := env.Getenv(EnvDataDir); v != "" {
		tried = "$" + EnvDataDir + "=" + v
	}
	tried += ", and the VS Code extension's globalStorage/" + ExtensionID + " of " + strings.Join(Editors, ", ")
	return "Cline data directory", tried, "set " + EnvDataDir
}

// HomeOf returns the data directory a Cline store lies in, from its path:
// <dir>/tasks/<id>/api_conversation_history.json or <dir>/sessions/<id>/<id>.messages.json;
// "" for any other path.
func HomeOf(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	n := len(parts)
	if n < 4 {
		return ""
	}
	switch {
	case parts[n-1] == TaskHistoryFile && parts[n-3] == TasksDir:
		return filepath.FromSlash(strings.Join(parts[:n-3], "/"))
	case parts[n-1] == parts[n-2]+MessagesSuffix && parts[n-3] == SessionsDir:
		return filepath.FromSlash(strings.Join(parts[:n-3], "/"))
	}
	return ""
}

// Detect takes tasks/<id>/api_conversation_history.json (Cline 2.x) and
// sessions/<id>/<id>.messages.json (Cline 3.x): sure verdicts (no other agent writes them).
func Detect(path string, _ []byte) (*jsonl.Profile, bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	n := len(parts)
	if n < 3 {
		return nil, false
	}
	switch {
	case parts[n-1] == TaskHistoryFile && parts[n-3] == TasksDir:
		return Task, true
	case parts[n-1] == parts[n-2]+MessagesSuffix && parts[n-3] == SessionsDir:
		return Session, true
	}
	return nil, false
}

// Force reads, under --agent cline, an api_conversation_history.json anywhere as a 2.x task
// and a *.messages.json anywhere as a 3.x session; other files are left out.
func Force(path string, _ []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	base := filepath.Base(path)
	var p *jsonl.Profile
	switch {
	case base == TaskHistoryFile:
		p = Task
	case strings.HasSuffix(base, MessagesSuffix):
		p = Session
	}
	switch {
	case p == nil && auto != nil && auto.Agent != ID:
		return nil, "looks like a " + auto.Title + ": not read with --agent cline (drop --agent or pass --agent " + string(auto.Agent) + ")"
	case p == nil:
		return nil, ""
	}
	return p, ""
}

// IsHome reports whether dir is a Cline data directory: it holds tasks/, sessions/ or
// settings/cline_mcp_settings.json. It looks at the file system.
func IsHome(dir string) bool {
	return isFile(filepath.Join(dir, SettingsDir, MCPSettingsFile)) ||
		(isDir(filepath.Join(dir, TasksDir)) && isFile(filepath.Join(dir, "state", "taskHistory.json"))) ||
		(isDir(filepath.Join(dir, SessionsDir)) && isDir(filepath.Join(dir, "db")))
}

// KnownFile says what a Cline file that is no store is (agent.Agent.KnownFile).
func KnownFile(path string) string {
	path = filepath.Clean(path)
	base, dir := filepath.Base(path), filepath.Dir(path)
	switch {
	case base == MCPSettingsFile:
		return "Cline MCP settings (servers, autoApprove lists): read by scan, fix and check --agent cline with the stores, and by sessionfix audit --agent cline; not a store"
	case base == "ui_messages.json" && filepath.Base(filepath.Dir(dir)) == TasksDir:
		return "Cline 2.x task display log (raw server and tool names shown to the user, never sent to a provider): not a store"
	case (base == "sessions.db" || base == "session-search.db") && filepath.Base(dir) == "db" && IsHome(filepath.Dir(dir)):
		return "Cline 3.x session database (sessions.db: no tool names; session-search.db: a search index of the messages files): not a store; scan reads sessions/<id>/<id>.messages.json"
	}
	return ""
}

// Generation is the Cline generation a data directory was last used by: 3 when it holds
// sessions/ (3.x writes it; 2.x never does), else 2 when it holds tasks/ or the MCP settings,
// else 0 (unknown).
func Generation(dir string) int {
	switch {
	case isDir(filepath.Join(dir, SessionsDir)):
		return 3
	case isDir(filepath.Join(dir, TasksDir)) || isFile(filepath.Join(dir, SettingsDir, MCPSettingsFile)):
		return 2
	}
	return 0
}

// Agent describes Cline to agent/all: with --agent cline and no PATH the data directories of
// Roots are read.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: agentName,
	Roots: Roots, RootsTried: RootsTried,
	JSONL: []*jsonl.Profile{Task, Session}, DetectJSONL: Detect,
	Namer:   namer{},
	Prepare: Prepare,
},
	HomeFunc:      HomeOf,
	ForceFunc:     Force,
	Classed:       agent.Classed{Of: Classes},
	KnownFileFunc: KnownFile,
	Audited:       agent.Audited{Of: Audit},
	Helped:        agent.Helped{Of: Help},
}

// room is Cline's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.HomeFunc
	agent.ForceFunc
	agent.Classed
	agent.KnownFileFunc
	agent.Audited
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.HomeFinder = (*room)(nil)
	_ agent.Forcer     = (*room)(nil)
	_ agent.Classifier = (*room)(nil)
	_ agent.FileKnower = (*room)(nil)
	_ agent.Auditor    = (*room)(nil)
	_ agent.Helper     = (*room)(nil)
)

// Help is what sessionfix's --help says of Cline.
var Help = &agent.Help{
	Dir: "~/.cline/data",
	Roots: `~/.cline/data (or $CLINE_DATA_DIR) and the
VS Code extension's globalStorage/saoudrizwan.claude-dev`,
	Scan: []agent.Example{{Args: "--agent cline"}},
	Fix: []agent.Example{
		{Args: "--agent cline --inventory tools.json"},
	},
	Rewrite: `In Cline's stores (~/.cline/data or $CLINE_DATA_DIR, and the VS Code extension's
globalStorage/saoudrizwan.claude-dev; --agent cline) a 2.x task's rejected name
<uid>0mcp0<tool> is rewritten to the same uid and the sanitized tool only for a tool
--inventory confirms (its server read from the call's result); a 3.x session's name follows
the 3.x rule. A rejected tool that is still configured fails the live tool list too: rename
it at its server or disable it.`,
	Kept: `a Cline 2.x call of a tool
--inventory does not confirm`,
}

// Orphans are the Cline 2.x tasks of a data directory that a Cline 3.x install there no longer
// reads (3.0.65 answers "Resource not found" on load and "cline history" lists nothing old):
// nil unless the directory holds 3.x's sessions/ (Generation 3). They are listed, never moved
// or converted.
type Orphans struct {
	// Dir is the data directory; Tasks the ids of its tasks/<id>/ folders holding an
	// api_conversation_history.json, sorted.
	Dir   string   `json:"dir"`
	Tasks []string `json:"tasks"`
	// Newest is the newest task's time: its id when it is a Unix time in milliseconds (as
	// Cline names tasks), else its history file's modification time.
	Newest time.Time `json:"newest"`
}

// FindOrphans lists the orphaned 2.x tasks of dir (see Orphans); nil when dir is no 3.x data
// directory or holds no task. It looks at the file system.
func FindOrphans(dir string) (*Orphans, error) {
	if Generation(dir) != 3 {
		return nil, nil
	}
	ents, err := os.ReadDir(filepath.Join(dir, TasksDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o := &Orphans{Dir: dir}
	for _, e := range ents {
		hist := filepath.Join(dir, TasksDir, e.Name(), TaskHistoryFile)
		fi, err := os.Stat(hist)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		o.Tasks = append(o.Tasks, e.Name())
		t := fi.ModTime()
		if ms, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && ms > 1e12 && ms < 1e14 {
			t = time.UnixMilli(ms)
		}
		if t.After(o.Newest) {
			o.Newest = t
		}
	}
	if len(o.Tasks) == 0 {
		return nil, nil
	}
	slices.Sort(o.Tasks)
	return o, nil
}
