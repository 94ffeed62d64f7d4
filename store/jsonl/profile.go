package jsonl

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/jsonscan"
)

// Profile describes one file format: how records are delimited, which JSON paths to capture,
// and how captures become name sites.
type Profile struct {
	Kind  store.Kind
	Agent string // naming scheme of the agent that wrote it ("qwen", "codex")
	Mode  jsonscan.Mode
	pat   *jsonscan.Patterns
	// resolve turns the captures of one valid record into sites and identities.
	resolve func(rec *jsonscan.Record, b *builder)
}

// builder collects what a record yields.
type builder struct {
	snap *store.Snapshot
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
	v, ok := b.value(c)
	if !ok {
		return store.Site{}, false
	}
	s := store.Site{
		Loc:   store.Loc{Line: c.Line, Offset: c.Offset},
		Kind:  kind,
		Path:  c.Path.String(),
		Name:  v.Str,
		Units: v.Units,
		Raw:   c.Raw,
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

// resolveParts turns part captures (pattern ids base..base+len(kinds)*nPartFields) into call,
// response and bridge sites. A bridge site is functionCall.args.name of a call whose name is
// "tool_call" (Qwen Code 0.2x deferred MCP tools).
func resolveParts(rec *jsonscan.Record, b *builder, base int, kinds []store.SiteKind) {
	groups := map[int64]*partGroup{}
	var order []int64
	for i := range rec.Captures {
		c := &rec.Captures[i]
		id := c.Pattern - base
		if id < 0 || id >= len(kinds)*nPartFields {
			continue
		}
		field := id % nPartFields
		// The part is the object holding functionCall/functionResponse: the container of
		// Path[len-2] (Path[len-3] for functionCall.args.name), identified by its offset.
		cut := len(c.Path) - 2
		if field == fcArgsName {
			cut = len(c.Path) - 3
		}
		key := c.Starts[cut]
		g := groups[key]
		if g == nil {
			g = &partGroup{kind: kinds[id/nPartFields]}
			groups[key] = g
			order = append(order, key)
		}
		g.fields[field] = c
	}
	for _, key := range order {
		g := groups[key]
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
// (stores.md §1): call, response, bridge, telemetry, compressed and bootstrap sites.
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
		resolve: func(rec *jsonscan.Record, b *builder) {
			resolveParts(rec, b, 0, kinds)
			var name *jsonscan.Capture
			var server, callID string
			for i := range rec.Captures {
				c := &rec.Captures[i]
				switch c.Pattern {
				case tel:
					name = c
				case tel + 1:
					server = captureString(c)
				case tel + 2:
					callID = captureString(c)
				}
			}
			if name != nil {
				if s, ok := b.site(name, store.SiteTelemetry, ""); ok {
					s.Server, s.CallID = server, callID
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
	pat: jsonscan.MustCompile("tools.byName.{}"),
	resolve: func(rec *jsonscan.Record, b *builder) {
		for i := range rec.Captures {
			c := &rec.Captures[i]
			if s, ok := b.site(c, store.SiteUsageKey, ""); ok {
				s.Scope = fmt.Sprintf("line %d tools.byName", rec.Line)
				b.add(s)
			}
		}
	},
}

// QwenCheckpoint is a "/chat save" file, tmp/<projectHash>/checkpoint-<tag>.json: a JSON array
// of Gemini Content.
var QwenCheckpoint = &Profile{
	Kind: store.KindQwenCheckpoint, Agent: "qwen", Mode: jsonscan.Document,
	pat: jsonscan.MustCompile(contentPatterns([]string{""})...),
	resolve: func(rec *jsonscan.Record, b *builder) {
		resolveParts(rec, b, 0, []store.SiteKind{store.SiteCall})
	},
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
		resolve: func(rec *jsonscan.Record, b *builder) {
			resolveParts(rec, b, 0, []store.SiteKind{store.SiteCall, store.SiteCall})
			for i := range rec.Captures {
				if c := &rec.Captures[i]; c.Pattern == tc {
					if s, ok := b.site(c, store.SiteCheckpoint, "toolCall"); ok {
						b.add(s)
					}
				}
			}
		},
	}
}()

// Profiles lists every profile of this package, for discovery and by-kind lookup.
var Profiles = []*Profile{QwenSession, QwenUsage, QwenCheckpoint, QwenEditCheckpoint, CodexRollout}

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
		if SessionFileName.MatchString(base) {
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
