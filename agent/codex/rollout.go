package codex

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/sessionfix/sessionfix/engine/jsonl"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Codex CLI rollouts (schemes.md §A.6): $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local
// time>-<thread uuid>.jsonl and archived_sessions/. One JSON object a line, {"timestamp",
// "type", "payload"}, the first a session_meta. Name sites are the "name" (and, from era E4b
// on, "namespace") of every function_call Responses item: response_item payloads and the items
// of a compacted record's replacement_history. Raw identities come from event_msg records:
// mcp_tool_call_begin/_end {call_id, invocation: {server, tool}} and, in later builds,
// item_started/item_completed {item: {type: "McpToolCall", id: <call id>, server, tool}}. Those
// are never name sites and never rewritten.

// FieldName and FieldNamespace are the Site.Field values of the two members of a function_call
// that together make its model-visible name (Site.Group ties them).
const (
	FieldName      = "name"
	FieldNamespace = "namespace"
)

// Meta is what a rollout says about itself, from its first session_meta record. The rollout
// profile keeps it in the snapshot (store.SetState; MetaOf reads it; nil when the file has no session_meta).
type Meta struct {
	// ThreadID is session_meta.payload.id (the thread uuid, also in the file name).
	ThreadID string
	// CLIVersion is session_meta.payload.cli_version ("0.50.0"), which bounds the naming era.
	CLIVersion string
	// Line is the line of that session_meta record.
	Line int64
}

// MetaOf returns the Meta of a rollout snapshot, or nil.
func MetaOf(snap *store.Snapshot) *Meta {
	return store.StateOf[Meta](snap)
}

// codexRolloutName matches the file names Codex gives rollouts (plain or zstd-compressed).
var codexRolloutName = regexp.MustCompile(`^rollout-.*\.jsonl(\.zst)?$`)

// IsRolloutName reports whether a file's base name is a Codex rollout name,
// "rollout-<…>.jsonl" or "rollout-<…>.jsonl.zst".
func IsRolloutName(base string) bool { return codexRolloutName.MatchString(base) }

// codexSessionMeta matches a top-level "type" member with value "session_meta", whatever the
// spacing.
var codexSessionMeta = regexp.MustCompile(`"type"\s*:\s*"session_meta"`)

// LooksLikeRollout reports whether the first line of a *.jsonl file (or its first bytes:
// a session_meta line can be tens of KiB) is a Codex session_meta record. Codex writes the
// record's own members ("timestamp", 0.169.0's "ordinal", "type") before its "payload", so only
// the bytes before the first "payload" key are looked at: text inside a payload never counts.
func LooksLikeRollout(firstLine []byte) bool {
	head := firstLine
	if i := bytes.Index(head, []byte(`"payload"`)); i >= 0 {
		head = head[:i]
	}
	return bytes.HasPrefix(bytes.TrimLeft(head, " \t\r"), []byte("{")) && codexSessionMeta.Match(head)
}

// IsCompanion reports whether a base name is one of the other JSONL files of a Codex home
// (prompt history, the thread name index), which hold no tool names and are never rollouts.
func IsCompanion(base string) bool {
	return base == "history.jsonl" || base == "session_index.jsonl"
}

// Capture ids of the Codex profile's patterns.
const (
	cxType = iota
	cxPayloadType
	cxName
	cxNamespace
	cxCallID
	cxHistType
	cxHistName
	cxHistNamespace
	cxHistCallID
	cxInvServer
	cxInvTool
	cxItemType
	cxItemID
	cxItemServer
	cxItemTool
	cxCLIVersion
	cxMetaID
	cxBareName
	cxBareNamespace
	cxBareCallID
	nCodexPatterns
)

var codexPatterns = [nCodexPatterns]string{
	cxType:          "type",
	cxPayloadType:   "payload.type",
	cxName:          "payload.name",
	cxNamespace:     "payload.namespace",
	cxCallID:        "payload.call_id",
	cxHistType:      "payload.replacement_history[*].type",
	cxHistName:      "payload.replacement_history[*].name",
	cxHistNamespace: "payload.replacement_history[*].namespace",
	cxHistCallID:    "payload.replacement_history[*].call_id",
	cxInvServer:     "payload.invocation.server",
	cxInvTool:       "payload.invocation.tool",
	cxItemType:      "payload.item.type",
	cxItemID:        "payload.item.id",
	cxItemServer:    "payload.item.server",
	cxItemTool:      "payload.item.tool",
	cxCLIVersion:    "payload.cli_version",
	cxMetaID:        "payload.id",
	cxBareName:      "name",
	cxBareNamespace: "namespace",
	cxBareCallID:    "call_id",
}

// codexCall gathers the captured members of one function_call object.
type codexCall struct {
	typ, name, namespace, callID *jsonscan.Capture
}

// KindRollout is the store kind of a rollout.
const KindRollout store.Kind = "codex-rollout"

// Rollout is a Codex CLI rollout (see the comment at the top of this file). Sites: Kind
// SiteCall for response_item function_calls (Path "payload.name" / "payload.namespace") and
// SiteCompressed for the function_calls of a compacted replacement_history; Field "name" or
// "namespace", Group shared by the two members of one call, CallID its call_id. A call without
// a "namespace" member gets an absent namespace site (store.Site.Absent; see NamespaceSite),
// where a rewrite inserts the member. Records written before the {type, payload} envelope
// (bare Responses items, mid-2025 builds) are read the same way. Identities: one per raw
// invocation record, keyed by call id.
var Rollout = &jsonl.Profile{
	Kind: KindRollout, Agent: ID, Title: "Codex rollout", Mode: jsonscan.Lines,
	Patterns: jsonscan.MustCompile(codexPatterns[:]...),
	Resolve:  resolveRollout,
}

func resolveRollout(rec *jsonscan.Record, b *jsonl.Builder) {
	var c [nCodexPatterns]*jsonscan.Capture
	hist := map[string]*codexCall{}
	var histOrder []string
	for i := range rec.Captures {
		cp := &rec.Captures[i]
		switch cp.Pattern {
		case cxHistType, cxHistName, cxHistNamespace, cxHistCallID:
			key := cp.Path.Prefix(len(cp.Path) - 1).String()
			hc := hist[key]
			if hc == nil {
				hc = &codexCall{}
				hist[key] = hc
				histOrder = append(histOrder, key)
			}
			switch cp.Pattern {
			case cxHistType:
				hc.typ = cp
			case cxHistName:
				hc.name = cp
			case cxHistNamespace:
				hc.namespace = cp
			default:
				hc.callID = cp
			}
		default:
			if c[cp.Pattern] == nil {
				c[cp.Pattern] = cp
			}
		}
	}
	recType, payloadType := jsonl.String(c[cxType]), jsonl.String(c[cxPayloadType])
	switch recType {
	case "session_meta":
		if snap := b.Snapshot(); MetaOf(snap) == nil {
			store.SetState(snap, &Meta{ThreadID: jsonl.String(c[cxMetaID]), CLIVersion: jsonl.String(c[cxCLIVersion]), Line: rec.Line})
		}
	case "response_item":
		if payloadType == "function_call" {
			codexCallSites(b, store.SiteCall, codexCall{name: c[cxName], namespace: c[cxNamespace], callID: c[cxCallID]})
		}
	case "compacted":
		for _, key := range histOrder {
			if hc := hist[key]; jsonl.String(hc.typ) == "function_call" {
				codexCallSites(b, store.SiteCompressed, *hc)
			}
		}
	case "event_msg":
		switch payloadType {
		case "mcp_tool_call_begin", "mcp_tool_call_end":
			codexIdentity(b, jsonl.String(c[cxCallID]), c[cxInvServer], c[cxInvTool])
		case "item_started", "item_completed":
			if jsonl.String(c[cxItemType]) == "McpToolCall" {
				codexIdentity(b, jsonl.String(c[cxItemID]), c[cxItemServer], c[cxItemTool])
			}
		}
	case "function_call":
		// A bare Responses item, written before the {type, payload} envelope.
		codexCallSites(b, store.SiteCall, codexCall{name: c[cxBareName], namespace: c[cxBareNamespace], callID: c[cxBareCallID]})
	}
}

// codexCallSites adds the name (and namespace, when present) sites of one function_call.
func codexCallSites(b *jsonl.Builder, kind store.SiteKind, call codexCall) {
	if call.name == nil {
		return
	}
	callID := jsonl.String(call.callID)
	group := fmt.Sprintf("%d:%s", call.name.Line, call.name.Path.Prefix(len(call.name.Path)-1))
	name, ok := b.Site(call.name, kind, FieldName)
	if !ok {
		return
	}
	name.CallID, name.Group = callID, group
	b.Add(name)
	if call.namespace == nil {
		b.Add(NamespaceSite(name))
		return
	}
	if ns, ok := b.Site(call.namespace, kind, FieldNamespace); ok {
		ns.CallID, ns.Group = callID, group
		b.Add(ns)
	}
}

// codexIdentity records one raw identity (never a name site).
func codexIdentity(b *jsonl.Builder, callID string, server, tool *jsonscan.Capture) {
	if server == nil || tool == nil {
		return
	}
	sv, ok1 := b.Value(server)
	tv, ok2 := b.Value(tool)
	if !ok1 || !ok2 {
		return
	}
	b.AddIdentity(store.Identity{Server: sv.Str, Tool: tv.Str, CallID: callID,
		Loc: store.Loc{Line: tool.Line, Offset: tool.Offset}})
}

// NamespaceSite returns the site where a function_call that has no "namespace" member gets
// one: an absent member (Raw nil, Name ""; store.Site.Absent) right after the call's name
// token, in the same Group. An Edit there inserts `,"namespace":<new>`, so the object reads
// {…"name":"<new name>","namespace":"<new namespace>"…}, the member order Codex itself writes.
// The rollout profile emits it at scan time for every such call; name must be a name site of a
// rollout snapshot.
func NamespaceSite(name store.Site) store.Site {
	path := FieldNamespace
	if i := strings.LastIndexByte(name.Path, '.'); i >= 0 {
		path = name.Path[:i+1] + FieldNamespace
	}
	return store.Site{
		Loc:    store.Loc{Line: name.Loc.Line, Offset: name.Loc.Offset + int64(len(name.Raw))},
		Kind:   name.Kind,
		Path:   path,
		CallID: name.CallID,
		Group:  name.Group,
		Field:  FieldNamespace,
	}
}
