package copilot

import (
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Copilot CLI session files (fixtures/README.md, copilot-real, and docs/copilot.md "Where the names are").
//
// Name sites, the places 1.0.102 rebuilds the chat it resends from (it resends every stored name
// verbatim: requests/resume-strict.jsonl; probes r1, r3):
//   - store.SiteCall: an assistant.message's data.toolRequests[i].name (the tool call;
//     CallID its toolCallId, Server its mcpServerName when recorded);
//   - SiteToolStart: a tool.execution_start's data.toolName (the same call as executed; CallID
//     data.toolCallId). Rewritten with its call so the session stays one story;
//   - store.SiteCall in a session.import_legacy: data.legacySession.chatMessages[i].tool_calls[j]
//     .function.name (a history-session-state document imported by 1.x; it becomes the chat);
//   - store.SiteCall in a history-session-state document: chatMessages[i].tool_calls[j]
//     .function.name.
//
// Raw identities (never rewritten): mcpServerName (1.0.102 also mcpConfigServerName, the key
// as configured, preferred) and mcpToolName beside a call or its execution_start; a call whose
// own record lacks them (1.0.39 recorded mcpServerName only in toolRequests) takes them from
// the execution_start of the same toolCallId (Identity.CallID).
//
// Not name sites: permission.requested data.permissionRequest.toolName (the tool part only, as
// the rule check saw it), tool.user_requested, external_tool.requested, subagent.selected
// tools, session.custom_agents_updated agents[].tools, skill.invoked allowedTools (rule lists:
// permission/copilot reads those), the session-store.db index.

// Kinds of Copilot CLI stores.
const (
	KindEvents  store.Kind = "copilot-events"
	KindFlat    store.Kind = "copilot-flat"
	KindHistory store.Kind = "copilot-history"
)

// SiteToolStart is a tool.execution_start's data.toolName.
const SiteToolStart store.SiteKind = "tool-start"

// Meta is what a Copilot CLI session says about itself (store.SetState; MetaOf reads it).
type Meta struct {
	// Version is the copilotVersion of its session.start ("" when none was read).
	Version string
	// Cwd is the first data.context.cwd ("" when none).
	Cwd string
}

// MetaOf returns the Meta of a Copilot CLI session snapshot, or nil.
func MetaOf(snap *store.Snapshot) *Meta { return store.StateOf[Meta](snap) }

const (
	cpType = iota
	cpVersion
	cpCwd
	cpReqName
	cpReqID
	cpReqServer
	cpReqConfigServer
	cpReqTool
	cpToolName
	cpToolCallID
	cpServer
	cpConfigServer
	cpTool
	cpLegacyName
	cpLegacyID
	cpNum
)

var eventPatterns = []string{
	cpType:            "type",
	cpVersion:         "data.copilotVersion",
	cpCwd:             "data.context.cwd",
	cpReqName:         "data.toolRequests[*].name",
	cpReqID:           "data.toolRequests[*].toolCallId",
	cpReqServer:       "data.toolRequests[*].mcpServerName",
	cpReqConfigServer: "data.toolRequests[*].mcpConfigServerName",
	cpReqTool:         "data.toolRequests[*].mcpToolName",
	cpToolName:        "data.toolName",
	cpToolCallID:      "data.toolCallId",
	cpServer:          "data.mcpServerName",
	cpConfigServer:    "data.mcpConfigServerName",
	cpTool:            "data.mcpToolName",
	cpLegacyName:      "data.legacySession.chatMessages[*].tool_calls[*].function.name",
	cpLegacyID:        "data.legacySession.chatMessages[*].tool_calls[*].id",
}

// Events is a session's events.jsonl (session-state/<id>/events.jsonl).
var Events = &jsonl.Profile{
	Kind: KindEvents, Agent: ID, Title: "Copilot CLI session", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile(eventPatterns...),
	Resolve:  resolveEvents,
}

// Flat is the flat layout of the same events (session-state/<id>.jsonl), which 1.0.102 no
// longer resumes (Relocate).
var Flat = &jsonl.Profile{
	Kind: KindFlat, Agent: ID, Title: "Copilot CLI flat transcript (legacy layout)", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile(eventPatterns...),
	Resolve:  resolveFlat,
}

// FlatWarning is the problem a flat transcript is reported with (once, at its first record).
const FlatWarning = "legacy flat transcript: Copilot CLI 1.0.102 cannot resume it (\"legacy flat JSONL transcript format … cannot be resumed\"); fix --apply --move-legacy moves it to session-state/<id>/events.jsonl, where the same bytes resume"

// resolveFlat is resolveEvents, with FlatWarning at the file's first record.
func resolveFlat(rec *jsonscan.Record, b *jsonl.Builder) {
	if MetaOf(b.Snapshot()) == nil {
		b.Snapshot().Problems = append(b.Snapshot().Problems, store.Problem{Loc: store.Loc{Line: rec.Line}, Severity: store.SevWarning, Reason: FlatWarning})
	}
	resolveEvents(rec, b)
}

const (
	hsName = iota
	hsID
	hsVersion
)

// History is a history-session-state/<id>.json document of the oldest releases.
var History = &jsonl.Profile{
	Kind: KindHistory, Agent: ID, Title: "Copilot CLI history session (legacy document)", Mode: jsonscan.Document,
	Patterns: jsonscan.MustCompile("chatMessages[*].tool_calls[*].function.name", "chatMessages[*].tool_calls[*].id", "copilotVersion"),
	Resolve:  resolveHistory,
}

// call gathers one tool call's captured members (a toolRequests entry, a legacy tool_calls
// entry).
type call struct {
	name, id, server, configServer, tool *jsonscan.Capture
}

func meta(b *jsonl.Builder) *Meta {
	m := MetaOf(b.Snapshot())
	if m == nil {
		m = &Meta{}
		store.SetState(b.Snapshot(), m)
	}
	return m
}

func resolveEvents(rec *jsonscan.Record, b *jsonl.Builder) {
	var top [cpNum]*jsonscan.Capture
	reqs := map[int]*call{}
	var reqOrder []int
	legacy := map[[2]int]*call{}
	var legacyOrder [][2]int
	for i := range rec.Captures {
		c := &rec.Captures[i]
		switch p := c.Pattern; p {
		case cpReqName, cpReqID, cpReqServer, cpReqConfigServer, cpReqTool:
			k := c.Path[2].Index // data.toolRequests[k]
			r := reqs[k]
			if r == nil {
				r = &call{}
				reqs[k] = r
				reqOrder = append(reqOrder, k)
			}
			switch p {
			case cpReqName:
				r.name = c
			case cpReqID:
				r.id = c
			case cpReqServer:
				r.server = c
			case cpReqConfigServer:
				r.configServer = c
			case cpReqTool:
				r.tool = c
			}
		case cpLegacyName, cpLegacyID:
			k := [2]int{c.Path[3].Index, c.Path[5].Index} // chatMessages[i].tool_calls[j]
			r := legacy[k]
			if r == nil {
				r = &call{}
				legacy[k] = r
				legacyOrder = append(legacyOrder, k)
			}
			if p == cpLegacyName {
				r.name = c
			} else {
				r.id = c
			}
		default:
			if top[p] == nil {
				top[p] = c
			}
		}
	}
	typ := jsonl.String(top[cpType])
	m := meta(b)
	if typ == "session.start" && m.Version == "" {
		m.Version = jsonl.String(top[cpVersion])
	}
	if m.Cwd == "" && (typ == "session.start" || typ == "session.resume") {
		m.Cwd = jsonl.String(top[cpCwd])
	}
	switch typ {
	case "assistant.message":
		for _, k := range reqOrder {
			addCall(b, reqs[k], store.SiteCall)
		}
	case "tool.execution_start":
		addCall(b, &call{name: top[cpToolName], id: top[cpToolCallID], server: top[cpServer], configServer: top[cpConfigServer], tool: top[cpTool]}, SiteToolStart)
	case "session.import_legacy":
		for _, k := range legacyOrder {
			addCall(b, legacy[k], store.SiteCall)
		}
	}
}

// addCall adds the name site of one call and the raw identity recorded beside it.
func addCall(b *jsonl.Builder, c *call, kind store.SiteKind) {
	if c.name == nil {
		return
	}
	s, ok := b.Site(c.name, kind, "")
	if !ok {
		return
	}
	s.CallID = jsonl.String(c.id)
	server := jsonl.String(c.configServer)
	if server == "" {
		server = jsonl.String(c.server)
	}
	s.Server = server
	b.Add(s)
	if tool := jsonl.String(c.tool); server != "" && tool != "" {
		b.AddIdentity(store.Identity{Server: server, Tool: tool, CallID: s.CallID, Loc: store.Loc{Line: c.tool.Line, Offset: c.tool.Offset}})
	}
}

func resolveHistory(rec *jsonscan.Record, b *jsonl.Builder) {
	calls := map[[2]int]*call{}
	var order [][2]int
	for i := range rec.Captures {
		c := &rec.Captures[i]
		if c.Pattern == hsVersion {
			if c.Path.String() == "copilotVersion" {
				meta(b).Version = jsonl.String(c)
			}
			continue
		}
		k := [2]int{c.Path[1].Index, c.Path[3].Index}
		r := calls[k]
		if r == nil {
			r = &call{}
			calls[k] = r
			order = append(order, k)
		}
		if c.Pattern == hsName {
			r.name = c
		} else {
			r.id = c
		}
	}
	meta(b)
	for _, k := range order {
		addCall(b, calls[k], store.SiteCall)
	}
}

// Relocate is the Agent's Relocate hook: a flat transcript session-state/<id>.jsonl belongs at
// session-state/<id>/events.jsonl, where 1.0.102 resumes the same bytes (probe r2b); 1.0.102
// refuses the flat file ("uses a legacy flat JSONL transcript format that is no longer
// supported and cannot be resumed": probe r2). Every other store stays.
func Relocate(ref store.Ref) (to, why string) {
	if ref.Kind != KindFlat {
		return "", ""
	}
	dir, base := filepath.Split(ref.Path)
	if filepath.Base(filepath.Clean(dir)) != SessionStateDir || !strings.HasSuffix(base, ".jsonl") {
		return "", ""
	}
	id := strings.TrimSuffix(base, ".jsonl")
	return filepath.Join(dir, id, EventsFile), "Copilot CLI 1.0.102 refuses to resume a flat session-state/<id>.jsonl transcript and resumes the same bytes at session-state/<id>/events.jsonl"
}
