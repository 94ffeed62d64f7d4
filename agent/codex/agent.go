package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/engine/sqlite"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// ID is the Codex CLI's agent id.
const ID store.AgentID = "codex"

// Env lists the variables Codex reads to find its home and its SQLite files (schemes.md §A.6,
// §A.7).
var Env = []string{"CODEX_HOME", "CODEX_SQLITE_HOME"}

// Roots are the places of the Codex home ($CODEX_HOME, else ~/.codex) that hold sessions: the
// rollout directories sessions/ and archived_sessions/ (schemes.md §A.6), then the SQLite
// state files that exist (state_*.sqlite, thread_history_*.sqlite; §A.7), read for consistency
// only. It does not check that the directories exist.
func Roots(env agent.Env) []string {
	home := Home(env.Getenv, env.Home)
	return append(SessionDirs(home), StateDBs(env.Getenv, home)...)
}

// existingRoots is Roots without the paths that do not exist (the first, sessions/, when none
// does: the error then names it).
func existingRoots(env agent.Env) []string {
	dirs := Roots(env)
	var out []string
	for _, p := range dirs {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return dirs[:1]
	}
	return out
}

// RootsTried says how the Codex home was chosen, for the error about a home without sessions.
func RootsTried(env agent.Env) (what, tried, hint string) {
	tried = "$CODEX_HOME (not set), so ~/.codex"
	if v := env.Getenv("CODEX_HOME"); v != "" {
		tried = "$CODEX_HOME=" + v
	}
	return "Codex home with sessions", tried, "set CODEX_HOME"
}

// Detect picks the rollout profile for a *.jsonl file named like a rollout or whose first line
// is a session_meta record (always a sure verdict).
func Detect(path string, firstLine []byte) (*jsonl.Profile, bool) {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if strings.HasSuffix(base, ".jsonl") && (IsRolloutName(base) || LooksLikeRollout(firstLine)) {
		return Rollout, true
	}
	return nil, false
}

// Force reads every *.jsonl as a rollout under --agent codex (except the home's history.jsonl
// and session_index.jsonl), whatever its first line, with a warning when it does not look like
// one.
func Force(path string, _ []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if !strings.HasSuffix(base, ".jsonl") || IsCompanion(base) {
		return nil, ""
	}
	switch {
	case auto != nil && auto != Rollout:
		return Rollout, fmt.Sprintf("read as a Codex rollout (--agent codex), but it looks like a %s store (%s): its tool names are not where Codex keeps them; drop --agent or pass --agent %s", auto.Agent, auto.Kind, auto.Agent)
	case auto == nil:
		return Rollout, "read as a Codex rollout (--agent codex), but it does not look like one (not named rollout-*.jsonl, no session_meta first line)"
	}
	return Rollout, ""
}

// Compressed says why a zstd-compressed rollout is not read (a rollout name, or any *.jsonl.zst
// under --agent codex).
func Compressed(path string, forced bool) string {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if !IsRolloutName(base) && !(forced && strings.HasSuffix(base, ".jsonl.zst")) {
		return ""
	}
	if _, err := os.Stat(strings.TrimSuffix(path, ".zst")); err == nil {
		return "zstd-compressed Codex rollout next to its plain .jsonl (Codex reads the plain file): not parsed"
	}
	return "zstd-compressed Codex rollout: reported, not parsed; its tool names are not checked (decompress it with zstd -d, keep only the .jsonl, and run again to repair it)"
}

// Agent describes the Codex CLI to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "Codex CLI",
	Roots: existingRoots, RootsTried: RootsTried,
	JSONL: []*jsonl.Profile{Rollout}, DetectJSONL: Detect,
	SQLite:  []*sqlite.Profile{HistoryProfile, StateProfile},
	Namer:   codexNamer{},
	Prepare: prepare,
},
	HomeFunc:       HomeOf,
	LinkFunc:       FollowLink,
	ForceFunc:      Force,
	Classed:        agent.Classed{Of: CodexClasses},
	RedispatchFunc: Redispatches,
	Optioned:       agent.Optioned{Of: options},
	Helped:         agent.Helped{Of: Help},
}

// room is Codex CLI's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.HomeFunc
	agent.LinkFunc
	agent.ForceFunc
	agent.Classed
	agent.RedispatchFunc
	agent.Optioned
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.HomeFinder   = (*room)(nil)
	_ agent.LinkFollower = (*room)(nil)
	_ agent.Forcer       = (*room)(nil)
	_ agent.Classifier   = (*room)(nil)
	_ agent.Redispatcher = (*room)(nil)
	_ agent.Optioner     = (*room)(nil)
	_ agent.Helper       = (*room)(nil)
)

var _ agent.Compressor = (*room)(nil)

func (*room) Compressed(path string, forced bool) string { return Compressed(path, forced) }

var _ agent.SentNamer = (*room)(nil)

func (*room) SentName(namespace, name string) string {
	return mcpname.CodexName{Namespace: namespace, Name: name}.Flat()
}

var _ agent.OncePreparer = (*room)(nil)

func (*room) PrepareOnce() bool { return true }

// options are Codex's own flags of scan, fix and check.
var options = []agent.Option{{Name: ConfigOption, File: true, Before: "discover", Plan: "codex_config", PlanAfter: "agent",
	Usage: "Codex config.toml giving MCP server keys, tool filters and naming options (default: the config.toml of the Codex home each rollout is in, else $CODEX_HOME/config.toml, else ~/.codex/config.toml, when it exists)"}}

// Help is what sessionfix's --help says of the Codex CLI.
var Help = &agent.Help{
	Dir: "~/.codex",
	Roots: `the Codex home's sessions/ and archived_sessions/,
$CODEX_HOME else ~/.codex`,
	Stores: "Codex rollouts",
	Home:   "a Codex home (its own config.toml is used)",
	Scan:   []agent.Example{{Args: "--agent codex"}},
	Fix: []agent.Example{
		{Args: "--agent codex --apply --yes", Comment: "Codex rollouts under $CODEX_HOME or ~/.codex"},
		{Args: "tickets/4711/user-codex", Comment: "a copied Codex home, with its own config.toml"},
	},
	Rewrite: `In a Codex rollout, a function_call whose name a provider rejects is rewritten to the name
today's Codex registers for its raw MCP identity, as "name" plus an inserted "namespace"
member; the plan says where each raw identity came from (invocation record, --inventory, the
home's thread_history_*.sqlite, or a config.toml server key; --discover lists the tools of the
config's servers) and which config.toml and inventory it used. A rollout inside a Codex home (a
copied ~/.codex) is planned with that home's own config.toml and thread history, never with
$CODEX_HOME's or ~/.codex's (a rollout in no home uses those); --codex-config overrides. A rejected name nothing attributes is kept.`,
	Kept: "a Codex call nothing attributes",
	Check: `For a Codex call stored as namespace + name, the
name checked is the flat spelling the model sees (mcp__fs + read_file -> mcp__fs__read_file).`,
	Identities: "Codex invocation records and thread history",
	Inventory:  "to name Codex calls as Codex does",
	Discover:   "start the MCP servers of the Codex config.toml and list their tools: the full inventory, so Codex names get the collision suffixes Codex computes",
}

// homeFiles reports whether dir holds a file only a Codex home has besides its session
// directories: config.toml, auth.json, history.jsonl, session_index.jsonl, state_*.sqlite or
// thread_history_*.sqlite (schemes.md §A.6, §A.7).
func homeFiles(dir string) bool {
	for _, name := range []string{ConfigName, "auth.json", "history.jsonl", "session_index.jsonl"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	for _, pat := range []string{"state_*.sqlite", "thread_history_*.sqlite"} {
		if m, _ := filepath.Glob(filepath.Join(dir, pat)); len(m) > 0 {
			return true
		}
	}
	return false
}

// FollowLink says why discovery follows the symbolic link at path: a Codex home's sessions/ or
// archived_sessions/ (schemes.md §A.6: moved to another disk and linked back, the home's
// rollouts are there); "" for any other link (a sessions link outside a Codex home included).
func FollowLink(path string) string {
	switch filepath.Base(path) {
	case "sessions", "archived_sessions":
	default:
		return ""
	}
	if !homeFiles(filepath.Dir(path)) {
		return ""
	}
	return "a Codex home's " + filepath.Base(path) + "/"
}
