// Package copilot is the room of GitHub Copilot CLI (`@github/copilot`, issue 26): where it
// keeps its sessions, how their tool names are found and repaired, and the plug-in pieces its
// rule audit will use (the rule semantics themselves are pure, in permission/copilot).
//
// Home: $COPILOT_HOME, else ~/.copilot (the releases' fa(): configDir, $COPILOT_HOME,
// ~/.copilot). Releases before the XDG migration kept sessions under
// $XDG_STATE_HOME/.copilot (session-state/, history-session-state/) and configs under
// $XDG_CONFIG_HOME/.copilot (mcp-config.json, permissions-config.json); the migration (in
// 1.0.40's code, run by the releases that followed) moves them to ~/.copilot and leaves
// symbolic links behind. A copied .copilot directory given as PATH is a home of its own: it is
// recognised by its session-state/ or history-session-state/ beside an mcp-config.json or
// config.json.
//
// Stores (fixtures/README.md, copilot-real), three layouts of one history:
//   - session-state/<id>/events.jsonl (KindEvents): one event a line,
//     {type, data, id, timestamp, parentId}; resuming only appends.
//   - session-state/<id>.jsonl (KindFlat): the same events in the flat layout of 0.0.354 and
//     0.0.356; 1.0.102 refuses to resume it ("legacy flat JSONL transcript format … cannot be
//     resumed"), and resumes the same bytes at session-state/<id>/events.jsonl (probe r2b): fix
//     --apply --move-legacy moves it there (store.Relocation, undone by undo).
//   - history-session-state/<id>.json (KindHistory): the oldest releases' one JSON document,
//     {sessionId, startTime, chatMessages, timeline, selectedModel}; 1.0.x turns it into a
//     session.import_legacy event.
//
// Names follow mcpname's Copilot eras (mcpname.CopilotNameIn): "<server>-<tool>" raw up to
// 0.0.417 (uncapped: the only names over 64), the server sanitized from 0.0.420, both parts
// from 1.0.40. 1.0.102 resends every stored name verbatim when it resumes, so a stored name an
// endpoint rejects fails every resume (probes r1, r3: HTTP 400, exit 1). The repair (namer.go)
// rewrites such names to the name the newest release registers for the same raw tool, read
// from mcpServerName/mcpToolName beside the name (or the configured server keys); names no
// current tool answers to are reported, never guessed at.
package copilot

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// ID is GitHub Copilot CLI's agent id.
const ID store.AgentID = "copilot"

// agentName is how messages name the program.
const agentName = "Copilot CLI"

// EnvHome is the variable that moves Copilot CLI's home.
const EnvHome = "COPILOT_HOME"

// Env lists the variables Copilot CLI reads to find its stores, in the order it consults them.
var Env = []string{EnvHome, "XDG_STATE_HOME", "XDG_CONFIG_HOME"}

// Directory and file names of a home.
const (
	SessionStateDir = "session-state"
	HistoryDir      = "history-session-state"
	EventsFile      = "events.jsonl"
	MCPConfigFile   = "mcp-config.json"
	ConfigFile      = "config.json"
	PermissionsFile = "permissions-config.json"
	WorkspaceFile   = "workspace.yaml"
	homeDirName     = ".copilot"
)

// Home returns the environment's home: $COPILOT_HOME, else home/.copilot.
func Home(getenv func(string) string, home string) string {
	if d := getenv(EnvHome); d != "" {
		return d
	}
	return filepath.Join(home, homeDirName)
}

// LegacyHomes are the homes of releases before the XDG migration, where set:
// $XDG_STATE_HOME/.copilot (sessions) and $XDG_CONFIG_HOME/.copilot (configs).
func LegacyHomes(getenv func(string) string) (state, config string) {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		state = filepath.Join(x, homeDirName)
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		config = filepath.Join(x, homeDirName)
	}
	return state, config
}

// Roots are the session directories a scan without PATH walks: session-state/ and
// history-session-state/ of the environment's home, then of the legacy state home
// ($XDG_STATE_HOME/.copilot) unless it is the same directory or links to it (the migration
// leaves links: the same files are walked once). Only directories that exist are listed; when
// none does, the home's session-state/ (the error then names it).
func Roots(env agent.Env) []string {
	home := Home(env.Getenv, env.Home)
	cands := []string{filepath.Join(home, SessionStateDir), filepath.Join(home, HistoryDir)}
	if st, _ := LegacyHomes(env.Getenv); st != "" {
		cands = append(cands, filepath.Join(st, SessionStateDir), filepath.Join(st, HistoryDir))
	}
	var out []string
	var seen []os.FileInfo
	for _, p := range cands {
		fi, err := os.Stat(p) // follows a migration link to what it names
		if err != nil || !fi.IsDir() {
			continue
		}
		dup := false
		for _, s := range seen {
			dup = dup || os.SameFile(s, fi)
		}
		if dup {
			continue
		}
		seen = append(seen, fi)
		out = append(out, p)
	}
	if len(out) == 0 {
		return cands[:1]
	}
	return out
}

// RootsTried says how the home was chosen, for the error about a home without sessions.
func RootsTried(env agent.Env) (what, tried, hint string) {
	tried = "$" + EnvHome + " (not set), so ~/.copilot"
	if v := env.Getenv(EnvHome); v != "" {
		tried = "$" + EnvHome + "=" + v
	}
	if st, _ := LegacyHomes(env.Getenv); st != "" {
		tried += ", and " + st
	}
	return "Copilot CLI sessions", tried, "set " + EnvHome
}

// IsHome reports whether dir is a Copilot CLI home: named .copilot, or holding
// session-state/ or history-session-state/ beside mcp-config.json or config.json. It looks at
// the file system.
func IsHome(dir string) bool {
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	isFile := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
	if !isDir(filepath.Join(dir, SessionStateDir)) && !isDir(filepath.Join(dir, HistoryDir)) {
		return false
	}
	return filepath.Base(filepath.Clean(dir)) == homeDirName || isFile(filepath.Join(dir, MCPConfigFile)) || isFile(filepath.Join(dir, ConfigFile))
}

// HomeOf returns the home a session file lies in, from its path: the directory holding
// session-state/ (for session-state/<id>/events.jsonl and session-state/<id>.jsonl) or
// history-session-state/ (for history-session-state/<id>.json); "" for any other path.
func HomeOf(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	n := len(parts)
	switch {
	case n >= 4 && parts[n-1] == EventsFile && parts[n-3] == SessionStateDir:
		return filepath.FromSlash(strings.Join(parts[:n-3], "/"))
	case n >= 3 && parts[n-2] == SessionStateDir && strings.HasSuffix(parts[n-1], ".jsonl"):
		return filepath.FromSlash(strings.Join(parts[:n-2], "/"))
	case n >= 3 && parts[n-2] == HistoryDir && strings.HasSuffix(parts[n-1], ".json"):
		return filepath.FromSlash(strings.Join(parts[:n-2], "/"))
	}
	return ""
}

// homeOf is HomeOf for agent.Agent.HomeOf: the home only when it is one (IsHome).
func homeOf(path string) string {
	if h := HomeOf(path); h != "" && IsHome(h) {
		return h
	}
	return ""
}

// FollowLink says why discovery follows the symbolic link at path: a Copilot CLI home's
// session-state/ or history-session-state/ (the XDG migration leaves such links; a user may
// link them to another disk); "" for any other link.
func FollowLink(path string) string {
	switch filepath.Base(path) {
	case SessionStateDir, HistoryDir:
	default:
		return ""
	}
	if !IsHome(filepath.Dir(path)) {
		return ""
	}
	return "a Copilot CLI home's " + filepath.Base(path) + "/"
}

// rulesHint is where Copilot CLI's rule and config files are read instead of scan.
const rulesHint = "scan and fix read sessions only"

// KnownFile says what a Copilot CLI file that is no session store is: mcp-config.json,
// permissions-config.json, config.json or a session's workspace.yaml in a home or session
// directory, or a project's .mcp.json beside nothing else of ours is left to other agents.
func KnownFile(path string) string {
	path = filepath.Clean(path)
	dir, base := filepath.Dir(path), filepath.Base(path)
	switch {
	case base == MCPConfigFile && IsHome(dir):
		return "Copilot CLI MCP config (server keys: raw identities of its tool names, read by scan and fix); " + rulesHint
	case base == PermissionsFile && IsHome(dir):
		return "Copilot CLI permission grants (locations.<dir>.tool_approvals); " + rulesHint
	case base == ConfigFile && IsHome(dir):
		return "Copilot CLI config; " + rulesHint
	case base == WorkspaceFile && filepath.Base(filepath.Dir(dir)) == SessionStateDir:
		return "Copilot CLI session metadata (its cwd names the project whose .mcp.json is read); " + rulesHint
	}
	return ""
}

// Detect picks the profile of a Copilot CLI session file: by its place in a home
// (session-state/<id>/events.jsonl, session-state/<id>.jsonl, history-session-state/<id>.json;
// sure), or by a first line only Copilot CLI writes (a session.start event of producer
// "copilot-agent" or with "copilotVersion"; sure, read as events wherever it lies).
func Detect(path string, firstLine []byte) (*jsonl.Profile, bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	n := len(parts)
	base := parts[n-1]
	if n >= 3 && parts[n-2] == HistoryDir && strings.HasSuffix(base, ".json") {
		return History, true
	}
	if !strings.HasSuffix(base, ".jsonl") {
		return nil, false
	}
	first := LooksLikeEvents(firstLine)
	switch {
	case n >= 3 && base == EventsFile && parts[n-3] == SessionStateDir:
		return Events, true
	case n >= 2 && parts[n-2] == SessionStateDir && (first || looksLikeSessionID(strings.TrimSuffix(base, ".jsonl"))):
		return Flat, true
	case first:
		return Events, true
	}
	return nil, false
}

// LooksLikeEvents reports whether a first line is Copilot CLI's: a session.start event whose data
// names the producer "copilot-agent" or a "copilotVersion" (byte tests: the line may be cut).
func LooksLikeEvents(firstLine []byte) bool {
	s := strings.TrimLeft(string(firstLine), " \t\r")
	return strings.HasPrefix(s, `{"type":"session.start"`) &&
		(strings.Contains(s, `"producer":"copilot-agent"`) || strings.Contains(s, `"copilotVersion":`))
}

// looksLikeSessionID reports whether s has the shape of a session id (a UUID: 36 characters
// of hex digits and hyphens).
func looksLikeSessionID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Force reads *.jsonl files as Copilot CLI events (a flat transcript when it lies directly in
// session-state/) and history-session-state *.json as history documents under --agent copilot,
// with a warning when the content says otherwise.
func Force(path string, firstLine []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	if p, _ := Detect(path, firstLine); p != nil {
		return p, ""
	}
	if !strings.HasSuffix(path, ".jsonl") {
		if auto != nil {
			return nil, "looks like a " + string(auto.Agent) + " store (" + string(auto.Kind) + "): not read with --agent copilot (drop --agent or pass --agent " + string(auto.Agent) + ")"
		}
		return nil, ""
	}
	if auto != nil {
		return Events, "read as Copilot CLI events (--agent copilot), but it looks like a " + string(auto.Agent) + " store (" + string(auto.Kind) + "): its tool names are not where Copilot CLI keeps them; drop --agent or pass --agent " + string(auto.Agent)
	}
	return Events, "read as Copilot CLI events (--agent copilot), but it does not look like them (no session.start first line)"
}

// Agent describes GitHub Copilot CLI to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "GitHub Copilot CLI",
	Roots: Roots, RootsTried: RootsTried,
	JSONL: []*jsonl.Profile{Events, Flat, History}, DetectJSONL: Detect,
	Namer:   copilotNamer{},
	Prepare: prepare,
},
	HomeFunc:      homeOf,
	LinkFunc:      FollowLink,
	ForceFunc:     Force,
	Classed:       agent.Classed{Of: Classes},
	KnownFileFunc: KnownFile,
	Optioned:      agent.Optioned{Of: options},
	Helped:        agent.Helped{Of: Help},
	Audited:       agent.Audited{Of: Audit},
	RuleFixed:     agent.RuleFixed{Of: RuleFix},
}

// room is GitHub Copilot CLI's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.HomeFunc
	agent.LinkFunc
	agent.ForceFunc
	agent.Classed
	agent.KnownFileFunc
	agent.Optioned
	agent.Helped
	agent.Audited
	agent.RuleFixed
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.HomeFinder   = (*room)(nil)
	_ agent.LinkFollower = (*room)(nil)
	_ agent.Forcer       = (*room)(nil)
	_ agent.Classifier   = (*room)(nil)
	_ agent.FileKnower   = (*room)(nil)
	_ agent.Optioner     = (*room)(nil)
	_ agent.Helper       = (*room)(nil)
	_ agent.Auditor      = (*room)(nil)
	_ agent.RuleFixer    = (*room)(nil)
)

var _ agent.Relocator = (*room)(nil)

func (*room) Relocate(ref store.Ref) (to, why string) { return Relocate(ref) }

// options are Copilot CLI's own flags of scan, fix and check.
var options = []agent.Option{
	{Name: MCPConfigOption, Repeatable: true, File: true, Usage: "Copilot CLI: an MCP config file (its --additional-mcp-config, a .mcp.json): its server keys are raw identities of stored names"},
}

// Help is what sessionfix's --help says of Copilot CLI.
var Help = &agent.Help{
	Dir:        "~/.copilot",
	Roots:      "the Copilot CLI home's\nsession-state/ and history-session-state/, $COPILOT_HOME else ~/.copilot",
	Stores:     "Copilot CLI sessions",
	Home:       "a Copilot CLI home (its own mcp-config.json is used)",
	Identities: "Copilot CLI mcpServerName/mcpToolName",
	Scan:       []agent.Example{{Args: "--agent copilot"}},
	Fix: []agent.Example{
		{Args: "--agent copilot --apply --yes", Comment: "Copilot CLI sessions under $COPILOT_HOME or ~/.copilot"},
		{Args: "--apply --yes --move-legacy", Comment: "also move Copilot CLI flat transcripts"},
	},
	Rewrite: `In a Copilot CLI session (session-state/<id>/events.jsonl, a flat session-state/<id>.jsonl,
history-session-state/<id>.json; --agent copilot) a stored name a provider rejects (over 64
characters, characters outside [A-Za-z0-9_-]) is rewritten to the name Copilot CLI 1.0.102
registers for the same raw tool, taken from the mcpServerName/mcpToolName beside it, else from
the server keys of mcp-config.json, a project's .mcp.json or --mcp-config FILE; a provider-safe
name no current tool answers to is reported and kept. A flat transcript 1.0.102 cannot resume
is reported; fix --apply --move-legacy moves it to session-state/<id>/events.jsonl (undo moves
it back).`,
	Kept: "a Copilot CLI name nothing attributes",
}
