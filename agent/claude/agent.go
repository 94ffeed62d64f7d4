package claude

import (
	"bytes"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/store"
)

// ID is Claude Code's agent id.
const ID store.AgentID = "claude"

// LooksLikeSession reports whether a *.jsonl outside a chats/ directory (the default agent's
// sessions, see inChats) is a Claude Code session (~/.claude/projects/<dir>/<uuid>.jsonl,
// <uuid>/subagents/agent-*.jsonl): named like a default-agent session, but its first line is one
// only Claude Code writes — a message line with "isSidechain" whose message has content, not
// GenAI parts (the default agent's newer records may have isSidechain too; the session store
// part of its reference in docs/), a "summary" with "leafUuid", a "queue-operation" or a "file-history-snapshot" (Claude
// Code 1.0.51 and 2.1.x; schemes.md §C). Its tool names are not where a default-agent session
// keeps them.
func LooksLikeSession(path string, firstLine []byte) bool {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	dir := path[:max(0, strings.LastIndexAny(path, `/\`))]
	if !strings.HasSuffix(base, ".jsonl") || inChats(dir) {
		return false
	}
	// Byte tests, not a decode: the first line may be cut at the head size.
	line := bytes.TrimLeft(firstLine, " \t\r")
	switch {
	case !bytes.HasPrefix(line, []byte("{")):
		return false
	case bytes.Contains(line, []byte(`"isSidechain":`)):
		// The default agent's newer records may carry isSidechain too, but their message is GenAI
		// {role, parts}; Claude Code's is {role, content} and its lines have userType.
		return !bytes.Contains(line, []byte(`"parts":`)) &&
			(bytes.Contains(line, []byte(`"content":`)) || bytes.Contains(line, []byte(`"userType":`)))
	case bytes.HasPrefix(line, []byte(`{"type":"summary"`)) && bytes.Contains(line, []byte(`"leafUuid":`)):
		return true
	}
	return bytes.HasPrefix(line, []byte(`{"type":"queue-operation"`)) || bytes.HasPrefix(line, []byte(`{"type":"file-history-snapshot"`))
}

// Detect takes a *.jsonl whose first line only Claude Code writes (LooksLikeSession): a sure
// verdict, so a session named <uuid>.jsonl is not taken for a default-agent session.
func Detect(path string, firstLine []byte) (*jsonl.Profile, bool) {
	if LooksLikeSession(path, firstLine) {
		return Session, true
	}
	return nil, false
}

// Force reads every *.jsonl but the default agent's usage_record.jsonl as a Claude Code session
// under --agent claude, with a warning when its first line says otherwise.
func Force(path string, _ []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	// usage_record.jsonl is the default agent's runtime's (never a session).
	if strings.HasSuffix(path, ".jsonl") && path[strings.LastIndexAny(path, `/\`)+1:] != "usage_record.jsonl" {
		switch {
		case auto != nil && auto != Session:
			return Session, "read as a Claude Code session (--agent claude), but it looks like a " + string(auto.Agent) + " store (" + string(auto.Kind) + "): its tool names are not where Claude Code keeps them; drop --agent or pass --agent " + string(auto.Agent)
		case auto == nil:
			return Session, "read as a Claude Code session (--agent claude), but it does not look like one (no Claude Code first line)"
		}
		return Session, ""
	}
	if auto != nil {
		return nil, "looks like a " + string(auto.Agent) + " store (" + string(auto.Kind) + "): not read with --agent claude (drop --agent or pass --agent " + string(auto.Agent) + ")"
	}
	return nil, ""
}

// Agent describes Claude Code to agent/all: with --agent claude and no PATH, the sessions under
// $CLAUDE_CONFIG_DIR (else ~/.claude) are read.
var Agent agent.Agent = &room{core: agent.Core{
	ID: ID, Name: "Claude Code",
	// The config directory's projects/ (sessions); the ~/.claude.json beside it plans them.
	Roots: func(env agent.Env) []string { return []string{ProjectsRoot(Home(env.Getenv, env.Home))} },
	RootsTried: func(env agent.Env) (what, tried, hint string) {
		tried = "$" + EnvConfigDir + " (not set), so ~/.claude"
		if v := env.Getenv(EnvConfigDir); v != "" {
			tried = "$" + EnvConfigDir + "=" + v
		}
		return "Claude Code sessions", tried, "set " + EnvConfigDir
	},
	JSONL: []*jsonl.Profile{Session}, DetectJSONL: Detect,
	Namer:   claudeNamer{},
	Prepare: prepare,
},
	ForceFunc:      Force,
	Classed:        agent.Classed{Of: ClaudeClasses},
	KnownFileFunc:  KnownFile,
	RedispatchFunc: Redispatches,
	Audited:        agent.Audited{Of: Audit},
	Optioned:       agent.Optioned{Of: options},
	Helped:         agent.Helped{Of: Help},
	RuleFixed:      agent.RuleFixed{Of: RuleFix},
}

// room is Claude Code's agent: its Core, the capabilities it embeds (agent/room.go; Agent says with
// which value or function), its own methods, and a pin of each capability.
type room struct {
	core agent.Core
	agent.ForceFunc
	agent.Classed
	agent.KnownFileFunc
	agent.RedispatchFunc
	agent.Audited
	agent.Optioned
	agent.Helped
	agent.RuleFixed
}

// Core is the agent's core.
func (r *room) Core() *agent.Core { return &r.core }

var (
	_ agent.Forcer       = (*room)(nil)
	_ agent.Classifier   = (*room)(nil)
	_ agent.FileKnower   = (*room)(nil)
	_ agent.Redispatcher = (*room)(nil)
	_ agent.Auditor      = (*room)(nil)
	_ agent.Optioner     = (*room)(nil)
	_ agent.Helper       = (*room)(nil)
	_ agent.RuleFixer    = (*room)(nil)
)

var _ agent.TextSiter = (*room)(nil)

func (*room) TextSites() []store.SiteKind {
	return []store.SiteKind{ClaudeSiteSelect, ClaudeSiteDeferred}
}

var _ agent.SettingsOwner = (*room)(nil)

func (*room) OwnsSettings(dir string) bool { return IsConfigDir(dir) }

// options are Claude Code's own flags of scan, fix and check.
var options = []agent.Option{
	{Name: MCPConfigOption, Repeatable: true, File: true, Plan: "mcp_config", PlanAfter: "profile", Usage: "Claude Code MCP config file ({\"mcpServers\": {…}}, the format of claude --mcp-config and .mcp.json; repeatable): its server keys are raw identities of Claude Code names (with --discover its servers are listed)"},
	{Name: AllowSharedOption, Bool: true, Plan: "allow_shared", PlanAfter: "profile", Usage: "Claude Code: also rewrite a stored name whose current spelling is shared by two raw tools (only the first of them can be called; always reported); with fix --rules, also an allow rule whose new spelling is such a name (it then grants both)"},
}

// Help is what sessionfix's --help says of Claude Code.
var Help = &agent.Help{
	Dir:        "~/.claude",
	Roots:      "Claude Code's projects/ in $CLAUDE_CONFIG_DIR, else ~/.claude",
	Identities: "Claude Code attributionMcpServer/Tool",
	Rewrite: `In a Claude Code session (projects/<dir>/<session>.jsonl, subagents/*.jsonl under
$CLAUDE_CONFIG_DIR or ~/.claude; --agent claude) every name Claude Code sends back when it
resumes (tool_use, ToolSearch select: lists, tool_reference, deferred-tool names) that the
newest release spells differently gets that release's spelling of the same raw MCP identity,
taken from --inventory, --discover, attributionMcpServer/Tool, or the server keys of
~/.claude.json, .mcp.json and --mcp-config FILE (repeatable). A name two raw tools now share
is rewritten only with --allow-shared (always reported); names in text are reported, never
rewritten; names over 64 are what Claude Code registers: kept.`,
}

// inChats reports whether dir is a chats/ directory or one below it (archive/), where the
// default agent (agent/all.Default) keeps its sessions: a file there is one of its sessions
// whatever its first line.
func inChats(dir string) bool {
	dir = strings.ReplaceAll(dir, `\`, "/")
	return strings.HasSuffix(dir, "/chats") || strings.Contains(dir+"/", "/chats/")
}
