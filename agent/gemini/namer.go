package gemini

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/store"
)

// Gemini CLI session repair (issue 25 item 3; fixtures/gemini-real/README.md "What 0.61.0 did
// with the old sessions").
//
// 0.61.0 resends every stored name verbatim when it resumes a session while it declares only
// mcp_<server>_<tool> names: a bare 0.32.1 name ("search", "deploy.prod") names no tool that
// exists now, and two of the recording's ("3d_render", "foo bar__get_data") break Gemini's
// documented rule, so an endpoint enforcing it refuses the whole resume. The repair gives every
// name site 0.61.0 resends (Session, SessionJSON) the name 0.61.0 declares for the same raw MCP
// tool, mcpname.GeminiName(server, tool).
//
// The raw tool of a stored name comes, best first, from the call itself: the displayName of the
// toolCalls element whose id is the site's call id ("get+data (lit MCP Server)"; a response is
// resolved by its own id, never by the call it sits under); else from the raw tools known to the
// run (--inventory, --discover, and every displayName of the store): the tools whose names in
// some era (mcpname.GeminiNamesIn) are the stored name; else from the mcpServers keys of
// settings.json: "<key>__<tool>" (a collision name up to 0.32.x) names tool of server key, and
// "mcp_<key>_<tool>" (from 0.33.0) is current already. A stored name the raw tool of which is
// unknown or ambiguous is kept (a bare name such as "get_data" was the name of whichever server
// registered first). A current name two known raw tools share ("foo_bar" and "foo bar" both give
// mcp_foo_bar_get_data: 0.61.0 declares it once and the tool registered last answers) is written
// all the same, as 0.61.0 itself names both tools so, and reported as shared.

// Classes of a Gemini CLI name (reported by scan next to mcpname.Classes).
const (
	// ClassRenamed: the current release declares the raw tool under another name; rewritten.
	ClassRenamed mcpname.Class = "gemini-renamed"
	// ClassShared: the current name of the raw tool is also the name of another known raw tool
	// (declared once; calls reach the one registered last); rewritten, reported.
	ClassShared mcpname.Class = "gemini-shared"
	// ClassUnattributed: a name of an older release whose raw tool is unknown or ambiguous;
	// kept.
	ClassUnattributed mcpname.Class = "gemini-unattributed"
)

// Classes describes the Gemini CLI classes in report order (agent.Agent.Classes).
var Classes = []naming.ClassInfo{
	{Class: ClassRenamed, Action: "rewrite to the name Gemini CLI " + mcpname.GeminiLatestVersion + " declares for its raw tool"},
	{Class: ClassShared, Action: "rewrite to the current name, which two raw tools share (reported)"},
	{Class: ClassUnattributed, Action: "keep (raw tool unknown or ambiguous; pass --inventory or --discover)",
		Kept:       "raw MCP tool unknown or ambiguous (no displayName, inventory tool or server key tells it); fix: pass --inventory or --discover",
		KeptInHome: "raw MCP tool unknown or ambiguous even with the home's settings.json; fix: pass --inventory or --discover"},
}

// Key is one mcpServers key of a settings.json and the file that names it.
type Key struct {
	Key    string `json:"key"`
	Source string `json:"source"`
}

// Policy is what the Gemini CLI namer knows beyond the sessions themselves.
type Policy struct {
	// Tools are the raw tools of --inventory and --discover; ToolsSource names them in notes.
	Tools       []mcpname.GeminiTool
	ToolsSource string
	// Keys are the mcpServers keys of the settings files read for the store's home.
	Keys []Key
	// Version is the release whose names are current ("" = mcpname.GeminiLatestVersion; only
	// releases of mcpname.GeminiEraQualified are accepted by Prepare).
	Version string
}

type geminiNamer struct{}

// candidate is one raw tool a stored name may stand for, and where that came from.
type candidate struct {
	tool   mcpname.GeminiTool
	source string
}

// Decide implements naming.Namer.
func (geminiNamer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	gp := naming.AgentOf[naming.PathPolicy[Policy]](pol, ID).For(snap.Ref.Path)
	n := newNaming(snap, gp)
	out := make([]naming.Decision, len(snap.Sites))
	for i := range snap.Sites {
		out[i] = n.decide(&snap.Sites[i])
	}
	return out
}

// naming holds what deciding one store's names needs.
type namingState struct {
	version string
	keys    []string
	keySrc  map[string]string
	// byCall maps a call id to the raw tools displayNames give it (one, unless the store
	// contradicts itself) and where.
	byCall map[string][]candidate
	// pool is every known raw tool (the policy's, then the store's displayNames), sources in src.
	pool []mcpname.GeminiTool
	src  map[mcpname.GeminiTool]string
	// sharing maps each current name to the known raw tools that have it.
	sharing map[string][]mcpname.GeminiTool
	// builtin holds the call ids whose displayName is a built-in tool's.
	builtin map[string]bool
}

func newNaming(snap *store.Snapshot, gp Policy) *namingState {
	n := &namingState{version: cmp.Or(gp.Version, mcpname.GeminiLatestVersion), byCall: map[string][]candidate{},
		src: map[mcpname.GeminiTool]string{}, keySrc: map[string]string{}, sharing: map[string][]mcpname.GeminiTool{}}
	for _, k := range gp.Keys {
		if _, ok := n.keySrc[k.Key]; !ok {
			n.keys = append(n.keys, k.Key)
			n.keySrc[k.Key] = k.Source
		}
	}
	add := func(t mcpname.GeminiTool, source string) {
		if _, ok := n.src[t]; !ok {
			n.src[t] = source
			n.pool = append(n.pool, t)
		}
	}
	for _, t := range gp.Tools {
		add(t, cmp.Or(gp.ToolsSource, "inventory"))
	}
	meta := MetaOf(snap)
	if meta != nil {
		n.builtin = meta.Builtin
	}
	for _, id := range snap.Identities {
		ts := []mcpname.GeminiTool{{Server: id.Server, Tool: id.Tool}}
		source := "displayName"
		if display := ""; meta != nil {
			if display = meta.Ambiguous[id.CallID]; display != "" {
				// A displayName that splits more than one way: a configured key decides; with
				// none, every split is a candidate (the call is kept unless all give one name).
				s, tl, ambiguous, _ := mcpname.ParseGeminiDisplayName(display, n.keys)
				ts = []mcpname.GeminiTool{{Server: s, Tool: tl}}
				if ambiguous {
					ts, source = mcpname.GeminiDisplayNameSplits(display), fmt.Sprintf("displayName %q (split more than one way; no configured server key decides it)", display)
				}
			}
		}
		for _, t := range ts {
			if len(ts) == 1 {
				add(t, source) // an unresolved split names no known tool
			}
			if id.CallID == "" {
				continue
			}
			if !slices.ContainsFunc(n.byCall[id.CallID], func(c candidate) bool { return c.tool == t }) {
				n.byCall[id.CallID] = append(n.byCall[id.CallID], candidate{tool: t, source: source})
			}
		}
	}
	for _, t := range n.pool {
		nm := mcpname.GeminiName(t.Server, t.Tool)
		n.sharing[nm] = append(n.sharing[nm], t)
	}
	return n
}

// candidates returns the raw tools a stored name may stand for (see the file comment).
func (n *namingState) candidates(site *store.Site) []candidate {
	if cs := n.byCall[site.CallID]; site.CallID != "" && len(cs) > 0 {
		return cs
	}
	name := site.Name
	var out []candidate
	for _, t := range mcpname.GeminiToolsNamed(nil, name, n.pool) {
		out = append(out, candidate{tool: t, source: n.src[t]})
	}
	if len(out) > 0 {
		return out
	}
	for _, k := range n.keys {
		if tool, ok := strings.CutPrefix(name, k+"__"); ok && tool != "" && !strings.Contains(tool, "___") {
			// A collision name of 0.32.x or older: its tool part is the raw tool, or its
			// sanitized form (which names the same current tool).
			out = append(out, candidate{tool: mcpname.GeminiTool{Server: k, Tool: tool}, source: "server key " + k + " of " + n.keySrc[k]})
		}
	}
	return out
}

// geminiValid reports whether Gemini's documented rule accepts name (the "gemini" row of the
// provider table: first character a letter or "_", [A-Za-z0-9_.:-], at most 64).
func geminiValid(site *store.Site) bool {
	for _, p := range provider.Table() {
		if p.ID == "gemini" {
			return len(p.Check(site.Name, site.Units)) == 0
		}
	}
	return mcpname.IsProviderSafe(site.Name)
}

// decide is the verdict on one site.
func (n *namingState) decide(site *store.Site) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	if site.Units != nil {
		// A lone surrogate: no release wrote it; nothing is known of it.
		d.Class, d.Action, d.Rejected = ClassUnattributed, naming.ActKeep, true
		d.Note = "the stored name holds a lone surrogate; kept"
		return d
	}
	if site.CallID != "" && n.builtin[site.CallID] {
		d.Class = mcpname.ClassBuiltin // a built-in tool's call (its displayName says so)
		return d
	}
	cands := n.candidates(site)
	news := map[string][]candidate{}
	var order []string
	for _, c := range cands {
		nm := mcpname.GeminiName(c.tool.Server, c.tool.Tool)
		if _, ok := news[nm]; !ok {
			order = append(order, nm)
		}
		news[nm] = append(news[nm], c)
	}
	valid := geminiValid(site)
	switch {
	case len(order) == 0:
		switch {
		case !valid:
			d.Class, d.Action, d.Rejected = ClassUnattributed, naming.ActKeep, true
			d.Note = "Gemini's name rule rejects this name and its raw MCP tool is unknown (no displayName, inventory tool or server key names it); kept: pass --inventory or --discover to repair it"
		case strings.Contains(site.Name, "__") && !strings.HasPrefix(site.Name, "mcp_"):
			d.Class, d.Action = ClassUnattributed, naming.ActKeep
			d.Note = fmt.Sprintf("a collision name of Gemini CLI 0.32.x or older whose server key is not configured; no tool of %s answers to it; kept: pass --inventory or --discover", n.version)
		case !strings.HasPrefix(site.Name, "mcp_"):
			d.Class = mcpname.ClassBuiltin
		}
		return d
	case len(order) > 1:
		d.Class, d.Action = ClassUnattributed, naming.ActKeep
		d.Rejected = !valid
		var s []string
		for _, nm := range order {
			s = append(s, fmt.Sprintf("%s (%s)", nm, toolList(news[nm])))
		}
		why := "a bare name was the name of whichever server registered it first"
		if src := news[order[0]][0].source; strings.HasPrefix(src, "displayName ") {
			why = "the " + src
		}
		d.Note = "the raw tool is ambiguous (" + why + "): the current name could be " + strings.Join(s, " or ") + "; kept"
		return d
	}
	nm := order[0]
	c := news[nm]
	shared := n.sharing[nm]
	sharedNote := ""
	if len(shared) > 1 {
		var ts []string
		for _, t := range shared {
			ts = append(ts, t.Server+"/"+t.Tool)
		}
		slices.Sort(ts)
		sharedNote = fmt.Sprintf("%s is the name of %d raw tools (%s): Gemini CLI %s declares it once and calls reach the one registered last", nm, len(shared), strings.Join(ts, ", "), n.version)
	}
	if nm == site.Name {
		if sharedNote != "" {
			d.Class, d.Note = ClassShared, sharedNote
		}
		return d
	}
	d.Action, d.New, d.Source = naming.ActRewrite, nm, attribution(c)
	d.Class = ClassRenamed
	d.Note = fmt.Sprintf("raw tool %s from %s; Gemini CLI %s declares it as %s", toolList(c), d.Source, n.version, nm)
	if sharedNote != "" {
		d.Class = ClassShared
		d.Note += "; " + sharedNote
	}
	return d
}

// attribution names where the raw tool came from (every distinct source of the candidates).
func attribution(cs []candidate) string {
	var s []string
	for _, c := range cs {
		if !slices.Contains(s, c.source) {
			s = append(s, c.source)
		}
	}
	return strings.Join(s, ", ")
}

func toolList(cs []candidate) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.tool.Server+"/"+c.tool.Tool)
	}
	return strings.Join(s, " or ")
}
