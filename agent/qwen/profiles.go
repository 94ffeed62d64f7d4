package qwen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// contents are the GenAI Content[] containers of a Qwen record that hold
// functionCall/functionResponse parts, with the site kind their names get.
var contents = []struct {
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

// stream is the streaming state of one scan of a Qwen file: the part being collected and the
// other pending captures of the record (kept in slots).
type stream struct {
	part    partGroup
	partKey int64
	partOn  bool
	pending [3]*jsonscan.Capture
	// slots keep the streamed captures until the record ends (copies of those that are not
	// Stable, in buffers reused from one part and record to the next): slot f for part field
	// f, nPartFields+k for pending[k].
	slots   [nPartFields + 3]jsonl.Slot
	capture func(st *stream, c *jsonscan.Capture, b *jsonl.Builder)
	end     func(st *stream, b *jsonl.Builder)
}

func (st *stream) Capture(c *jsonscan.Capture, b *jsonl.Builder) { st.capture(st, c, b) }
func (st *stream) End(_ *jsonscan.Record, b *jsonl.Builder)      { st.end(st, b) }

// Reset drops the streaming state (at the end of every record).
func (st *stream) Reset() {
	st.part, st.partOn = partGroup{}, false
	st.pending = [3]*jsonscan.Capture{}
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
func (st *stream) streamPart(c *jsonscan.Capture, b *jsonl.Builder, base int, kinds []store.SiteKind) bool {
	field, kind, key, ok := partOf(c, base, kinds)
	if !ok {
		return false
	}
	if st.partOn && st.partKey != key {
		emitPart(b, &st.part)
		st.part = partGroup{}
	}
	st.partOn, st.partKey, st.part.kind = true, key, kind
	st.part.fields[field] = st.slots[field].Keep(c)
	return true
}

// flushPart emits the part being streamed, if any.
func (st *stream) flushPart(b *jsonl.Builder) {
	if st.partOn {
		emitPart(b, &st.part)
	}
	st.part, st.partOn = partGroup{}, false
}

// emitPart turns one part's captures into call, response and bridge sites. A bridge site is
// functionCall.args.name of a call whose name is "tool_call" (Qwen Code 0.2x deferred MCP
// tools).
func emitPart(b *jsonl.Builder, g *partGroup) {
	callID := b.Text(g.fields[fcID])
	if c := g.fields[fcName]; c != nil {
		kind, field := g.kind, ""
		if kind != store.SiteCall {
			field = "call"
		}
		if s := b.AddSite(c, kind, field); s != nil {
			s.CallID = callID
			if s.Name == "tool_call" && g.fields[fcArgsName] != nil { // (s is valid until the next site)
				bk, bf := store.SiteBridge, ""
				if g.kind != store.SiteCall {
					bk, bf = g.kind, "bridge"
				}
				if bs := b.AddSite(g.fields[fcArgsName], bk, bf); bs != nil {
					bs.CallID = callID
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
		if s := b.AddSite(c, kind, field); s != nil {
			s.CallID = b.Text(g.fields[frID])
		}
	}
}

// Kinds of Qwen Code's stores (run manifests and reports name them).
const (
	KindSession        store.Kind = "qwen-session"    // <runtime>/projects/<id>/chats/<session>.jsonl
	KindUsage          store.Kind = "qwen-usage"      // <runtime>/usage_record.jsonl (names are object keys)
	KindCheckpoint     store.Kind = "qwen-checkpoint" // /chat save: tmp/<hash>/checkpoint-<tag>.json
	KindEditCheckpoint store.Kind = "qwen-edit-checkpoint"
)

// Session is a Qwen Code chat session: <runtime>/projects/<id>/chats/<session>.jsonl
// (stores.md §1): call, response, bridge, telemetry, compressed and bootstrap sites. A
// chat_compression record holds a whole history on one line, so sites are found streaming.
var Session = func() *jsonl.Profile {
	prefixes := make([]string, len(contents))
	kinds := make([]store.SiteKind, len(contents))
	for i, c := range contents {
		prefixes[i], kinds[i] = c.prefix, c.kind
	}
	pats := contentPatterns(prefixes)
	tel := len(pats)
	pats = append(pats, "systemPayload.uiEvent.function_name", "systemPayload.uiEvent.mcp_server_name", "systemPayload.uiEvent.call_id")
	return &jsonl.Profile{
		Kind: KindSession, Agent: ID, Title: "Qwen Code session", Mode: jsonscan.Lines,
		Patterns: jsonscan.MustCompile(pats...),
		// functionCall, functionResponse (every content pattern), uiEvent (telemetry).
		Needles: []string{`"function`, `"uiEvent"`},
		// Names are planned by normalizeMcp alone: a session is read in batches.
		Batched: true,
		Stream: func() jsonl.Streamer {
			return &stream{
				capture: func(st *stream, c *jsonscan.Capture, b *jsonl.Builder) {
					if !st.streamPart(c, b, 0, kinds) && c.Pattern >= tel && c.Pattern < tel+3 {
						st.pending[c.Pattern-tel] = st.slots[nPartFields+c.Pattern-tel].Keep(c)
					}
				},
				end: func(st *stream, b *jsonl.Builder) {
					st.flushPart(b)
					if name := st.pending[0]; name != nil {
						if s := b.AddSite(name, store.SiteTelemetry, ""); s != nil {
							s.Server, s.CallID = b.Text(st.pending[1]), b.Text(st.pending[2])
						}
					}
				},
			}
		},
	}
}()

// Usage is <runtime>/usage_record.jsonl: tool names are the keys of tools.byName, which must
// stay distinct within one record.
var Usage = &jsonl.Profile{
	Kind: KindUsage, Agent: ID, Title: "Qwen Code usage record", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile("tools.byName.{}"),
	Needles:  []string{`"byName"`},
	Batched:  true, // a key's scope is its own record
	Stream: func() jsonl.Streamer {
		return &stream{
			capture: func(_ *stream, c *jsonscan.Capture, b *jsonl.Builder) {
				if s, ok := b.Site(c, store.SiteUsageKey, ""); ok {
					s.Scope = fmt.Sprintf("line %d tools.byName", c.Line)
					b.Add(s)
				}
			},
			end: func(*stream, *jsonl.Builder) {},
		}
	},
}

// Checkpoint is a "/chat save" file, tmp/<projectHash>/checkpoint-<tag>.json: a JSON array of
// GenAI Content.
var Checkpoint = &jsonl.Profile{
	Kind: KindCheckpoint, Agent: ID, Title: "Qwen Code checkpoint", Mode: jsonscan.Document,
	Patterns: jsonscan.MustCompile(contentPatterns([]string{""})...),
	Stream: func() jsonl.Streamer {
		return &stream{
			capture: func(st *stream, c *jsonscan.Capture, b *jsonl.Builder) {
				st.streamPart(c, b, 0, []store.SiteKind{store.SiteCall})
			},
			end: func(st *stream, b *jsonl.Builder) { st.flushPart(b) },
		}
	},
}

// EditCheckpoint is a restorable edit checkpoint, tmp/<projectHash>/checkpoints/*.json:
// {history, clientHistory: Content[], toolCall: {name, args}, …}.
var EditCheckpoint = func() *jsonl.Profile {
	pats := contentPatterns([]string{"history[*]", "clientHistory[*]"})
	tc := len(pats)
	pats = append(pats, "toolCall.name")
	return &jsonl.Profile{
		Kind: KindEditCheckpoint, Agent: ID, Title: "Qwen Code edit checkpoint", Mode: jsonscan.Document,
		Patterns: jsonscan.MustCompile(pats...),
		Stream: func() jsonl.Streamer {
			return &stream{
				capture: func(st *stream, c *jsonscan.Capture, b *jsonl.Builder) {
					if st.streamPart(c, b, 0, []store.SiteKind{store.SiteCall, store.SiteCall}) || c.Pattern != tc {
						return
					}
					if s, ok := b.Site(c, store.SiteCheckpoint, "toolCall"); ok {
						b.Add(s)
					}
				},
				end: func(st *stream, b *jsonl.Builder) { st.flushPart(b) },
			}
		},
	}
}()

// SessionFileName is the name Qwen Code gives session files (qwen-reference.md §4.1).
var SessionFileName = regexp.MustCompile(`^[0-9a-fA-F-]{32,36}\.jsonl$`)

// InChats reports whether dir is a Qwen Code chats/ directory or one below it (archive/).
func InChats(dir string) bool {
	dir = strings.ReplaceAll(dir, `\`, "/")
	return strings.HasSuffix(dir, "/chats") || strings.Contains(dir+"/", "/chats/")
}

// Detect picks Qwen Code's profile of a file from its name and, for other *.jsonl files, its
// first line (a Qwen Code record has "uuid", "sessionId" and "type"). A verdict by a name or
// directory only Qwen Code uses is sure; a session file name outside chats/ (another agent names
// its sessions <uuid>.jsonl too) and a verdict by content are guesses (agent/all prefers
// another agent's sure verdict).
func Detect(path string, firstLine []byte) (p *jsonl.Profile, sure bool) {
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	dir := path[:max(0, strings.LastIndexAny(path, `/\`))]
	switch {
	case base == "usage_record.jsonl":
		return Usage, true
	case strings.HasPrefix(base, "checkpoint-") && strings.HasSuffix(base, ".json"):
		return Checkpoint, true
	case strings.HasSuffix(dir, "checkpoints") && strings.HasSuffix(base, ".json"):
		return EditCheckpoint, true
	case strings.HasSuffix(base, ".jsonl"):
		if InChats(dir) {
			return Session, true
		}
		if SessionFileName.MatchString(base) {
			return Session, false // another agent names its sessions <uuid>.jsonl too
		}
		line := string(firstLine)
		if strings.Contains(line, `"sessionId"`) && strings.Contains(line, `"uuid"`) && strings.Contains(line, `"type"`) {
			return Session, false
		}
	}
	return nil, false
}
