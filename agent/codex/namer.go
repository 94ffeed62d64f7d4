package codex

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/store"
)

// Codex rollout repair (schemes.md §A; issue "Codex sessions: repair legacy rollouts").
//
// A rollout written by an old Codex CLI stores MCP calls under flat names (eras E0–E2:
// "mcp__lit__literature.search_pubmed") that providers reject; today's Codex (0.169.0, era E6)
// resends them verbatim when it resumes the session, and every turn fails. The repair gives such
// a function_call the name today's Codex registers for the same raw MCP identity, in the form
// today's Codex itself writes: "namespace" + "name" ({"name":"literature_search_pubmed_977c8bf14fb3",
// "namespace":"mcp__lit"}). Codex 0.169.0 resumes a session repaired that way against an endpoint
// enforcing ^[a-zA-Z0-9_-]+$ (checked by hand with the real release; docs/codex.md).
//
// The E6 name of a tool depends on the whole tool set (collision suffixes), so the namer needs
// the raw identity of each call and, ideally, every tool the current configuration registers:
//
//   - raw identity of a call, best first: the rollout's own invocation records (joined by
//     call_id); the inventory (a stored flat name equal to the E0/E1/E2 name of exactly one
//     inventory tool, the 24-byte + 40-hex hashed E1/E2 names included); config.toml server keys
//     (a flat name "mcp__<key>__<tool>", "<key>__<tool>" or "<key>__OAI_CODEX_MCP__<tool>" for
//     exactly one configured key, never a hashed name). A name none of these attributes is kept
//     and reported: sanitizing it blindly could make it collide with another tool's name, and it
//     is not what any Codex would send.
//   - tool set: the inventory when given (--inventory/--discover), filtered by config.toml
//     (enabled, enabled_tools, disabled_tools); otherwise the tools attributed in the rollout
//     itself, which gives Codex's suffixes whenever the colliding tools were all called in the
//     session (the plan says which set was used).
//
// Names providers accept are never touched, nor are raw invocation records.

// Classes of a Codex function_call name (reported by scan next to mcpname.Classes).
const (
	// ClassCodexRejected: a provider rejects the stored model-visible name and its raw identity
	// is known: rewritten to the current Codex name (namespace + name).
	ClassCodexRejected mcpname.Class = "codex-rejected"
	// ClassCodexUnattributed: a provider rejects the stored name but nothing tells its raw
	// identity: kept and reported.
	ClassCodexUnattributed mcpname.Class = "codex-unattributed"
	// ClassCodexOverLong: a namespaced name today's Codex itself registers (the Responses API
	// takes up to 128 units) whose flat spelling, namespace + "__" + name, is longer than the 64
	// of Chat Completions and most other providers: kept (it is Codex's own name), counted as a
	// kept name a provider rejects, with the providers that reject it (issue 23 item 7).
	ClassCodexOverLong mcpname.Class = "codex-over-long"
)

// CodexClasses describes the Codex-only classes in report order (agent.Agent.Classes).
var CodexClasses = []naming.ClassInfo{
	{Class: ClassCodexRejected, Action: "rewrite to the current Codex name (namespace + name) of its raw identity"},
	{Class: ClassCodexUnattributed, Action: "keep (raw identity unknown; pass --inventory or --codex-config)",
		Kept:       "raw MCP identity unknown; fix: pass --inventory or --codex-config, or give the whole Codex home as PATH so its config.toml and thread_history_*.sqlite are read",
		KeptInHome: "raw MCP identity unknown; fix: pass --inventory or --codex-config (the Codex home given has no config.toml server key and no thread history matching these calls)"},
	{Class: ClassCodexOverLong, Action: "keep (the name Codex registers; providers with a 64 limit reject it)",
		Kept: "the name Codex itself registers (namespace + name longer than 64); only a shorter server key or tool name on the server side avoids it"},
}

// Limits a stored Codex name must meet (schemes.md §D): a flat name is checked against 64 bytes,
// the limit of every wire Codex has used (Chat Completions, Responses until 2026-09, Bedrock);
// a namespaced name (E4b+, Responses only) against the Responses limit on namespace + "__" + name.
const (
	codexFlatLimit       = mcpname.ChatCompletionsNameMax
	codexNamespacedLimit = mcpname.ResponsesNameMax
)

// Sources of a raw identity, as the plan names them.
const (
	SourceInvocation = "invocation record"
	SourceInventory  = "inventory"
	SourceConfigKey  = "config.toml server key"
	SourceHistory    = "thread history"
)

// CodexPolicy is what the Codex namer knows beyond the rollouts themselves.
type CodexPolicy struct {
	// Inventory is the full raw MCP tool set (server key + raw tool name), from --inventory or
	// --discover; nil when none was given.
	Inventory []mcpname.CodexTool
	// InventorySource names the inventory in notes ("inventory.json").
	InventorySource string
	// Config is the user's current Codex config.toml (server keys, tool filters, naming
	// knobs); nil when none was found.
	Config *Config
	// History are the raw identities (server key + raw tool name) Codex recorded in the
	// home's thread_history_*.sqlite (mcpToolCall items), deduplicated; nil when none. They
	// attribute flat names like an inventory (after it) and join the tool set when no
	// inventory is given; HistorySource names the files in notes.
	History       []mcpname.CodexTool
	HistorySource string
}

// codexGroup is one function_call: its name site, its namespace site (an absent one,
// store.Site.Absent, when the call has no "namespace" member: the scan emits it), and where
// their decisions go.
type codexGroup struct {
	name, ns     *store.Site
	nameIdx      int
	nsIdx        int // -1 when the scan gave no namespace site
	stored       string
	accepted     bool
	attrib       codexAttribution
	attributable bool
}

// codexAttribution is the raw identity of a call and where it came from.
type codexAttribution struct {
	tool   mcpname.CodexTool
	source string // SourceInvocation, SourceInventory (+ detail), SourceConfigKey
	detail string
	why    string // when not attributed: why not
}

type codexNamer struct{}

func (codexNamer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	cp := naming.AgentOf[naming.PathPolicy[CodexPolicy]](pol, ID).For(snap.Ref.Path)
	out := make([]naming.Decision, len(snap.Sites))
	var groups []*codexGroup
	byGroup := map[string]*codexGroup{}
	for i := range snap.Sites {
		site := &snap.Sites[i]
		out[i] = naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
		if site.ReadOnly {
			out[i].Note = naming.ReadOnlyNote
			continue
		}
		key := site.Group
		if key == "" {
			key = fmt.Sprintf("site %d", i)
		}
		g := byGroup[key]
		if g == nil {
			g = &codexGroup{nameIdx: -1, nsIdx: -1}
			byGroup[key] = g
			groups = append(groups, g)
		}
		switch site.Field {
		case FieldNamespace:
			g.ns, g.nsIdx = &snap.Sites[i], i
		default:
			g.name, g.nameIdx = &snap.Sites[i], i
		}
	}

	ids := codexIdentities(snap.Identities)
	inv := newFlatIndex(cp.Inventory)
	hist := newFlatIndex(cp.History)
	keys := cp.Config.ServerKeys()
	for _, g := range groups {
		if g.name == nil {
			continue
		}
		ns := ""
		if g.ns != nil {
			ns = g.ns.Name
		}
		g.stored = mcpname.CodexStoredName(ns, g.name.Name)
		limit := codexFlatLimit
		if ns != "" {
			limit = codexNamespacedLimit
		}
		g.accepted = g.name.Units == nil && (g.ns == nil || g.ns.Units == nil) && mcpname.CodexNameAccepted(g.stored, limit)
		g.attrib, g.attributable = attributeCodexCall(g, ids, inv, hist, cp.HistorySource, keys)
	}

	set, setLabel := codexToolSet(groups, cp)
	params := cp.Config.Params()
	alloc := mcpname.CodexAllocate(set, params)
	registered := make(map[mcpname.CodexTool]bool, len(set))
	for _, t := range set {
		registered[t] = true
	}

	var inserts []naming.Decision
	for _, g := range groups {
		if g.name == nil {
			continue
		}
		d := &out[g.nameIdx]
		switch {
		case g.accepted:
			if !g.hasNamespace() && !g.attributable && !mcpname.HasPrefix(g.name.Name) {
				d.Class = mcpname.ClassBuiltin
			}
			if flat := (mcpname.CodexName{Namespace: g.namespace(), Name: g.name.Name}).Flat(); g.hasNamespace() && mcpname.Len(flat) > codexFlatLimit {
				d.Class, d.Action, d.Rejected = ClassCodexOverLong, naming.ActKeep, true
				d.Note = fmt.Sprintf("%d units as sent flat (%s): the name Codex registers (namespace %s + name; the Responses API takes %d), kept; %s",
					mcpname.Len(flat), flat, g.ns.Name, codexNamespacedLimit, rejectedBy(flat))
			}
			if g.nsIdx >= 0 {
				out[g.nsIdx].Class = d.Class
			}
			continue
		case !g.attributable:
			d.Class, d.Action, d.Rejected = ClassCodexUnattributed, naming.ActKeep, true
			d.Note = fmt.Sprintf("a provider rejects this name, but its raw MCP identity is unknown (%s); kept: pass --inventory (or --codex-config with the server keys) to repair it", g.attrib.why)
			if g.nsIdx >= 0 {
				out[g.nsIdx].Class, out[g.nsIdx].Action, out[g.nsIdx].Rejected = ClassCodexUnattributed, naming.ActKeep, true
			}
			continue
		}
		t := g.attrib.tool
		name, ok := alloc[t]
		extra := ""
		if !ok {
			// Not registered today (not in the inventory, server disabled, tool filtered): name it
			// as Codex would if it were, and say so.
			name = mcpname.CodexAllocate(append(slices.Clone(set), t), params)[t]
			extra = "; " + codexUnregisteredWhy(t, cp) + ": no current tool answers to the new name"
		}
		source := g.attrib.source
		if g.attrib.detail != "" {
			source += " (" + g.attrib.detail + ")"
		}
		d.Class, d.Action, d.New, d.Source = ClassCodexRejected, naming.ActRewrite, name.Name, source
		d.Note = fmt.Sprintf("raw identity %s/%s from %s; current Codex name %s + %s (E6, over %s)%s",
			t.Server, t.Tool, source, name.Namespace, name.Name, setLabel, extra)
		nsDecision := naming.Decision{Class: ClassCodexRejected, Action: naming.ActRewrite, New: name.Namespace, Source: source}
		if g.nsIdx >= 0 {
			nsDecision.Site = g.ns
			if g.hasNamespace() && g.ns.Name == name.Namespace {
				nsDecision.Action, nsDecision.New = naming.ActNone, ""
			}
			out[g.nsIdx] = nsDecision
		} else {
			ns := NamespaceSite(*g.name)
			nsDecision.Site = &ns
			inserts = append(inserts, nsDecision)
		}
	}
	// An absent namespace gets a decision only where the plan inserts the member: it holds no
	// stored name to report.
	out = slices.DeleteFunc(out, func(d naming.Decision) bool { return d.Site.Absent() && d.Action != naming.ActRewrite })
	return append(out, inserts...)
}

// namespace is the call's namespace ("" when it has none).
func (g *codexGroup) namespace() string {
	if g.hasNamespace() {
		return g.ns.Name
	}
	return ""
}

// rejectedBy names the providers of the built-in table that reject name, with the rule
// (provider.Table; "no provider of the table rejects it" when none does).
func rejectedBy(name string) string {
	var s []string
	for _, p := range provider.Table() {
		for _, v := range p.Check(name, nil) {
			s = append(s, fmt.Sprintf("%s (%s)", p.ID, v.Detail))
		}
	}
	if len(s) == 0 {
		return "no provider of the table rejects it"
	}
	return "rejected by " + strings.Join(s, ", ")
}

// hasNamespace reports whether the call has a "namespace" member.
func (g *codexGroup) hasNamespace() bool { return g.ns != nil && !g.ns.Absent() }

// codexIdentities maps each call id to its raw identity; a call id recorded with two different
// identities maps to nothing (it cannot be trusted).
func codexIdentities(recs []store.Identity) map[string]*mcpname.CodexTool {
	out := map[string]*mcpname.CodexTool{}
	for _, r := range recs {
		if r.CallID == "" {
			continue
		}
		t := mcpname.CodexTool{Server: r.Server, Tool: r.Tool}
		prev, seen := out[r.CallID]
		switch {
		case !seen:
			out[r.CallID] = &t
		case prev != nil && *prev != t:
			out[r.CallID] = nil
		}
	}
	return out
}

// attributeCodexCall finds the raw identity of one call (see the file comment for the order).
func attributeCodexCall(g *codexGroup, ids map[string]*mcpname.CodexTool, inv, hist flatIndex, histSource string, keys []string) (codexAttribution, bool) {
	if t, seen := ids[g.name.CallID]; seen && g.name.CallID != "" {
		if t != nil {
			return codexAttribution{tool: *t, source: SourceInvocation}, true
		}
		return codexAttribution{why: fmt.Sprintf("call %s has conflicting invocation records", g.name.CallID)}, false
	}
	if g.hasNamespace() || g.name.Units != nil {
		return codexAttribution{why: "no invocation record for call " + g.name.CallID}, false
	}
	var why []string
	if g.name.CallID != "" {
		why = append(why, "no invocation record for call "+g.name.CallID)
	} else {
		why = append(why, "no call id")
	}
	if inv != nil {
		switch ms := inv[g.name.Name]; len(ms) {
		case 1:
			for t, m := range ms {
				return codexAttribution{tool: t, source: SourceInventory, detail: m.label()}, true
			}
		case 0:
			why = append(why, "no inventory tool has this flat name")
		default:
			why = append(why, fmt.Sprintf("%d inventory tools have this flat name", len(ms)))
		}
	} else {
		why = append(why, "no inventory")
	}
	if hist != nil {
		switch ms := hist[g.name.Name]; len(ms) {
		case 1:
			for t, m := range ms {
				return codexAttribution{tool: t, source: SourceHistory, detail: cmp.Or(histSource, "thread_history") + ", " + m.label()}, true
			}
		case 0:
			why = append(why, "no thread-history identity has this flat name")
		default:
			why = append(why, fmt.Sprintf("%d thread-history identities have this flat name", len(ms)))
		}
	} else {
		why = append(why, "no thread history")
	}
	if len(keys) == 0 {
		why = append(why, "no configured server key")
		return codexAttribution{why: strings.Join(why, ", ")}, false
	}
	if codexHashedFlat.MatchString(g.name.Name) {
		why = append(why, "a hashed flat name needs the inventory")
		return codexAttribution{why: strings.Join(why, ", ")}, false
	}
	cands := codexSplitsByKey(g.name.Name, keys)
	switch len(cands) {
	case 1:
		for t, era := range cands {
			return codexAttribution{tool: t, source: SourceConfigKey, detail: string(era) + " spelling"}, true
		}
	case 0:
		why = append(why, "no configured server key matches")
	default:
		why = append(why, fmt.Sprintf("%d configured server keys match", len(cands)))
	}
	return codexAttribution{why: strings.Join(why, ", ")}, false
}

// codexHashedFlat matches an E1/E2 flat name cut to 24 bytes plus a 40-hex SHA-1 (64 bytes).
var codexHashedFlat = regexp.MustCompile(`^.{24}[0-9a-f]{40}$`)

// codexSplitsByKey returns the raw identities a flat name spells with one of the configured
// server keys, with the era of the spelling: E0 "<key>__OAI_CODEX_MCP__<tool>", E2
// "mcp__<key>__<tool>", E1 "<key>__<tool>" (E1/E2 names over 64 bytes were hashed, so longer
// names only split as E0; a name with the E0 marker after a key is not also read as that key's
// E1 name). The tool part is taken as the raw tool name: flat eras up to E2 did
// not sanitize (a name written by E3, 2026-01 on, may carry a sanitized spelling; such names are
// always accepted and only enter the tool set).
func codexSplitsByKey(name string, keys []string) map[mcpname.CodexTool]mcpname.CodexEra {
	out := map[mcpname.CodexTool]mcpname.CodexEra{}
	add := func(server, tool string, era mcpname.CodexEra) {
		if tool != "" {
			if _, ok := out[mcpname.CodexTool{Server: server, Tool: tool}]; !ok {
				out[mcpname.CodexTool{Server: server, Tool: tool}] = era
			}
		}
	}
	for _, k := range keys {
		if tool, ok := strings.CutPrefix(name, k+mcpname.CodexE0Marker); ok {
			add(k, tool, mcpname.CodexE0)
			continue // not also the E1 tool "OAI_CODEX_MCP__<tool>" of the same key
		}
		if len(name) > mcpname.CodexFlatMax {
			continue
		}
		if tool, ok := strings.CutPrefix(name, mcpname.Prefix+k+mcpname.CodexDelimiter); ok {
			add(k, tool, mcpname.CodexE2)
		}
		if tool, ok := strings.CutPrefix(name, k+mcpname.CodexDelimiter); ok {
			add(k, tool, mcpname.CodexE1)
		}
	}
	return out
}

// flatMatch says how an inventory tool spells a flat name.
type flatMatch struct {
	eras   []mcpname.CodexEra
	hashed bool
}

func (m *flatMatch) label() string {
	var s []string
	for _, e := range m.eras {
		s = append(s, string(e))
	}
	if m.hashed {
		return strings.Join(s, "/") + " hash match"
	}
	return strings.Join(s, "/") + " name"
}

// flatIndex maps a flat name to the inventory tools that spell it in an unsanitized flat era.
type flatIndex map[string]map[mcpname.CodexTool]*flatMatch

// newFlatIndex indexes the E2, E1 and E0 names of every inventory tool (nil for no inventory).
// E3 names are left out: they are sanitized, so providers accept them and they never need an
// attribution, and they could alias an unsanitized name of another tool.
func newFlatIndex(tools []mcpname.CodexTool) flatIndex {
	if tools == nil {
		return nil
	}
	ix := flatIndex{}
	for _, t := range tools {
		for _, era := range []mcpname.CodexEra{mcpname.CodexE2, mcpname.CodexE1, mcpname.CodexE0} {
			var name, plain string
			var err error
			switch era {
			case mcpname.CodexE2:
				name, err = mcpname.CodexFlatE2(t.Server, t.Tool)
				plain = mcpname.Prefix + t.Server + mcpname.CodexDelimiter + t.Tool
			case mcpname.CodexE1:
				name, err = mcpname.CodexFlatE1(t.Server, t.Tool)
				plain = t.Server + mcpname.CodexDelimiter + t.Tool
			default:
				name = mcpname.CodexFlatE0(t.Server, t.Tool)
				plain = name
			}
			if err != nil {
				continue // Codex panicked on this tool: no session holds its name
			}
			if ix[name] == nil {
				ix[name] = map[mcpname.CodexTool]*flatMatch{}
			}
			m := ix[name][t]
			if m == nil {
				m = &flatMatch{}
				ix[name][t] = m
			}
			m.eras = append(m.eras, era)
			m.hashed = m.hashed || name != plain
		}
	}
	return ix
}

// codexToolSet returns the tool set to allocate over, sorted, and how the plan names it: the
// inventory's registered tools, or the tools attributed in this rollout.
func codexToolSet(groups []*codexGroup, cp CodexPolicy) ([]mcpname.CodexTool, string) {
	seen := map[mcpname.CodexTool]bool{}
	var set []mcpname.CodexTool
	add := func(t mcpname.CodexTool) {
		if !seen[t] && mcpname.CodexServerNameValid(t.Server) && cp.Config.Registers(t) {
			seen[t] = true
			set = append(set, t)
		}
	}
	label := ""
	if cp.Inventory != nil {
		for _, t := range cp.Inventory {
			add(t)
		}
		label = fmt.Sprintf("the %d registered tools of %s", len(set), cmp.Or(cp.InventorySource, "the inventory"))
	} else {
		for _, t := range cp.History {
			add(t)
		}
		fromHistory := len(set)
		for _, g := range groups {
			if g.attributable {
				add(g.attrib.tool)
			}
		}
		label = fmt.Sprintf("the %d tools attributed in this rollout; pass --inventory for the full tool set", len(set))
		if cp.History != nil {
			label = fmt.Sprintf("the %d tools of %s and %d more attributed in this rollout; pass --inventory for the full tool set",
				fromHistory, cmp.Or(cp.HistorySource, "the thread history"), len(set)-fromHistory)
		}
	}
	sort.Slice(set, func(i, j int) bool {
		if set[i].Server != set[j].Server {
			return set[i].Server < set[j].Server
		}
		return set[i].Tool < set[j].Tool
	})
	return set, label
}

// codexUnregisteredWhy says why today's Codex does not register t.
func codexUnregisteredWhy(t mcpname.CodexTool, cp CodexPolicy) string {
	switch {
	case !mcpname.CodexServerNameValid(t.Server):
		return fmt.Sprintf("server key %q is not valid for Codex", t.Server)
	case !cp.Config.Registers(t):
		return fmt.Sprintf("%s does not register %s/%s (server disabled or tool filtered)", cp.Config.Path, t.Server, t.Tool)
	default:
		return fmt.Sprintf("%s/%s is not in %s", t.Server, t.Tool, cmp.Or(cp.InventorySource, "the inventory"))
	}
}
