package claude

import (
	"regexp"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Claude Code sessions (issue 11; fixtures/claude-real/README.md "Where the names are in the
// files"): <config dir>/projects/<dir>/<session>.jsonl and <session>/subagents/agent-*.jsonl,
// one JSON object a line with a top-level "type" and, on message lines, the release's "version".
//
// Name sites are the places Claude Code 2.1.332 sends back to the provider when it resumes a
// session (measured with the real CLI against a logging stand-in: each stored name replaced by a
// distinct marker, then `claude -p … --resume`; see docs/claude.md "Sessions"):
//   - SiteCall: assistant message.content[i].name of a tool_use block (resent verbatim as the
//     history tool_use.name; CallID is the block id);
//   - ClaudeSiteReference: user message.content[i].content[j].tool_name of a tool_reference
//     block (a ToolSearch result; resent when the name is a tool of the current list, dropped
//     otherwise; CallID is the tool_use_id);
//   - ClaudeSiteSelect: assistant message.content[i].input.query of a ToolSearch tool_use, as
//     "select:<name>,<name>,…" (resent as the call's input); the site's Name is the whole query;
//   - ClaudeSiteDeferred: attachment.addedNames[i] of a deferred_tools_delta attachment (resent
//     inside the prompt's deferred-tool listing);
//   - ClaudeSiteText (ReadOnly): each mcp__ name inside free text — a refused call's
//     tool_result content and toolUseResult ("… requested permissions to use mcp__x, …"), user
//     string content (<tools-used-before-summary>), text blocks, a deferred_tools_delta's
//     rendered[].content. Reported, never rewritten.
//
// Not name sites, because 2.1.332 does not send them back (same measurement): tools-used
// tools[], toolUseResult.matches/query, deferred_tools_delta addedLines, deferred_tools_record
// entries, api-request-shape and api-request-blob copies. attributionMcpServer and
// attributionMcpTool (assistant lines of 2.1.x) are the raw server key and raw tool of the last
// MCP call: Identities, never rewritten. Subagent transcripts have the same layout.

// Kinds of Claude Code name sites (besides store.SiteCall).
const (
	ClaudeSiteReference store.SiteKind = "tool-reference"
	ClaudeSiteSelect    store.SiteKind = "tool-search"
	ClaudeSiteDeferred  store.SiteKind = "deferred-tools"
	ClaudeSiteText      store.SiteKind = "text"
)

// KindSession is a Claude Code session or subagent transcript.
const KindSession store.Kind = "claude-session"

// ClaudeMeta is what a Claude Code session says about itself, kept in its snapshot (store.SetState; ClaudeMetaOf reads it): the release
// that wrote each line (lines carry "version"; a resumed session holds lines of two releases)
// and the working directory of its first line that names one.
type ClaudeMeta struct {
	// Versions lists, in line order, each line from which a new "version" value holds (a line
	// without "version" keeps the previous one).
	Versions []ClaudeVersionFrom
	// Cwd is the first "cwd" of the file ("" when none).
	Cwd string
}

// ClaudeVersionFrom says that from Line on the lines were written by Version.
type ClaudeVersionFrom struct {
	Line    int64
	Version string
}

// VersionAt returns the release that wrote line (the last "version" at or before it, else
// the first one of the file; "" when the file names none).
func (m *ClaudeMeta) VersionAt(line int64) string {
	if m == nil || len(m.Versions) == 0 {
		return ""
	}
	i := sort.Search(len(m.Versions), func(i int) bool { return m.Versions[i].Line > line })
	if i == 0 {
		return m.Versions[0].Version
	}
	return m.Versions[i-1].Version
}

// ClaudeMetaOf returns the ClaudeMeta of a Claude Code session snapshot, or nil.
func ClaudeMetaOf(snap *store.Snapshot) *ClaudeMeta {
	return store.StateOf[ClaudeMeta](snap)
}

// Capture ids of the Claude profile's patterns.
const (
	clType = iota
	clVersion
	clCwd
	clBlockType
	clBlockName
	clBlockID
	clBlockQuery
	clInnerType
	clRefName
	clToolUseID
	clAttachType
	clAdded
	clAttrServer
	clAttrTool
	clTextFirst // free-text patterns from here on; the last is rendered[*].content
)

// clRendered is the capture id of a deferred_tools_delta's rendered[*].content.
const clRendered = clTextFirst + 5

var claudePatterns = []string{
	clType:       "type",
	clVersion:    "version",
	clCwd:        "cwd",
	clBlockType:  "message.content[*].type",
	clBlockName:  "message.content[*].name",
	clBlockID:    "message.content[*].id",
	clBlockQuery: "message.content[*].input.query",
	clInnerType:  "message.content[*].content[*].type",
	clRefName:    "message.content[*].content[*].tool_name",
	clToolUseID:  "message.content[*].tool_use_id",
	clAttachType: "attachment.type",
	clAdded:      "attachment.addedNames[*]",
	clAttrServer: "attributionMcpServer",
	clAttrTool:   "attributionMcpTool",
	// free text, from clTextFirst on
	"message.content",
	"message.content[*].text",
	"message.content[*].content",
	"message.content[*].content[*].text",
	"toolUseResult",
	"rendered[*].content",
}

// Session is a Claude Code session or subagent transcript (see the comment at the top of
// this file).
var Session = &jsonl.Profile{
	Kind: KindSession, Agent: ID, Title: "Claude Code session", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile(claudePatterns...),
	Resolve:  resolveClaude,
}

// claudeTextName finds mcp__ names inside free text: a name runs to the first white space or
// punctuation that no recorded name holds; a trailing "." (end of a sentence) is not part of it.
var claudeTextName = regexp.MustCompile("mcp__[^\\s,;'\"()<>\\[\\]{}`]+")

// ClaudeTextNames returns the mcp__ names inside a free text, in order ("Permission to use
// mcp__my_server__ping has been denied." → ["mcp__my_server__ping"]).
func ClaudeTextNames(text string) []string {
	if !strings.Contains(text, "mcp__") {
		return nil
	}
	var out []string
	for _, m := range claudeTextName.FindAllString(text, -1) {
		m = strings.TrimRight(m, ".:")
		if len(m) > len("mcp__") {
			out = append(out, m)
		}
	}
	return out
}

// claudeBlock gathers the captured members of one content block.
type claudeBlock struct {
	typ, name, id, query, toolUseID *jsonscan.Capture
	refs                            []*jsonscan.Capture
	innerType                       map[int]string // inner content index → type
	refAt                           []int
}

// claudeLine is one line's captures sorted out: the top-level members (the first capture of
// each pattern below clTextFirst), the content blocks by index and their order, the deferred
// tools' added names and the text captures.
type claudeLine struct {
	top          [clTextFirst]*jsonscan.Capture
	blocks       map[int]*claudeBlock
	order        []int
	added, texts []*jsonscan.Capture
}

// block is the content block c lies in (message.content[i]), made when first met.
func (l *claudeLine) block(c *jsonscan.Capture) *claudeBlock {
	i := c.Path[2].Index
	bl := l.blocks[i]
	if bl == nil {
		bl = &claudeBlock{innerType: map[int]string{}}
		l.blocks[i] = bl
		l.order = append(l.order, i)
	}
	return bl
}

// claudeLineOf sorts rec's captures out.
func claudeLineOf(rec *jsonscan.Record) claudeLine {
	l := claudeLine{blocks: map[int]*claudeBlock{}}
	for i := range rec.Captures {
		c := &rec.Captures[i]
		switch p := c.Pattern; {
		case p >= clTextFirst:
			l.texts = append(l.texts, c)
		case p == clBlockType:
			l.block(c).typ = c
		case p == clBlockName:
			l.block(c).name = c
		case p == clBlockID:
			l.block(c).id = c
		case p == clBlockQuery:
			l.block(c).query = c
		case p == clToolUseID:
			l.block(c).toolUseID = c
		case p == clInnerType:
			l.block(c).innerType[c.Path[4].Index] = jsonl.String(c)
		case p == clRefName:
			bl := l.block(c)
			bl.refs = append(bl.refs, c)
			bl.refAt = append(bl.refAt, c.Path[4].Index)
		case p == clAdded:
			l.added = append(l.added, c)
		default:
			if l.top[p] == nil {
				l.top[p] = c
			}
		}
	}
	return l
}

// resolveClaude is the sites of one Claude Code line, in its documented steps: the captures
// sorted out (claudeLineOf), the line's release and working directory (claudeMeta), nothing
// more for a line Claude Code does not send back; a deferred-tools attachment's added names,
// the content blocks' calls, ToolSearch selections and tool references (blockSites), the
// names in texts (textSites), the attribution identity (attribution).
func resolveClaude(rec *jsonscan.Record, b *jsonl.Builder) {
	l := claudeLineOf(rec)
	claudeMeta(rec, b, jsonl.String(l.top[clVersion]), jsonl.String(l.top[clCwd]))
	typ := jsonl.String(l.top[clType])
	switch typ {
	case "assistant", "user":
	case "attachment":
		if jsonl.String(l.top[clAttachType]) == "deferred_tools_delta" {
			for _, c := range l.added {
				if s, ok := b.Site(c, ClaudeSiteDeferred, ""); ok {
					b.Add(s)
				}
			}
		}
	default:
		return // api-request-blob copies, tools-used, summaries …: not sent back
	}
	l.blockSites(b, typ)
	l.textSites(b, typ)
	l.attribution(b)
}

// blockSites adds the content blocks' sites in block order: an assistant's tool_use name (a
// call, with its id) and a ToolSearch query naming MCP tools (a selection); a tool_result's
// tool_reference names.
func (l *claudeLine) blockSites(b *jsonl.Builder, typ string) {
	sort.Ints(l.order)
	for _, i := range l.order {
		bl := l.blocks[i]
		switch jsonl.String(bl.typ) {
		case "tool_use":
			if typ != "assistant" || bl.name == nil {
				continue
			}
			s, ok := b.Site(bl.name, store.SiteCall, "")
			if !ok {
				continue
			}
			s.CallID = jsonl.String(bl.id)
			b.Add(s)
			if s.Name == "ToolSearch" && bl.query != nil && !bl.query.TooLong {
				if q, ok := b.Site(bl.query, ClaudeSiteSelect, ""); ok && strings.Contains(q.Name, "mcp__") {
					q.CallID = s.CallID
					b.Add(q)
				}
			}
		case "tool_result":
			for k, c := range bl.refs {
				if bl.innerType[bl.refAt[k]] != "tool_reference" {
					continue
				}
				if s, ok := b.Site(c, ClaudeSiteReference, ""); ok {
					s.CallID = jsonl.String(bl.toolUseID)
					b.Add(s)
				}
			}
		}
	}
}

// textSites adds the MCP names in the line's texts as read-only text sites (an attachment's
// rendered text only; a text too long to read is passed over).
func (l *claudeLine) textSites(b *jsonl.Builder, typ string) {
	for _, c := range l.texts {
		if c.TooLong {
			continue // a huge tool output: not a place names are looked for
		}
		if typ == "attachment" && c.Pattern != clRendered {
			continue
		}
		v, err := c.Value()
		if err != nil {
			continue
		}
		for _, n := range ClaudeTextNames(v.Str) {
			b.Add(store.Site{Loc: store.Loc{Line: c.Line, Offset: c.Offset}, Kind: ClaudeSiteText, Path: c.Path.String(),
				Name: b.Intern(n), Raw: append([]byte(nil), c.Raw...), ReadOnly: true})
		}
	}
}

// attribution adds the line's attributionMcpServer/attributionMcpTool pair as an identity
// (both non-empty strings).
func (l *claudeLine) attribution(b *jsonl.Builder) {
	srv, tool := l.top[clAttrServer], l.top[clAttrTool]
	if srv == nil || tool == nil {
		return
	}
	sv, ok1 := b.Value(srv)
	tv, ok2 := b.Value(tool)
	if ok1 && ok2 && sv.Str != "" && tv.Str != "" {
		b.AddIdentity(store.Identity{Server: sv.Str, Tool: tv.Str, Loc: store.Loc{Line: tool.Line, Offset: tool.Offset}})
	}
}

// claudeMeta records the line's release and the file's first working directory.
func claudeMeta(rec *jsonscan.Record, b *jsonl.Builder, version, cwd string) {
	m := ClaudeMetaOf(b.Snapshot())
	if m == nil {
		m = &ClaudeMeta{}
		store.SetState(b.Snapshot(), m)
	}
	if version != "" && (len(m.Versions) == 0 || m.Versions[len(m.Versions)-1].Version != version) {
		m.Versions = append(m.Versions, ClaudeVersionFrom{Line: rec.Line, Version: version})
	}
	if m.Cwd == "" {
		m.Cwd = cwd
	}
}
