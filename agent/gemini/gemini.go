// Package gemini is everything sessionfix knows about Gemini CLI (@google/gemini-cli) sessions
// (issue 25; fixtures/gemini-real/README.md; the npm packages read: @google/gemini-cli-core
// 0.10.0 to 0.50.0 and the bundle of @google/gemini-cli 0.61.0):
//
//   - Home: $GEMINI_CLI_HOME/.gemini when the variable is set (the CLI's homedir() returns it in
//     place of the user's home), else ~/.gemini (packages/core/src/utils/paths.ts,
//     config/storage.ts). Sessions are <home>/tmp/<project>/chats/session-<time>-<id8>.json
//     (0.36.0 still) or .jsonl (0.40.0, the next stable release); subagent transcripts <home>/tmp/<project>/chats/
//     <parent session id>/<id>.jsonl. <project> is sha256(project root) in hex (early releases)
//     or a slug registered in <home>/projects.json ("projects": {root: slug}; a slug directory
//     also holds .project_root). 0.61.0 copies a hash directory to its slug directory and leaves
//     the original, and converts a resumed .json session into a .jsonl beside it: one session may
//     exist as three files, each a store of its own. Runs in the macOS seatbelt sandbox
//     (SANDBOX=sandbox-exec) keep tmp/ in <home of the CLI>/.cache/.gemini.
//   - Formats: the .json session is one JSON document {sessionId, projectHash, startTime,
//     lastUpdated, messages: […]}; the .jsonl session is a metadata line, one line per message
//     record, and {"$set": {…}} lines, some holding a whole history ({"$set": {"messages": […]}}).
//     Name sites are in profiles.go (Session, SessionJSON).
//   - Naming: mcpname's GeminiEra functions (bare names up to 0.32.x, "mcp_<server>_<tool>" from
//     0.33.0); the repair gives every stored call the name the newest recorded release (0.61.0)
//     declares for its raw tool, read from the call's own displayName "<tool> (<server> MCP
//     Server)" (namer.go).
//   - Rules: settings.json and policies/*.toml (permission/gemini holds their grammar and outcome
//     model); scan and fix read sessions only (KnownFile says so of the rule files).
package gemini

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Gemini CLI's agent id.
const ID store.AgentID = "gemini"

// EnvHome is the variable Gemini CLI takes as the user's home directory (its .gemini is there).
const EnvHome = "GEMINI_CLI_HOME"

// agentName is how messages name the program.
const agentName = "Gemini CLI"

// Home returns the environment's Gemini CLI home: $GEMINI_CLI_HOME/.gemini, else home/.gemini
// (a leading "~/" of the variable is expanded). It does not check that it exists.
func Home(getenv func(string) string, home string) string {
	if v := getenv(EnvHome); v != "" {
		return filepath.Join(expandHome(v, home), ".gemini")
	}
	return filepath.Join(home, ".gemini")
}

// SandboxHome is where runs in the macOS seatbelt sandbox keep their runtime state (tmp/,
// projects.json): <the CLI's home>/.cache/.gemini (Storage.getGlobalRuntimeDir with
// SANDBOX=sandbox-exec).
func SandboxHome(getenv func(string) string, home string) string {
	base := home
	if v := getenv(EnvHome); v != "" {
		base = expandHome(v, home)
	}
	return filepath.Join(base, ".cache", ".gemini")
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// TmpRoot is where a Gemini CLI home keeps its project directories (and their sessions).
func TmpRoot(home string) string { return filepath.Join(home, "tmp") }

// Roots are the roots a scan walks for Gemini CLI without a PATH: the environment's home's tmp/,
// and the sandbox home's tmp/ when it exists.
func Roots(env agent.Env) []string {
	out := []string{TmpRoot(Home(env.Getenv, env.Home))}
	if sb := TmpRoot(SandboxHome(env.Getenv, env.Home)); isDir(sb) {
		out = append(out, sb)
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// HomeOf returns the Gemini CLI home a session path lies in, from the path alone:
// <home>/tmp/<project>/chats/<file> or <home>/tmp/<project>/chats/<parent>/<file> (a subagent
// transcript); "" when the path has neither shape.
func HomeOf(path string) string {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	n := len(parts)
	for _, back := range []int{4, 5} { // tmp/<p>/chats/<f>, tmp/<p>/chats/<parent>/<f>
		i := n - back
		if i < 1 || parts[i] != "tmp" || parts[i+2] != "chats" {
			continue
		}
		return filepath.FromSlash(strings.Join(parts[:i], "/"))
	}
	return ""
}

// IsHome reports whether dir is a Gemini CLI home (~/.gemini or a copy): named .gemini, or
// holding projects.json, or tmp/<project>/chats/. Its settings.json holds Gemini CLI's rules
// and servers (agent.Agent.OwnsSettings). It looks at the file system.
func IsHome(dir string) bool {
	if filepath.Base(filepath.Clean(dir)) == ".gemini" {
		return true
	}
	if fi, err := os.Stat(filepath.Join(dir, "projects.json")); err == nil && fi.Mode().IsRegular() {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "tmp", "*", "chats"))
	return len(m) > 0
}

// rulesHint says where a Gemini CLI rule or config file is read instead of scan and check.
const rulesHint = "its tool rules (tools.exclude, tools.allowed, tools.core, mcpServers include/excludeTools) and policies/*.toml are Gemini CLI's, not sessions; scan and fix read the sessions under tmp/"

// KnownFile says what a Gemini CLI file that is no session store is (agent.Agent.KnownFile):
// settings.json, projects.json or trustedFolders.json in a Gemini CLI home, a project's
// .gemini/settings.json, or a policies/*.toml beside them; "" for any other file. It looks at
// the file system (IsHome).
func KnownFile(path string) string {
	path = filepath.Clean(path)
	dir, base := filepath.Dir(path), filepath.Base(path)
	switch {
	case base == "settings.json" && IsHome(dir):
		return "Gemini CLI settings: " + rulesHint
	case (base == "projects.json" || base == "trustedFolders.json") && IsHome(dir):
		return "Gemini CLI " + strings.TrimSuffix(base, ".json") + " registry: no tool names; scan and fix read the sessions under tmp/"
	case strings.HasSuffix(base, ".toml") && filepath.Base(dir) == "policies" && IsHome(filepath.Dir(dir)):
		return "Gemini CLI policy file: " + rulesHint
	}
	return ""
}

// Agent describes Gemini CLI to agent/all: with --agent gemini and no PATH, the sessions under
// $GEMINI_CLI_HOME/.gemini/tmp (else ~/.gemini/tmp) are read.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: agentName,
	Roots: Roots,
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		tried = "$" + EnvHome + " (not set), so ~/.gemini/tmp"
		if v := env.Getenv(EnvHome); v != "" {
			tried = "$" + EnvHome + "=" + v + ", so " + TmpRoot(Home(env.Getenv, env.Home))
		}
		return "Gemini CLI sessions", tried, "set " + EnvHome
	},
	JSONL: []*jsonl.Profile{Session, SessionJSON}, DetectJSONL: Detect,
	Namer:   geminiNamer{},
	Prepare: prepare,
},
	HomeFunc:      HomeOf,
	ForceFunc:     Force,
	Classed:       agent.Classed{Of: Classes},
	KnownFileFunc: KnownFile,
	Helped:        agent.Helped{Of: Help},
	Audited:       agent.Audited{Of: Audit},
	RuleFixed:     agent.RuleFixed{Of: RuleFix},
}

// room is Gemini CLI's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.HomeFunc
	agent.ForceFunc
	agent.Classed
	agent.KnownFileFunc
	agent.Helped
	agent.Audited
	agent.RuleFixed
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.HomeFinder = (*room)(nil)
	_ agent.Forcer     = (*room)(nil)
	_ agent.Classifier = (*room)(nil)
	_ agent.FileKnower = (*room)(nil)
	_ agent.Helper     = (*room)(nil)
	_ agent.Auditor    = (*room)(nil)
	_ agent.RuleFixer  = (*room)(nil)
)

var _ agent.SettingsOwner = (*room)(nil)

func (*room) OwnsSettings(dir string) bool { return IsHome(dir) }

// Help is what sessionfix's --help says of Gemini CLI (phrases are spliced in as they are: the
// line breaks are where the goldens of cmd/sessionfix show the lines overflow).
var Help = &agent.Help{
	Dir: "~/.gemini",
	Roots: `Gemini CLI's tmp/ under $GEMINI_CLI_HOME/.gemini,
else ~/.gemini`,
	Stores: `Gemini
CLI sessions`,
	Home: `a Gemini CLI home (its own settings.json is
used)`,
	Identities: "Gemini CLI displayName",
	Rewrite: `In a Gemini CLI session (tmp/<project>/chats/session-*.json and .jsonl under
$GEMINI_CLI_HOME/.gemini or ~/.gemini; --agent gemini) every name Gemini CLI sends back when it
resumes (toolCalls[].name, functionResponse names, functionCall parts, also inside
{"$set":{"messages":…}} records) gets the name Gemini CLI 0.61.0 declares for the same raw
tool, mcp_<server>_<tool>: the raw tool is read from the call's displayName, else from
--inventory, --discover or the mcpServers keys of the home's settings.json. A name two raw
tools now share is written and reported; a name whose raw tool cannot be known is kept.`,
	Kept: `a Gemini CLI call whose
raw tool is unknown`,
}
