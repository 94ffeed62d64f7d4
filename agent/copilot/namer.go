package copilot

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Copilot CLI session repair (issue 26 item 5).
//
// 1.0.102 resends every stored name verbatim; an endpoint enforcing ^[a-zA-Z0-9_-]{1,64}$
// answers 400 to a session holding a name outside it (probes r1: "foo-bar-deploy.prod",
// "lit-搜索文献"; r3: the 78-character "lit-get_data_for_…_with_more_filters" of 0.0.340–0.0.417,
// which capped nothing), and the CLI exits 1 on every resume. The repair gives such a name the
// name Copilot CLI 1.0.102 (or Policy.Version) registers for the same raw MCP tool
// (mcpname.CopilotRegister over the tools known to the run), so the resumed chat shows the
// model a call to a tool it is offered.
//
// The raw tool of a stored name comes, best first, from the mcpServerName (mcpConfigServerName)
// and mcpToolName recorded beside it or beside the execution_start of the same toolCallId;
// else from the known tools (the inventory, then every identity the session records) that any
// era names that way; else from the configured server keys (mcp-config.json, a project's
// .mcp.json, --mcp-config): a name "<key>-<tool>" or "<S(key)>-<tool>" shorter than 64 was
// written with the raw tool. A rejected name with no raw tool, or with two that 1.0.102 names
// differently, is kept and reported. A provider-safe name is never rewritten: when no current
// tool answers to it (1.0.39 stored what it dispatched, "lit-get_data" for a call to
// "lit-get+data", and 1.0.39's "lit-_" for "lit-搜索文献") it is reported with the tool it was
// meant for when that is known. A name 1.0.102 gives a tool that an earlier tool of its order
// already answers to (shadowing) is kept: the call would reach the other tool.

// Classes of a Copilot CLI name (reported by scan next to mcpname.Classes).
const (
	// ClassCopilotRenamed: a name a provider rejects, rewritten to the current name of its raw
	// tool.
	ClassCopilotRenamed mcpname.Class = "copilot-renamed"
	// ClassCopilotNoTool: a provider-safe stored name that no tool of the current release
	// answers to (kept: resending it breaks nothing; the tool it meant is named when known).
	ClassCopilotNoTool mcpname.Class = "copilot-no-tool"
	// ClassCopilotUnattributed: a name a provider rejects whose raw tool is unknown or
	// ambiguous; kept.
	ClassCopilotUnattributed mcpname.Class = "copilot-unattributed"
	// ClassCopilotShadowed: the raw tool's current name is taken by an earlier tool of
	// Copilot's order (only that one is offered and called); kept.
	ClassCopilotShadowed mcpname.Class = "copilot-shadowed"
)

// Classes describes the Copilot-only classes in report order (agent.Agent.Classes).
var Classes = []naming.ClassInfo{
	{Class: ClassCopilotRenamed, Action: "rewrite to the name Copilot CLI registers today for its raw MCP tool"},
	{Class: ClassCopilotNoTool, Action: "report (provider-safe, but no current Copilot CLI tool answers to it)"},
	{Class: ClassCopilotUnattributed, Action: "keep (raw MCP tool unknown or ambiguous; pass --mcp-config or --inventory)",
		Kept: "raw MCP tool unknown or ambiguous; fix: pass --mcp-config FILE (the servers' keys) or --inventory"},
	{Class: ClassCopilotShadowed, Action: "keep (its current name answers to another tool)",
		Kept: "the tool's current name is shadowed by another tool that sanitizes alike; only renaming a server key or tool avoids it"},
}

// Key is one configured MCP server key and the file that names it.
type Key struct {
	Key    string `json:"key"`
	Source string `json:"source"`
}

// Policy is what the Copilot CLI namer knows beyond the sessions.
type Policy struct {
	// Version is the release whose names are current ("" = mcpname.CopilotLatestVersion).
	Version string
	// Tools are the raw tools of --inventory / --discover, in configuration order; ToolsSource
	// names them in notes.
	Tools       []mcpname.CopilotTool
	ToolsSource string
	// Keys are the configured server keys.
	Keys []Key
}

type copilotNamer struct{}

// candidate is one raw tool a stored name may stand for, and where that came from.
type candidate struct {
	tool   mcpname.CopilotTool
	source string
	// mangled: the stored name is 1.0.39's dispatch rewrite of the tool's name (lossy).
	mangled bool
}

// naming1 holds what deciding one store's names needs.
type naming1 struct {
	version string
	cur     mcpname.CopilotEra
	known   []mcpname.CopilotTool
	source  map[mcpname.CopilotTool]string
	offer   map[mcpname.CopilotTool]mcpname.CopilotOffer
	answers map[string]mcpname.CopilotTool // current name → the tool that answers it
	keys    []Key
	byCall  map[string]store.Identity
}

func newNaming(snap *store.Snapshot, p Policy) *naming1 {
	n := &naming1{version: cmp.Or(p.Version, mcpname.CopilotLatestVersion), source: map[mcpname.CopilotTool]string{},
		offer: map[mcpname.CopilotTool]mcpname.CopilotOffer{}, answers: map[string]mcpname.CopilotTool{}, byCall: map[string]store.Identity{}}
	cur, err := mcpname.CopilotEraOf(n.version)
	if err != nil {
		cur = mcpname.CopilotEraSanitized
	}
	n.cur = cur
	add := func(t mcpname.CopilotTool, src string) {
		if _, ok := n.source[t]; !ok {
			n.source[t] = src
			n.known = append(n.known, t)
		}
	}
	for _, t := range p.Tools {
		add(t, cmp.Or(p.ToolsSource, "inventory"))
	}
	seenKey := map[string]bool{}
	for _, k := range p.Keys {
		if !seenKey[k.Key] {
			seenKey[k.Key] = true
			n.keys = append(n.keys, k)
		}
	}
	for _, id := range snap.Identities {
		add(mcpname.CopilotTool{Server: id.Server, Tool: id.Tool}, fmt.Sprintf("mcpServerName/mcpToolName, line %d", id.Loc.Line))
		if _, ok := n.byCall[id.CallID]; !ok && id.CallID != "" {
			n.byCall[id.CallID] = id
		}
		if !seenKey[id.Server] {
			seenKey[id.Server] = true
			n.keys = append(n.keys, Key{Key: id.Server, Source: fmt.Sprintf("mcpServerName, line %d", id.Loc.Line)})
		}
	}
	for _, o := range mcpname.CopilotRegister(cur, n.known) {
		n.offer[o.Tool] = o
		if !o.Shadowed {
			n.answers[o.Name] = o.Tool
		}
	}
	return n
}

func (copilotNamer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	p := naming.AgentOf[naming.PathPolicy[Policy]](pol, ID).For(snap.Ref.Path)
	n := newNaming(snap, p)
	out := make([]naming.Decision, len(snap.Sites))
	for i := range snap.Sites {
		out[i] = n.decide(&snap.Sites[i])
	}
	return out
}

// accepted reports whether the stored name passes ^[a-zA-Z0-9_-]{1,64}$ (a lone surrogate
// never does).
func accepted(site *store.Site) bool {
	return site.Units == nil && mcpname.CopilotNameAccepted(site.Name)
}

func toolString(t mcpname.CopilotTool) string { return t.Server + "/" + t.Tool }

func (n *naming1) decide(site *store.Site) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	if id, ok := n.byCall[site.CallID]; ok && site.CallID != "" && (site.Server == "" || site.Server == id.Server) {
		return n.decideKnown(d, mcpname.CopilotTool{Server: id.Server, Tool: id.Tool}, fmt.Sprintf("mcpServerName/mcpToolName, line %d", id.Loc.Line))
	}
	if _, ok := n.answers[site.Name]; ok && accepted(site) {
		return d // the current name of a known tool
	}
	cands := n.candidates(site.Name, accepted(site), site.Server)
	if accepted(site) {
		if len(cands) == 0 && !n.hasServerPart(site.Name) {
			d.Class = mcpname.ClassBuiltin
			return d
		}
		d.Class, d.Action = ClassCopilotNoTool, naming.ActKeep
		d.Note = fmt.Sprintf("no tool Copilot CLI %s offers answers to it; kept (a provider accepts it)", n.version)
		if len(cands) > 0 {
			var s []string
			for _, c := range cands {
				how := "meant"
				if c.mangled {
					how = "1.0.39's rewrite of a call to " + mcpname.CopilotNameIn(mcpname.CopilotEraServerSanitized, c.tool.Server, c.tool.Tool) + ", meant"
				}
				s = append(s, fmt.Sprintf("%s %s, which %s names %s", how, toolString(c.tool), n.version, n.offer[c.tool].Name))
			}
			d.Note += ": " + strings.Join(s, "; or ")
		}
		return d
	}
	news := map[string][]candidate{}
	var order []string
	for _, c := range cands {
		nm := n.currentName(c.tool)
		if _, ok := news[nm]; !ok {
			order = append(order, nm)
		}
		news[nm] = append(news[nm], c)
	}
	switch len(order) {
	case 0:
		d.Class, d.Action, d.Rejected = ClassCopilotUnattributed, naming.ActKeep, true
		d.Note = "a provider rejects it and its raw MCP tool is unknown (no mcpServerName/mcpToolName beside it, no known tool or server key spells it); kept: pass --mcp-config FILE or --inventory to repair it"
		return d
	case 1:
		c := news[order[0]][0]
		return n.decideKnown(d, c.tool, c.source)
	}
	d.Class, d.Action, d.Rejected = ClassCopilotUnattributed, naming.ActKeep, true
	var s []string
	for _, nm := range order {
		var ts []string
		for _, c := range news[nm] {
			ts = append(ts, toolString(c.tool))
		}
		s = append(s, fmt.Sprintf("%s (%s)", nm, strings.Join(ts, ", ")))
	}
	d.Note = "the raw MCP tool is ambiguous: the current name could be " + strings.Join(s, " or ") + "; kept"
	return d
}

// currentName is the name the current release registers for t (with its counter when cut).
func (n *naming1) currentName(t mcpname.CopilotTool) string {
	if o, ok := n.offer[t]; ok {
		return o.Name
	}
	return mcpname.CopilotNameIn(n.cur, t.Server, t.Tool)
}

// decideKnown decides a stored name whose raw tool t is known (from source).
func (n *naming1) decideKnown(d naming.Decision, t mcpname.CopilotTool, source string) naming.Decision {
	site := d.Site
	o, registered := n.offer[t]
	cur := n.currentName(t)
	switch {
	case registered && o.Shadowed:
		d.Class, d.Action = ClassCopilotShadowed, naming.ActKeep
		d.Rejected = !accepted(site)
		d.Note = fmt.Sprintf("raw tool %s (from %s): Copilot CLI %s names it %s, the name of %s, which comes first: only that one is offered and called; kept",
			toolString(t), source, n.version, cur, toolString(*o.ShadowedBy))
		return d
	case site.Name == cur && site.Units == nil:
		return d
	case accepted(site):
		if _, ok := n.answers[site.Name]; ok {
			return d // another known tool's current name: stored for it
		}
		d.Class, d.Action = ClassCopilotNoTool, naming.ActKeep
		d.Note = fmt.Sprintf("raw tool %s (from %s), which Copilot CLI %s names %s; kept (a provider accepts it)", toolString(t), source, n.version, cur)
		return d
	}
	d.Class, d.Action, d.New, d.Source = ClassCopilotRenamed, naming.ActRewrite, cur, source
	d.Note = fmt.Sprintf("raw tool %s from %s; Copilot CLI %s names it %s", toolString(t), source, n.version, cur)
	if o.Truncated {
		d.Note += " (cut to 64)"
	}
	return d
}

// hasServerPart reports whether name starts with a known server key's part of some era and a
// hyphen: an MCP name, not a built-in tool's.
func (n *naming1) hasServerPart(name string) bool {
	for _, k := range n.keys {
		if strings.HasPrefix(name, k.Key+"-") || strings.HasPrefix(name, mcpname.CopilotSanitize(k.Key)+"-") {
			return true
		}
	}
	return false
}

// candidates returns the raw tools a stored name without a recorded identity may stand for:
// the known tools some era names so (and, for a provider-safe name, whose 1.0.39 name
// dispatches as it); else the tools the configured keys spell (an uncut "<key>-<tool>" of the
// raw era, "<S(key)>-<tool>" of the server-sanitized era) — only server's when the record
// names its server (mcpServerName beside the name).
func (n *naming1) candidates(name string, safe bool, server string) []candidate {
	var out []candidate
	seen := map[mcpname.CopilotTool]bool{}
	for _, t := range n.known {
		for _, e := range mcpname.CopilotEras {
			nm := mcpname.CopilotNameIn(e, t.Server, t.Tool)
			if !seen[t] && nm == name {
				seen[t] = true
				out = append(out, candidate{tool: t, source: n.source[t]})
			}
		}
	}
	if safe && len(out) == 0 {
		for _, t := range n.known {
			nm := mcpname.CopilotNameIn(mcpname.CopilotEraServerSanitized, t.Server, t.Tool)
			if !seen[t] && nm != name && mcpname.CopilotDispatchName(mcpname.CopilotEraServerSanitized, nm) == name {
				seen[t] = true
				out = append(out, candidate{tool: t, source: n.source[t], mangled: true})
			}
		}
	}
	if len(out) > 0 || safe {
		return out
	}
	keys := n.keys
	if server != "" {
		// the mcpServerName recorded beside the name first
		keys = append([]Key{{Key: server, Source: "the mcpServerName beside it"}}, keys...)
	}
	for _, k := range keys {
		if server != "" && k.Key != server {
			continue // the record names its server: only that one's tools
		}
		for _, prefix := range []string{k.Key + "-", mcpname.CopilotSanitize(k.Key) + "-"} {
			tool, ok := strings.CutPrefix(name, prefix)
			if !ok || tool == "" {
				continue
			}
			if prefix != k.Key+"-" && mcpname.Len(name) >= mcpname.CopilotMaxName {
				continue // maybe cut: the raw tool cannot be read back
			}
			t := mcpname.CopilotTool{Server: k.Key, Tool: tool}
			if !seen[t] {
				seen[t] = true
				out = append(out, candidate{tool: t, source: "server key " + k.Key + " of " + k.Source})
			}
		}
	}
	return out
}
