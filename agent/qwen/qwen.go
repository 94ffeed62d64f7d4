// Package qwen is everything sessionfix knows about Qwen Code's own stores: its runtime directory
// ($QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen; qwen-reference.md §4.1), the formats found
// there (chat sessions, usage_record.jsonl, "/chat save" and edit checkpoints: profiles of
// engine/jsonl) and which naming scheme they follow (Qwen Code's normalizeMcp, mcpname.Classify:
// naming.NormalizeMcp, shared with every agent that follows it; rewrite.NamerFor). Its settings
// files are read by the subpackage agent/qwen/settings, its permission rules matched by permission;
// its permission-rule audit (audit.md §1–§4) is this room's plug-in (audit*.go, auditdoc.go).
// The MCP client of --discover reaches the audit injected (Hooks.ListTools).
package qwen

import (
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Qwen Code's agent id.
const ID store.AgentID = "qwen"

// Env lists the variables that choose the runtime directory, in the order Qwen Code reads them.
var Env = []string{"QWEN_RUNTIME_DIR", "QWEN_HOME"}

// Root is Qwen Code's runtime directory: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen
// (qwen-reference.md §4.1); a leading "~/" of a variable is expanded.
func Root(env agent.Env) string {
	for _, k := range Env {
		if v := env.Getenv(k); v != "" {
			return expandHome(v, env.Home)
		}
	}
	return filepath.Join(env.Home, ".qwen")
}

// RootTried says how Root chose, for an error about a missing runtime directory: each variable
// looked at, in order ("$QWEN_RUNTIME_DIR (not set)", "$QWEN_HOME=/x"), then "~/.qwen" when no
// variable was set.
func RootTried(env agent.Env) []string {
	var out []string
	for _, k := range Env {
		if v := env.Getenv(k); v != "" {
			return append(out, "$"+k+"="+v)
		}
		out = append(out, "$"+k+" (not set)")
	}
	return append(out, "~/.qwen")
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// Profiles are Qwen Code's store formats (run manifests name them by kind).
var Profiles = []*jsonl.Profile{Session, Usage, Checkpoint, EditCheckpoint}

// Agent describes Qwen Code to agent/all.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "Qwen Code",
	Roots: func(env agent.Env) []string { return []string{Root(env)} },
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		return "Qwen Code runtime directory", strings.Join(RootTried(env), ", "), "set QWEN_HOME or QWEN_RUNTIME_DIR"
	},
	JSONL: Profiles, DetectJSONL: Detect,
	Namer: naming.NormalizeMcp{},
},
	RedispatchFunc: Redispatches,
	Audited:        agent.Audited{Of: Audit},
	Helped:         agent.Helped{Of: Help},
}

// room is Qwen Code's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.RedispatchFunc
	agent.Audited
	agent.Helped
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.Redispatcher = (*room)(nil)
	_ agent.Auditor      = (*room)(nil)
	_ agent.Helper       = (*room)(nil)
)

var _ agent.SentAser = (*room)(nil)

func (*room) SentAs(release string) (*agent.Sending, error) { return SentAs(release) }

func (*room) SentAsOption() *agent.Option { return versionOption }

var _ agent.SettingsPasser = (*room)(nil)

func (*room) Settings() *agent.Settings { return Settings }

// versionOption is check's --qwen-version.
var versionOption = &agent.Option{Name: "qwen-version", Value: "stored",
	Usage: "the Qwen Code release that resumes the sessions: from " + mcpname.QwenNormalizingRelease + " on it sends normalizeMcp of each stored call name to OpenAI- and Anthropic-compatible endpoints, and that is checked (\"sent as\"); \"stored\": the stored bytes, as earlier releases send them",
	Hint:  "want a release such as 0.24.4, or \"stored\"", Report: "qwen_release"}

// Help is what sessionfix's --help says of Qwen Code (the default agent: its examples are
// the generic ones).
var Help = &agent.Help{
	Dir: "~/.qwen",
	Roots: `Qwen Code's runtime directory, $QWEN_RUNTIME_DIR, else
$QWEN_HOME, else ~/.qwen`,
	Stores: "session files, usage records, checkpoints",
	Chats:  "~/.qwen/projects/-home-demo-src-lab/chats",
	Rewrite: `The rewrite is what Qwen Code 0.24.4 sends for a restored history: normalizeMcp of each stored
name.`,
	SortsByMtime: true,
	Repair:       "a Qwen repair",
	Registers:    "Qwen Code 0.24.4",
	Names: `Qwen Code's
functions give for it: normalize (the registered name of a tool whose raw identity it is),
normalizeMcp (what Qwen Code 0.24.4 sends for a stored name) and legacy (what versions before
the provider-safe change registered)`,
	NamesExamples: []agent.Example{{Args: "--stdin --json --format jsonl < fixtures/vectors/qwen-names.jsonl"}},
}
