package gemini

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// Gemini CLI session name sites (fixtures/gemini-real/README.md "Where the names are"; 0.61.0's
// loadConversationRecord and convertSessionToClientHistory, packages/core/src/services/
// chatRecordingService.ts and utils/sessionUtils.ts). When 0.61.0 resumes a session it rebuilds
// the API history from the message records and sends, verbatim:
//
//   - SiteCall: a gemini message's toolCalls[i].name (sent as functionCall.name) and a
//     content[j].functionCall.name (a message whose content holds the calls is sent as is);
//     CallID is the call's id (it starts with the name the release gave the tool);
//   - SiteResponse: toolCalls[i].result[k].functionResponse.name (a result array is sent as the
//     response parts) and a content[j].functionResponse.name (a user message holding the
//     responses); CallID is the functionResponse's own id. A message inside a {"$set":
//     {"messages": …}} record repeats every response of its turn under each of its calls: each
//     one is a site, resolved by its own id.
//
// The same paths are read at the top of a .jsonl message line, under messages[*] (the .json
// document, and a .jsonl metadata line that carries messages) and under $set.messages[*] (a
// .jsonl record replacing the whole history: the last one wins when the session is loaded).
// toolCalls[i].displayName, "<raw tool> (<server> MCP Server)", is the call's raw identity
// (store.Identity, with the call's id): never rewritten. Ids are not names (no provider checks
// them) and are kept.

// Kinds of Gemini CLI's stores (run manifests and reports name them).
const (
	// KindSession is a .jsonl session (0.40.0 on) or subagent transcript.
	KindSession store.Kind = "gemini-session"
	// KindSessionJSON is a .json session document (up to 0.36.0 at least; 0.61.0 leaves it beside the
	// .jsonl it converts it into).
	KindSessionJSON store.Kind = "gemini-session-json"
)

// The fields captured under each prefix (field ids; a pattern's id is prefix*nFields+field).
const (
	fToolID = iota
	fToolName
	fToolDisplay
	fResultID
	fResultName
	fCallID
	fCallName
	fRespID
	fRespName
	nFields
)

var fieldPaths = [nFields]string{
	fToolID:      "toolCalls[*].id",
	fToolName:    "toolCalls[*].name",
	fToolDisplay: "toolCalls[*].displayName",
	fResultID:    "toolCalls[*].result[*].functionResponse.id",
	fResultName:  "toolCalls[*].result[*].functionResponse.name",
	fCallID:      "content[*].functionCall.id",
	fCallName:    "content[*].functionCall.name",
	fRespID:      "content[*].functionResponse.id",
	fRespName:    "content[*].functionResponse.name",
}

// prefixes are where message records sit: a .jsonl message line, the messages of the .json
// document (or of a .jsonl metadata line), the messages of a $set record.
var prefixes = []string{"", "messages[*].", "$set.messages[*]."}

func patterns() []string {
	var out []string
	for _, p := range prefixes {
		for _, f := range fieldPaths {
			out = append(out, p+f)
		}
	}
	return out
}

// Meta is what a Gemini CLI session says about itself, kept in its snapshot (store.SetState;
// MetaOf reads it): the displayNames that split more than one way ("a (b (c MCP Server)"), by
// call id, for the namer to read again with the configured server keys; and the ids of calls
// whose displayName is a built-in tool's ("ReadFile", not the call's own name): their names are
// never MCP names.
type Meta struct {
	Ambiguous map[string]string
	Builtin   map[string]bool
}

// meta returns the snapshot's Meta, made on first use.
func meta(b *jsonl.Builder) *Meta {
	m := MetaOf(b.Snapshot())
	if m == nil {
		m = &Meta{Ambiguous: map[string]string{}, Builtin: map[string]bool{}}
		store.SetState(b.Snapshot(), m)
	}
	return m
}

// MetaOf returns the Meta of a Gemini CLI session snapshot, or nil.
func MetaOf(snap *store.Snapshot) *Meta { return store.StateOf[Meta](snap) }

// Session is a Gemini CLI .jsonl session (see the comment at the top of this file).
var Session = &jsonl.Profile{
	Kind: KindSession, Agent: ID, Title: "Gemini CLI session", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile(patterns()...),
	Needles:  []string{`"toolCalls"`, `"function`},
	Resolve:  resolve,
}

// SessionJSON is a Gemini CLI .json session document (see the comment at the top of this file).
var SessionJSON = &jsonl.Profile{
	Kind: KindSessionJSON, Agent: ID, Title: "Gemini CLI session (.json)", Mode: jsonscan.Document,
	Patterns: jsonscan.MustCompile(patterns()...),
	Resolve:  resolve,
}

// member is one object's captured fields (a toolCalls element, a functionCall or a
// functionResponse), keyed by the offset of the object.
type member struct {
	fields [nFields]*jsonscan.Capture
}

func resolve(rec *jsonscan.Record, b *jsonl.Builder) {
	objs := map[int64]*member{}
	var order []int64
	for i := range rec.Captures {
		c := &rec.Captures[i]
		field := c.Pattern % nFields
		key := c.Starts[len(c.Path)-1] // the object holding the member
		m := objs[key]
		if m == nil {
			m = &member{}
			objs[key] = m
			order = append(order, key)
		}
		m.fields[field] = c
	}
	// Sites in file order: the objects are keyed by their offset.
	slices.Sort(order)
	for _, key := range order {
		m := objs[key]
		emit(b, m, fToolName, fToolID, store.SiteCall)
		emit(b, m, fResultName, fResultID, store.SiteResponse)
		emit(b, m, fCallName, fCallID, store.SiteCall)
		emit(b, m, fRespName, fRespID, store.SiteResponse)
		if d := m.fields[fToolDisplay]; d != nil {
			identity(b, d, jsonl.String(m.fields[fToolID]), jsonl.String(m.fields[fToolName]))
		}
	}
}

// emit adds the name site of field name of m (with the call id of field id), if captured.
func emit(b *jsonl.Builder, m *member, name, id int, kind store.SiteKind) {
	c := m.fields[name]
	if c == nil {
		return
	}
	if s, ok := b.Site(c, kind, ""); ok {
		s.CallID = jsonl.String(m.fields[id])
		b.Add(s)
	}
}

// identity records the raw identity a toolCalls element's displayName names; name is the
// element's name. A displayName equal to the name says nothing: Gemini CLI stores the call's
// own name there when the tool was not in its registry at the call (recordToolCalls, 0.10.0 to
// 0.61.0: "displayName: toolInstance?.displayName || toolCall.name"), so the call is neither
// attributed nor marked built-in.
func identity(b *jsonl.Builder, d *jsonscan.Capture, callID, name string) {
	v, ok := b.Value(d)
	if !ok {
		return
	}
	server, tool, ambiguous, ok := mcpname.ParseGeminiDisplayName(v.Str, nil)
	if !ok {
		if callID != "" && v.Str != name {
			meta(b).Builtin[callID] = true // a built-in tool ("ReadFile")
		}
		return
	}
	b.AddIdentity(store.Identity{Server: server, Tool: tool, CallID: callID, Loc: store.Loc{Line: d.Line, Offset: d.Offset}})
	if ambiguous && callID != "" {
		meta(b).Ambiguous[callID] = v.Str
	}
}

// inChats reports whether dir is a chats/ directory of a project directory, or a subagent
// directory below one: .../tmp/<project>/chats or .../tmp/<project>/chats/<parent>.
func inChats(dir string) bool {
	parts := strings.Split(strings.ReplaceAll(dir, `\`, "/"), "/")
	n := len(parts)
	return (n >= 3 && parts[n-1] == "chats" && parts[n-3] == "tmp") ||
		(n >= 4 && parts[n-2] == "chats" && parts[n-4] == "tmp")
}

// otherHome reports whether the path lies in a hidden home directory of another name than
// .gemini: a fork of Gemini CLI keeps files of the same names in its own home (~/.<fork>/tmp/…),
// and they are its own. A copied home ("dot-gemini/") is not hidden.
func otherHome(path string) bool {
	h := filepath.Base(HomeOf(path))
	return strings.HasPrefix(h, ".") && h != ".gemini" && h != "."
}

// looksLikeLine reports whether a .jsonl's first line is a Gemini CLI session's metadata line:
// it has "sessionId" and "projectHash" and no "uuid" (the records of a fork that keeps its sessions in chats/ too have one).
func looksLikeLine(first []byte) bool {
	return bytes.Contains(first, []byte(`"sessionId"`)) && bytes.Contains(first, []byte(`"projectHash"`)) &&
		!bytes.Contains(first, []byte(`"uuid"`))
}

// Detect takes a session-*.json or session-*.jsonl in a tmp/<project>/chats/ directory, or a
// .jsonl there (a subagent transcript in chats/<parent>/) whose first line is a Gemini CLI
// metadata line: sure verdicts (no other agent writes that layout); nothing in a hidden home of
// another name (otherHome).
func Detect(path string, firstLine []byte) (*jsonl.Profile, bool) {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	dir := path[:max(0, strings.LastIndexAny(path, `/\`))]
	if !inChats(dir) || otherHome(path) {
		return nil, false
	}
	switch {
	case strings.HasPrefix(base, "session-") && strings.HasSuffix(base, ".json"):
		return SessionJSON, true
	case strings.HasSuffix(base, ".jsonl") && (strings.HasPrefix(base, "session-") || looksLikeLine(firstLine)):
		return Session, true
	}
	return nil, false
}

// Force reads, under --agent gemini, every *.jsonl as a session (with a warning when its first
// line is no Gemini CLI metadata line, or when another agent's profile claims it) and a *.json
// whose name holds "session" as a .json session; other files are left out (another agent's
// store with a warning).
func Force(path string, first []byte, auto *jsonl.Profile) (*jsonl.Profile, string) {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	var p *jsonl.Profile
	switch {
	case strings.HasSuffix(base, ".jsonl"):
		p = Session
	case strings.HasSuffix(base, ".json") && strings.Contains(base, "session"):
		p = SessionJSON
	}
	switch {
	case p == nil && auto != nil:
		return nil, "looks like a " + auto.Title + ": not read with --agent gemini (drop --agent or pass --agent " + string(auto.Agent) + ")"
	case p == nil:
		return nil, ""
	case auto != nil && auto.Agent != ID:
		return p, "read as a Gemini CLI session (--agent gemini), but it looks like a " + auto.Title + ": its tool names are not where Gemini CLI keeps them; drop --agent or pass --agent " + string(auto.Agent)
	case p == Session && auto == nil && !looksLikeLine(first):
		return p, "read as a Gemini CLI session (--agent gemini), but its first line is no Gemini CLI metadata line"
	}
	return p, ""
}
