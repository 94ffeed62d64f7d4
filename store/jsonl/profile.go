package jsonl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Profile describes one file format: how records are delimited, which JSON paths to capture,
// and how captures become name sites.
type Profile struct {
	Kind  store.Kind
	Agent string // naming scheme of the agent that wrote it ("qwen", "codex")
	Mode  jsonscan.Mode
	pat   *jsonscan.Patterns
	// resolve turns the collected captures of one valid record into sites and identities.
	resolve func(rec *jsonscan.Record, b *builder)
	// capture and end are a streaming resolver, used instead of resolve when set: capture
	// sees each capture as the scanner finds it (valid only during the call) and may add
	// sites at once; end runs when a valid record ends. Sites added for a record that turns
	// out invalid are dropped. Memory then stays flat however many names a record holds.
	capture func(c *jsonscan.Capture, b *builder)
	end     func(rec *jsonscan.Record, b *builder)
	// needles are the literal prefilter of a Lines profile (jsonscan.Scanner.SetPrefilter):
	// every pattern has a plain literal key containing one of them.
	needles []string
}

// builder collects what a record yields.
type builder struct {
	snap *store.Snapshot
	// streaming state: the part being collected and other pending captures (copies in slots)
	part    partGroup
	partKey int64
	partOn  bool
	pending [4]*jsonscan.Capture
	// slots hold the copies of streamed captures, their Raw and Path buffers reused from one
	// part and record to the next: slot f for part field f, nPartFields+k for pending[k].
	slots [nPartFields + 4]jsonscan.Capture
	// strs interns names and paths, raws the raw tokens: a session repeats the same few names
	// and paths many times, so sites share one copy (no allocation per site).
	strs    map[string]string
	raws    map[string][]byte
	pathBuf []byte
}

// keep copies a streamed capture into slot i so it outlives the callback (valid until slot i
// is kept again: the next part's field, the next record's pending capture).
func (b *builder) keep(i int, c *jsonscan.Capture) *jsonscan.Capture {
	cc := &b.slots[i]
	raw, path := cc.Raw[:0], cc.Path[:0]
	*cc = *c
	cc.Raw = append(raw, c.Raw...)
	cc.Path = append(path, c.Path...)
	cc.Starts = nil
	return cc
}

// reset drops the streaming state (at the end of every record).
func (b *builder) reset() {
	b.part, b.partOn = partGroup{}, false
	b.pending = [4]*jsonscan.Capture{}
}

// maxInterned bounds each intern table (a file of only distinct names does not grow it).
const maxInterned = 1 << 16

// internBytes returns v as a string shared by every equal value of this file.
func (b *builder) internBytes(v []byte) string {
	if s, ok := b.strs[string(v)]; ok { // no allocation for the lookup
		return s
	}
	s := string(v)
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if len(b.strs) < maxInterned {
		b.strs[s] = s
	}
	return s
}

func (b *builder) intern(s string) string {
	if v, ok := b.strs[s]; ok {
		return v
	}
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if len(b.strs) < maxInterned {
		b.strs[s] = s
	}
	return s
}

// internRaw returns a copy of raw shared by every equal token of this file (read only).
func (b *builder) internRaw(raw []byte) []byte {
	if r, ok := b.raws[string(raw)]; ok {
		return r
	}
	r := append([]byte(nil), raw...)
	if b.raws == nil {
		b.raws = map[string][]byte{}
	}
	if len(b.raws) < maxInterned {
		b.raws[string(r)] = r
	}
	return r
}

// maxProblemsPerKind caps how many problems of one reason a file reports one by one.
const maxProblemsPerKind = 20

func (b *builder) value(c *jsonscan.Capture) (jsonscan.Value, bool) {
	v, err := c.Value()
	if err != nil {
		b.snap.Problems = append(b.snap.Problems, store.Problem{
			Loc: store.Loc{Line: c.Line, Offset: c.Offset}, Severity: store.SevError,
			Reason: fmt.Sprintf("name at %s cannot be handled: %v", c.Path, err)})
		return jsonscan.Value{}, false
	}
	return v, true
}

func (b *builder) site(c *jsonscan.Capture, kind store.SiteKind, field string) (store.Site, bool) {
	var name string
	var units []uint16
	if body := c.Raw; !c.TooLong && len(body) >= 2 && bytes.IndexByte(body, '\\') < 0 {
		name = b.internBytes(body[1 : len(body)-1]) // no escapes: the bytes are the name
	} else {
		v, ok := b.value(c)
		if !ok {
			return store.Site{}, false
		}
		name, units = b.intern(v.Str), v.Units
	}
	b.pathBuf = c.Path.AppendText(b.pathBuf[:0])
	s := store.Site{
		Loc:   store.Loc{Line: c.Line, Offset: c.Offset},
		Kind:  kind,
		Path:  b.internBytes(b.pathBuf),
		Name:  name,
		Units: units,
		Raw:   b.internRaw(c.Raw),
		Key:   c.Key,
		Field: field,
	}
	return s, true
}

func (b *builder) add(s store.Site) { b.snap.Sites = append(b.snap.Sites, s) }

// contentPrefixes are the Gemini Content[] containers of a Qwen record that hold
// functionCall/functionResponse parts, with the site kind their names get.
var qwenContents = []struct {
	prefix string
	kind   store.SiteKind
}{
	{"message", store.SiteCall}, // call/response/bridge decided per part
	{"systemPayload.compressedHistory[*]", store.SiteCompressed},
	{"systemPayload.history[*]", store.SiteBootstrap},
}

// Part fields captured under every "<content>.parts[*]".
const (
	fcName = iota
	fcID
	fcArgsName
	frName
	frID
	nPartFields
)

var partFieldPaths = [nPartFields]string{
	fcName:     "functionCall.name",
	fcID:       "functionCall.id",
	fcArgsName: "functionCall.args.name",
	frName:     "functionResponse.name",
	frID:       "functionResponse.id",
}

// contentPatterns returns the patterns for parts under each prefix, in prefix-major order.
func contentPatterns(prefixes []string) []string {
	var out []string
	for _, p := range prefixes {
		for _, f := range partFieldPaths {
			if p == "" {
				out = append(out, "[*].parts[*]."+f)
			} else {
				out = append(out, p+".parts[*]."+f)
			}
		}
	}
	return out
}

// partGroup gathers the captured fields of one part.
type partGroup struct {
	kind   store.SiteKind
	fields [nPartFields]*jsonscan.Capture
}

// partOf tells whether capture c is a part field (pattern ids base..base+len(kinds)*nPartFields)
// and returns its field, the part's kind and the part's identity: the offset of the object
// holding functionCall/functionResponse (the container of Path[len-2], Path[len-3] for
// functionCall.args.name).
func partOf(c *jsonscan.Capture, base int, kinds []store.SiteKind) (field int, kind store.SiteKind, key int64, ok bool) {
	id := c.Pattern - base
	if id < 0 || id >= len(kinds)*nPartFields {
		return 0, "", 0, false
	}
	field = id % nPartFields
	cut := len(c.Path) - 2
	if field == fcArgsName {
		cut = len(c.Path) - 3
	}
	return field, kinds[id/nPartFields], c.Starts[cut], true
}

// streamPart collects a streamed part capture; a capture of another part first emits the
// part collected so far (the scanner reports a part's members before the next part's).
func streamPart(c *jsonscan.Capture, b *builder, base int, kinds []store.SiteKind) bool {
	field, kind, key, ok := partOf(c, base, kinds)
	if !ok {
		return false
	}
	if b.partOn && b.partKey != key {
		emitPart(b, &b.part)
		b.part = partGroup{}
	}
	b.partOn, b.partKey, b.part.kind = true, key, kind
	b.part.fields[field] = b.keep(field, c)
	return true
}

// flushPart emits the part being streamed, if any.
func flushPart(b *builder) {
	if b.partOn {
		emitPart(b, &b.part)
	}
	b.part, b.partOn = partGroup{}, false
}

// emitPart turns one part's captures into call, response and bridge sites. A bridge site is
// functionCall.args.name of a call whose name is "tool_call" (Qwen Code 0.2x deferred MCP
// tools).
func emitPart(b *builder, g *partGroup) {
	callID := captureString(g.fields[fcID])
	if c := g.fields[fcName]; c != nil {
		kind, field := g.kind, ""
		if kind != store.SiteCall {
			field = "call"
		}
		if s, ok := b.site(c, kind, field); ok {
			s.CallID = callID
			b.add(s)
			if s.Name == "tool_call" && g.fields[fcArgsName] != nil {
				bk, bf := store.SiteBridge, ""
				if g.kind != store.SiteCall {
					bk, bf = g.kind, "bridge"
				}
				if bs, ok := b.site(g.fields[fcArgsName], bk, bf); ok {
					bs.CallID = callID
					b.add(bs)
				}
			}
		}
	}
	if c := g.fields[frName]; c != nil {
		kind, field := g.kind, ""
		if kind == store.SiteCall {
			kind = store.SiteResponse
		} else {
			field = "response"
		}
		if s, ok := b.site(c, kind, field); ok {
			s.CallID = captureString(g.fields[frID])
			b.add(s)
		}
	}
}

// captureString decodes an optional capture; "" when absent or undecodable.
func captureString(c *jsonscan.Capture) string {
	if c == nil {
		return ""
	}
	v, err := c.Value()
	if err != nil {
		return ""
	}
	return v.Str
}

// QwenSession is a Qwen Code chat session: <runtime>/projects/<id>/chats/<session>.jsonl
// (stores.md §1): call, response, bridge, telemetry, compressed and bootstrap sites. A
// chat_compression record holds a whole history on one line, so sites are found streaming.
var QwenSession = func() *Profile {
	prefixes := make([]string, len(qwenContents))
	kinds := make([]store.SiteKind, len(qwenContents))
	for i, c := range qwenContents {
		prefixes[i], kinds[i] = c.prefix, c.kind
	}
	pats := contentPatterns(prefixes)
	tel := len(pats)
	pats = append(pats, "systemPayload.uiEvent.function_name", "systemPayload.uiEvent.mcp_server_name", "systemPayload.uiEvent.call_id")
	return &Profile{
		Kind: store.KindQwenSession, Agent: "qwen", Mode: jsonscan.Lines,
		pat: jsonscan.MustCompile(pats...),
		// functionCall, functionResponse (every content pattern), uiEvent (telemetry).
		needles: []string{`"function`, `"uiEvent"`},
		capture: func(c *jsonscan.Capture, b *builder) {
			if !streamPart(c, b, 0, kinds) && c.Pattern >= tel && c.Pattern < tel+3 {
				b.pending[c.Pattern-tel] = b.keep(nPartFields+c.Pattern-tel, c)
			}
		},
		end: func(_ *jsonscan.Record, b *builder) {
			flushPart(b)
			if name := b.pending[0]; name != nil {
				if s, ok := b.site(name, store.SiteTelemetry, ""); ok {
					s.Server, s.CallID = captureString(b.pending[1]), captureString(b.pending[2])
					b.add(s)
				}
			}
		},
	}
}()

// QwenUsage is <runtime>/usage_record.jsonl: tool names are the keys of tools.byName, which
// must stay distinct within one record.
var QwenUsage = &Profile{
	Kind: store.KindQwenUsage, Agent: "qwen", Mode: jsonscan.Lines,
	pat:     jsonscan.MustCompile("tools.byName.{}"),
	needles: []string{`"byName"`},
	capture: func(c *jsonscan.Capture, b *builder) {
		if s, ok := b.site(c, store.SiteUsageKey, ""); ok {
			s.Scope = fmt.Sprintf("line %d tools.byName", c.Line)
			b.add(s)
		}
	},
	end: func(*jsonscan.Record, *builder) {},
}

// QwenCheckpoint is a "/chat save" file, tmp/<projectHash>/checkpoint-<tag>.json: a JSON array
// of Gemini Content.
var QwenCheckpoint = &Profile{
	Kind: store.KindQwenCheckpoint, Agent: "qwen", Mode: jsonscan.Document,
	pat: jsonscan.MustCompile(contentPatterns([]string{""})...),
	capture: func(c *jsonscan.Capture, b *builder) {
		streamPart(c, b, 0, []store.SiteKind{store.SiteCall})
	},
	end: func(_ *jsonscan.Record, b *builder) { flushPart(b) },
}

// QwenEditCheckpoint is a restorable edit checkpoint, tmp/<projectHash>/checkpoints/*.json:
// {history, clientHistory: Content[], toolCall: {name, args}, …}.
var QwenEditCheckpoint = func() *Profile {
	pats := contentPatterns([]string{"history[*]", "clientHistory[*]"})
	tc := len(pats)
	pats = append(pats, "toolCall.name")
	return &Profile{
		Kind: store.KindQwenEditCkpt, Agent: "qwen", Mode: jsonscan.Document,
		pat: jsonscan.MustCompile(pats...),
		capture: func(c *jsonscan.Capture, b *builder) {
			if streamPart(c, b, 0, []store.SiteKind{store.SiteCall, store.SiteCall}) || c.Pattern != tc {
				return
			}
			if s, ok := b.site(c, store.SiteCheckpoint, "toolCall"); ok {
				b.add(s)
			}
		},
		end: func(_ *jsonscan.Record, b *builder) { flushPart(b) },
	}
}()

// inChats reports whether dir is a Qwen Code chats/ directory or one below it (archive/).
// LooksLikeClaudeSession reports whether a *.jsonl outside a Qwen chats/ directory is a Claude
// Code session (~/.claude/projects/<dir>/<uuid>.jsonl, <uuid>/subagents/agent-*.jsonl): named
// like a Qwen session, but its first line is one only Claude Code writes — a message line with
// "isSidechain" whose message has content, not Gemini parts (newer Qwen Code records may have
// isSidechain too; qwen-reference.md §4), a "summary" with "leafUuid", a "queue-operation" or
// a "file-history-snapshot" (Claude Code 1.0.51 and 2.1.x; schemes.md §C). Its tool names are
// not where a Qwen session keeps them.
func LooksLikeClaudeSession(path string, firstLine []byte) bool {
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
		// Newer Qwen Code records may carry isSidechain too, but their message is Gemini
		// {role, parts}; Claude Code's is {role, content} and its lines have userType.
		return !bytes.Contains(line, []byte(`"parts":`)) &&
			(bytes.Contains(line, []byte(`"content":`)) || bytes.Contains(line, []byte(`"userType":`)))
	case bytes.HasPrefix(line, []byte(`{"type":"summary"`)) && bytes.Contains(line, []byte(`"leafUuid":`)):
		return true
	}
	return bytes.HasPrefix(line, []byte(`{"type":"queue-operation"`)) || bytes.HasPrefix(line, []byte(`{"type":"file-history-snapshot"`))
}

func inChats(dir string) bool {
	dir = strings.ReplaceAll(dir, `\`, "/")
	return strings.HasSuffix(dir, "/chats") || strings.Contains(dir+"/", "/chats/")
}

// Profiles lists every profile of this package, for discovery and by-kind lookup.
var Profiles = []*Profile{QwenSession, QwenUsage, QwenCheckpoint, QwenEditCheckpoint, CodexRollout, ClaudeSession}

// ProfileByKind returns the profile of a store kind, or nil.
func ProfileByKind(k store.Kind) *Profile {
	for _, p := range Profiles {
		if p.Kind == k {
			return p
		}
	}
	return nil
}

// Detect picks the profile of a file from its name and, for other *.jsonl files, its first
// line (a Codex rollout starts with a session_meta record; a Qwen Code record has "uuid",
// "sessionId" and "type"). It returns nil when the file is none of this package's formats.
func Detect(path string, firstLine []byte) *Profile {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	dir := path[:max(0, strings.LastIndexAny(path, `/\`))]
	switch {
	case base == "usage_record.jsonl":
		return QwenUsage
	case strings.HasPrefix(base, "checkpoint-") && strings.HasSuffix(base, ".json"):
		return QwenCheckpoint
	case strings.HasSuffix(dir, "checkpoints") && strings.HasSuffix(base, ".json"):
		return QwenEditCheckpoint
	case strings.HasSuffix(base, ".jsonl"):
		if SessionFileName.MatchString(base) || inChats(dir) {
			return QwenSession
		}
		if IsCodexRolloutName(base) || LooksLikeCodexRollout(firstLine) {
			return CodexRollout
		}
		line := string(firstLine)
		if strings.Contains(line, `"sessionId"`) && strings.Contains(line, `"uuid"`) && strings.Contains(line, `"type"`) {
			return QwenSession
		}
	}
	return nil
}
