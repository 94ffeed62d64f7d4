package cline

import (
	"bytes"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/store"
)

// Kinds of Cline's stores (run manifests and reports name them).
const (
	// KindTask is a Cline 2.x task's api_conversation_history.json.
	KindTask store.Kind = "cline-task"
	// KindSession is a Cline 3.x session's <id>.messages.json.
	KindSession store.Kind = "cline-session"
)

// Patterns of a 2.x task (a root array of {role, content: [block]}): a block's type, name and
// id; a text block's text (only its head is looked at: "[use_mcp_tool for '<server>'] Result:").
const (
	tType = iota
	tName
	tID
	tText
)

// Task is a Cline 2.x task history (see the package comment): every tool_use block's name is
// a call site (CallID: the block's id; Server: the server of the matching result text, when
// one is found). A block whose content is a string holds no name.
var Task = &jsonl.Profile{
	Kind: KindTask, Agent: ID, Title: "Cline 2.x task", Mode: jsonscan.Document,
	Patterns: jsonscan.MustCompile("[*].content[*].type", "[*].content[*].name", "[*].content[*].id", "[*].content[*].text"),
	Stream:   func() jsonl.Streamer { return &taskStream{} },
}

// resultHead opens the text of an MCP result in a 2.x history (UseMcpToolHandler's
// formatResponse.toolResult with the tool description "[use_mcp_tool for '<server>']").
const resultHead = "[use_mcp_tool for '"

// block is one content block of a 2.x task seen so far.
type block struct {
	msg, idx int
	typ, id  string
	site     *store.Site // its name site, nil when it has no name
	server   string      // a result text's server ("" when the block is none)
}

// taskStream collects a 2.x task's blocks (names and result heads only) and, at the end of
// the document, adds the tool_use sites with their servers.
type taskStream struct {
	blocks []*block
	at     map[[2]int]*block
}

func (s *taskStream) blockOf(c *jsonscan.Capture) *block {
	// Path: [msg] content [idx] field.
	if len(c.Path) < 4 || c.Path[0].Index < 0 || c.Path[2].Index < 0 {
		return nil
	}
	k := [2]int{c.Path[0].Index, c.Path[2].Index}
	if s.at == nil {
		s.at = map[[2]int]*block{}
	}
	b := s.at[k]
	if b == nil {
		b = &block{msg: k[0], idx: k[1]}
		s.at[k] = b
		s.blocks = append(s.blocks, b)
	}
	return b
}

func (s *taskStream) Capture(c *jsonscan.Capture, b *jsonl.Builder) {
	bl := s.blockOf(c)
	if bl == nil {
		return
	}
	switch c.Pattern {
	case tType:
		bl.typ = jsonl.String(c)
	case tName:
		if site, ok := b.Site(c, store.SiteCall, ""); ok {
			bl.site = &site
		}
	case tID:
		bl.id = jsonl.String(c)
	case tText:
		if c.TooLong || !bytes.HasPrefix(c.Raw, []byte(`"`+resultHead)) {
			return
		}
		bl.server = resultServer(c)
	}
}

// resultServer is the server key of an MCP result text ("" when it cannot be read).
func resultServer(c *jsonscan.Capture) string {
	v, err := c.Value()
	if err != nil {
		return ""
	}
	rest := strings.TrimPrefix(v.Str, resultHead)
	i := strings.Index(rest, "'] Result:")
	if i < 0 {
		return ""
	}
	return rest[:i]
}

func (s *taskStream) End(_ *jsonscan.Record, b *jsonl.Builder) {
	slices.SortFunc(s.blocks, func(x, y *block) int {
		if x.msg != y.msg {
			return x.msg - y.msg
		}
		return x.idx - y.idx
	})
	// The calls of each assistant message and the result texts of the next message, in order.
	calls := map[int][]*block{}
	results := map[int][]string{}
	for _, bl := range s.blocks {
		if bl.site != nil {
			bl.site.CallID = b.Intern(bl.id)
		}
		if bl.site != nil && bl.typ == "tool_use" {
			if _, _, ok := mcpname.Cline2Split(bl.site.Name); ok {
				calls[bl.msg] = append(calls[bl.msg], bl)
			}
		}
		if bl.server != "" {
			results[bl.msg] = append(results[bl.msg], bl.server)
		}
	}
	// A uid names one server for the whole task run (drawn at each hub start): the pairs
	// found where a message's calls and the next message's results match in number.
	uidServer := map[string]string{}
	conflict := map[string]bool{}
	for msg, cs := range calls {
		rs := results[msg+1]
		if len(rs) != len(cs) {
			continue
		}
		for i, bl := range cs {
			uid, _, _ := mcpname.Cline2Split(bl.site.Name)
			if prev, ok := uidServer[uid]; ok && prev != rs[i] {
				conflict[uid] = true
			}
			uidServer[uid] = rs[i]
		}
	}
	for _, bl := range s.blocks {
		if bl.site == nil || bl.typ != "tool_use" {
			continue
		}
		if uid, _, ok := mcpname.Cline2Split(bl.site.Name); ok && !conflict[uid] {
			bl.site.Server = b.Intern(uidServer[uid])
		}
		b.Add(*bl.site)
	}
}

func (s *taskStream) Reset() { s.blocks, s.at = nil, nil }

// Patterns of a 3.x session's content blocks.
const (
	sType = iota
	sName
	sID
	sUseID
	nSession
)

// Session is a Cline 3.x session's messages file: the name of every tool_use block (a call,
// CallID its id) and tool_result block (a response, CallID its tool_use_id).
var Session = &jsonl.Profile{
	Kind: KindSession, Agent: ID, Title: "Cline 3.x session", Mode: jsonscan.Document,
	Patterns: jsonscan.MustCompile("messages[*].content[*].type", "messages[*].content[*].name",
		"messages[*].content[*].id", "messages[*].content[*].tool_use_id"),
	Resolve: resolveSession,
}

func resolveSession(rec *jsonscan.Record, b *jsonl.Builder) {
	type obj struct{ f [nSession]*jsonscan.Capture }
	objs := map[int64]*obj{}
	var order []int64
	for i := range rec.Captures {
		c := &rec.Captures[i]
		key := c.Starts[len(c.Path)-1]
		o := objs[key]
		if o == nil {
			o = &obj{}
			objs[key] = o
			order = append(order, key)
		}
		o.f[c.Pattern] = c
	}
	slices.Sort(order)
	for _, k := range order {
		o := objs[k]
		if o.f[sName] == nil {
			continue
		}
		var kind store.SiteKind
		var id *jsonscan.Capture
		switch jsonl.String(o.f[sType]) {
		case "tool_use":
			kind, id = store.SiteCall, o.f[sID]
		case "tool_result":
			kind, id = store.SiteResponse, o.f[sUseID]
		default:
			continue
		}
		if s, ok := b.Site(o.f[sName], kind, ""); ok {
			s.CallID = jsonl.String(id)
			b.Add(s)
		}
	}
}
