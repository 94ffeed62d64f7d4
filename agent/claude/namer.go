package claude

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/provider"
	"github.com/sessionfix/sessionfix/store"
)

// Claude Code session repair (issue 11 item 3; fixtures/claude-real/README.md).
//
// Claude Code resends every stored tool_use.name verbatim when it resumes a session (2.1.332
// resuming a 1.0.51 session sends "mcp__foo_bar__deploy.prod", "mcp__lit__搜索文献", … and an
// endpoint enforcing ^[a-zA-Z0-9_-]{1,128}$ answers 400 on every turn). The repair gives each
// name site Claude Code sends back (Session: tool_use names, tool_reference names,
// ToolSearch "select:" lists, deferred-tool names) the name the current release gives the same
// raw MCP identity (mcpname.ClaudeNameIn of the current era).
//
// The raw identity of a stored name comes, best first, from the raw tools known to the run
// (--inventory/--discover, then the attributionMcpServer/attributionMcpTool pairs of the store):
// the tools the stored name spells in the era of the release that wrote the line (its
// "version"; every era when unknown); else from the MCP server keys of the configuration
// (~/.claude.json, project .mcp.json, --mcp-config): a name "mcp__<key or normalized key>__<t>"
// written before tools were normalized (1.0.83 and older) has the raw tool t. A name that
// normalizes to a name two raw tools share is rewritten only with AllowShared, and is always
// reported as shared, naming both tools. Names in free text are reported, never rewritten.
// Names over 64 units are what Claude Code registers today: kept, with the providers that
// reject them.

// Classes of a Claude Code name (reported by scan next to mcpname.Classes).
const (
	// ClassClaudeRenamed: the current release spells the raw identity differently; rewritten.
	ClassClaudeRenamed mcpname.Class = "claude-renamed"
	// ClassClaudeShared: the current name of the raw identity is also the name of another raw
	// tool (only one of them can be called); rewritten only with --allow-shared.
	ClassClaudeShared mcpname.Class = "claude-shared"
	// ClassClaudeMayShare: the current name of the raw identity may also be the name of another
	// raw tool, but at least one of them is known only from the stored names under a server key
	// or from a session's attribution, not from the servers' tool lists (--inventory,
	// --discover): the tool may be gone. Kept as a shared name would be (rewritten only with
	// --allow-shared), counted apart from claude-shared (issue 23 item 10).
	ClassClaudeMayShare mcpname.Class = "claude-may-share"
	// ClassClaudeUnattributed: a name the current release would never write (characters
	// outside [A-Za-z0-9_-]) whose raw identity is unknown or ambiguous; kept.
	ClassClaudeUnattributed mcpname.Class = "claude-unattributed"
	// ClassClaudeOverLong: a current name longer than 64 UTF-16 units (Claude Code does not
	// cap names); kept, the providers that reject it are named.
	ClassClaudeOverLong mcpname.Class = "claude-over-long"
)

// ClaudeClasses describes the Claude-only classes in report order (agent.Agent.Classes).
var ClaudeClasses = []naming.ClassInfo{
	{Class: ClassClaudeRenamed, Action: "rewrite to the current Claude Code name of its raw identity"},
	{Class: ClassClaudeShared, Action: "report (two raw tools share the current name); rewrite with --allow-shared",
		Kept: "its current name is shared by two raw tools (only one can be called); fix: --allow-shared rewrites it anyway"},
	{Class: ClassClaudeMayShare, Action: "report (may be shared: the servers' tool lists are unknown; --discover lists them); rewrite with --allow-shared",
		Kept: "may be shared: the servers' tool lists are unknown; --discover lists them (or --inventory FILE); --allow-shared rewrites it anyway"},
	{Class: ClassClaudeUnattributed, Action: "keep (raw identity unknown; pass --mcp-config or --inventory)",
		Kept: "raw MCP identity unknown or ambiguous; fix: pass --mcp-config FILE (the servers' keys) or --inventory"},
	{Class: ClassClaudeOverLong, Action: "keep (the name Claude Code registers; providers with a 64 limit reject it)",
		Kept: "the name Claude Code itself registers (longer than 64); only a shorter server key or tool name on the server side avoids it"},
}

// ClaudeKey is one MCP server key of the configuration and the file that names it.
type ClaudeKey struct {
	Key    string `json:"key"`
	Source string `json:"source"`
}

// ClaudePolicy is what the Claude Code namer knows beyond the sessions themselves.
type ClaudePolicy struct {
	// Tools are the raw MCP tools (server key + raw tool) of --inventory / --discover, in
	// configuration order (the first of two tools sharing a name answers it); nil: none given.
	Tools []mcpname.ClaudeTool
	// ToolsSource names them in notes ("inventory.json").
	ToolsSource string
	// Keys are the configured server keys (~/.claude.json, .mcp.json, --mcp-config).
	Keys []ClaudeKey
	// Version is the release whose names are current ("" = mcpname.ClaudeLatestVersion).
	Version string
	// AllowShared lets a stored name be rewritten to a name two raw tools share.
	AllowShared bool
}

// claudeCandidate is one raw identity a stored name may stand for, and where it came from.
type claudeCandidate struct {
	tool   mcpname.ClaudeTool
	source string
}

type claudeNamer struct{}

func (claudeNamer) Decide(snap *store.Snapshot, pol naming.Policy) []naming.Decision {
	cp := naming.AgentOf[naming.PathPolicy[ClaudePolicy]](pol, ID).For(snap.Ref.Path)
	n, eraAt, _ := newClaudeNaming(snap, cp)

	out := make([]naming.Decision, len(snap.Sites))
	for i := range snap.Sites {
		site := &snap.Sites[i]
		era := eraAt(site.Loc.Line)
		if site.Kind == ClaudeSiteSelect {
			out[i] = n.decideSelect(site, era, cp.AllowShared)
			continue
		}
		d := n.decide(site, site.Name, era, cp.AllowShared)
		if site.ReadOnly {
			switch d.Action {
			case naming.ActRewrite:
				d.Action, d.Note = naming.ActKeep, fmt.Sprintf("free text: reported, never rewritten (the current name is %s; %s)", d.New, d.Note)
				d.New = ""
			case naming.ActKeep:
				if d.Class != ClassClaudeOverLong {
					d.Note = "free text: reported, never rewritten; " + d.Note
				} else {
					d.Action, d.Note = naming.ActNone, ""
				}
			}
		}
		out[i] = d
	}
	return out
}

// ClaudeFoundTool is a raw MCP tool the Claude Code repair knows for a store, and where from.
type ClaudeFoundTool struct {
	mcpname.ClaudeTool
	// Source: pol.ToolsSource ("inventory" when empty), "attributionMcpServer/Tool, line N",
	// or "server key K of FILE" (a stored name of a release that kept tools raw).
	Source string
}

// ClaudeRawTools returns the raw tools the repair considers for snap (a Session
// snapshot) under pol, in the order of Decide: pol.Tools, then the store's attribution pairs,
// then the raw tools its stored names spell under the configured server keys (names written
// before tools were normalized, in the era of the release that wrote the line), sorted. The
// audit of Claude Code's rules (audit --agent claude) builds its tool list from it.
func ClaudeRawTools(snap *store.Snapshot, pol ClaudePolicy) []ClaudeFoundTool {
	n, _, pool := newClaudeNaming(snap, pol)
	out := make([]ClaudeFoundTool, len(pool))
	for i, t := range pool {
		out[i] = ClaudeFoundTool{ClaudeTool: t, Source: n.knownSource[t]}
	}
	return out
}

// newClaudeNaming gathers what deciding snap's names needs: the known raw tools (the inventory
// first, its order decides who answers a shared name, then the store's own attribution pairs),
// the candidates of every stored name, so that a name two of them share is known before anything
// is decided; pool is every such raw tool (known first, then the others sorted), whose sources
// are in n.knownSource.
func newClaudeNaming(snap *store.Snapshot, cp ClaudePolicy) (n *claudeNaming, eraAt func(int64) *mcpname.ClaudeEra, pool []mcpname.ClaudeTool) {
	version := cp.Version
	if version == "" {
		version = mcpname.ClaudeLatestVersion
	}
	cur, err := mcpname.ClaudeEraOf(version)
	if err != nil {
		cur = mcpname.ClaudeEraDedup
	}
	meta := ClaudeMetaOf(snap)

	known := slices.Clone(cp.Tools)
	knownSource := map[mcpname.ClaudeTool]string{}
	for _, t := range cp.Tools {
		if _, ok := knownSource[t]; !ok {
			knownSource[t] = cmp.Or(cp.ToolsSource, "inventory")
		}
	}
	for _, id := range snap.Identities {
		t := mcpname.ClaudeTool{Server: id.Server, Tool: id.Tool}
		if _, ok := knownSource[t]; !ok {
			knownSource[t] = fmt.Sprintf("attributionMcpServer/Tool, line %d", id.Loc.Line)
			known = append(known, t)
		}
	}
	listed := make(map[mcpname.ClaudeTool]bool, len(cp.Tools))
	for _, t := range cp.Tools {
		listed[t] = true
	}
	n = &claudeNaming{cur: cur, version: version, known: known, knownSource: knownSource, listed: listed, keys: cp.Keys, cache: map[string][]claudeCandidate{}}

	eraAt = func(line int64) *mcpname.ClaudeEra {
		v := meta.VersionAt(line)
		if v == "" {
			return nil
		}
		e, err := mcpname.ClaudeEraOf(v)
		if err != nil {
			return nil
		}
		return &e
	}
	pooled := map[mcpname.ClaudeTool]string{}
	for _, t := range known {
		pooled[t] = knownSource[t]
	}
	namesOf := func(site *store.Site) []string {
		if site.Kind == ClaudeSiteSelect {
			_, names, ok := claudeSelect(site.Name)
			if !ok {
				return nil
			}
			return names
		}
		return []string{site.Name}
	}
	for i := range snap.Sites {
		site := &snap.Sites[i]
		for _, nm := range namesOf(site) {
			for _, c := range n.candidates(nm, eraAt(site.Loc.Line)) {
				if _, ok := pooled[c.tool]; !ok {
					pooled[c.tool] = c.source
				}
			}
		}
	}
	pool = make([]mcpname.ClaudeTool, 0, len(pooled))
	pool = append(pool, known...)
	extra := []mcpname.ClaudeTool{}
	for t := range pooled {
		if _, ok := knownSource[t]; !ok {
			extra = append(extra, t)
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		if extra[i].Server != extra[j].Server {
			return extra[i].Server < extra[j].Server
		}
		return extra[i].Tool < extra[j].Tool
	})
	pool = append(pool, extra...)
	n.sharing = map[string][]mcpname.ClaudeTool{}
	for _, t := range pool {
		nm := mcpname.ClaudeNameIn(cur, t.Server, t.Tool)
		if !slices.Contains(n.sharing[nm], t) {
			n.sharing[nm] = append(n.sharing[nm], t)
		}
	}
	// Sources of the candidates (after sharing: the namer reads knownSource only for known).
	for _, t := range extra {
		n.knownSource[t] = pooled[t]
	}
	return n, eraAt, pool
}

// claudeNaming holds what deciding one store's names needs.
type claudeNaming struct {
	cur         mcpname.ClaudeEra
	version     string
	known       []mcpname.ClaudeTool
	knownSource map[mcpname.ClaudeTool]string
	// listed are the tools of the servers' tool lists (--inventory, --discover): a name shared
	// only by listed tools is surely shared; otherwise it may be (claude-may-share).
	listed map[mcpname.ClaudeTool]bool
	keys   []ClaudeKey
	// sharing maps each current name to the raw tools (known or attributed) that have it.
	sharing map[string][]mcpname.ClaudeTool
	cache   map[string][]claudeCandidate
}

// candidates returns the raw identities a stored name may stand for (see the file comment).
// era is the era of the release that wrote it (nil: any era).
func (n *claudeNaming) candidates(name string, era *mcpname.ClaudeEra) []claudeCandidate {
	if !mcpname.HasPrefix(name) {
		return nil
	}
	eras := mcpname.ClaudeEras
	key := name + "\x00*"
	if era != nil {
		eras = []mcpname.ClaudeEra{*era}
		key = fmt.Sprintf("%s\x00%d", name, *era)
	}
	if c, ok := n.cache[key]; ok {
		return c
	}
	var out []claudeCandidate
	seen := map[mcpname.ClaudeTool]bool{}
	for _, e := range eras {
		for _, t := range mcpname.ClaudeToolsNamed(e, name, n.known) {
			if !seen[t] {
				seen[t] = true
				out = append(out, claudeCandidate{tool: t, source: n.knownSource[t]})
			}
		}
	}
	if len(out) == 0 {
		for _, k := range n.keys {
			for _, e := range eras {
				if e > mcpname.ClaudeEraServerNormalized {
					continue // the tool part is normalized: the raw tool cannot be read back
				}
				tool, ok := strings.CutPrefix(name, mcpname.ClaudeServerPrefixIn(e, k.Key))
				t := mcpname.ClaudeTool{Server: k.Key, Tool: tool}
				if ok && tool != "" && !seen[t] {
					seen[t] = true
					out = append(out, claudeCandidate{tool: t, source: "server key " + k.Key + " of " + k.Source})
				}
			}
		}
	}
	n.cache[key] = out
	return out
}

// currentSafe reports whether a name could have been written by a normalizing release: every
// unit in [A-Za-z0-9_-].
func currentSafe(site *store.Site, name string) bool {
	if site.Units != nil && site.Name == name {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// decide is the verdict on one stored name (a site's, or one entry of a select: list).
func (n *claudeNaming) decide(site *store.Site, name string, era *mcpname.ClaudeEra, allowShared bool) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	if !mcpname.HasPrefix(name) {
		if currentSafe(site, name) {
			d.Class = mcpname.ClassBuiltin
		}
		return d
	}
	cands := n.candidates(name, era)
	news := map[string][]claudeCandidate{}
	var order []string
	for _, c := range cands {
		nm := mcpname.ClaudeNameIn(n.cur, c.tool.Server, c.tool.Tool)
		if _, ok := news[nm]; !ok {
			order = append(order, nm)
		}
		news[nm] = append(news[nm], c)
	}
	switch {
	case len(order) == 0:
		if !currentSafe(site, name) {
			d.Class, d.Action = ClassClaudeUnattributed, naming.ActKeep
			d.Note = fmt.Sprintf("Claude Code %s would never write this name, but its raw MCP identity is unknown (no server key or inventory tool spells it); kept: pass --mcp-config FILE or --inventory to repair it", n.version)
			return d
		}
		return n.overLong(d, name)
	case len(order) > 1:
		d.Class, d.Action = ClassClaudeUnattributed, naming.ActKeep
		var s []string
		for _, nm := range order {
			s = append(s, fmt.Sprintf("%s (%s)", nm, claudeToolList(news[nm])))
		}
		d.Note = "the raw identity is ambiguous: the current name could be " + strings.Join(s, " or ") + "; kept"
		return d
	}
	nm := order[0]
	c := news[nm][0]
	shared := n.sharing[nm]
	sharedNote := ""
	if len(shared) > 1 {
		var ts []string
		for _, t := range shared {
			ts = append(ts, t.Server+"/"+t.Tool)
		}
		sharedNote = fmt.Sprintf("%s is the name of %d raw tools (%s): Claude Code %s offers it once and calls reach %s/%s",
			nm, len(shared), strings.Join(ts, ", "), n.version, shared[0].Server, shared[0].Tool)
		if n.cur < mcpname.ClaudeEraDedup {
			sharedNote = fmt.Sprintf("%s is the name of %d raw tools (%s): only one of them can be called", nm, len(shared), strings.Join(ts, ", "))
		}
	}
	sharedClass := ClassClaudeShared
	if sharedNote != "" && slices.ContainsFunc(shared, func(t mcpname.ClaudeTool) bool { return !n.listed[t] }) {
		// A sharer known from a stored name or an attribution only: the tool may be gone today.
		sharedClass = ClassClaudeMayShare
		var unlisted []string
		for _, t := range shared {
			if !n.listed[t] {
				unlisted = append(unlisted, t.Server+"/"+t.Tool)
			}
		}
		sharedNote = fmt.Sprintf("may be shared: the servers' tool lists are unknown (%s known from the sessions only); --discover lists them: %s",
			strings.Join(unlisted, ", "), sharedNote)
	}
	if nm == name {
		if sharedNote != "" {
			d.Class, d.Note = sharedClass, sharedNote+fmt.Sprintf("; this name was written for %s", strings.Join(strings.Split(claudeToolList(news[nm]), ", "), " or "))
			if len(news[nm]) == 1 && c.tool != shared[0] {
				// Written for a tool that no longer answers to it: nothing to rewrite to,
				// but the session now means another tool.
				d.Action = naming.ActKeep
				d.Note += fmt.Sprintf(", which can no longer be called under it; kept (no name reaches %s/%s)", c.tool.Server, c.tool.Tool)
			}
			return d
		}
		return n.overLong(d, name)
	}
	source, src := attribution(news[nm])
	d.Source = src
	if sharedNote != "" {
		d.Class = sharedClass
		if !allowShared {
			d.Action = naming.ActKeep
			d.Note = fmt.Sprintf("%s; would be %s: %s; kept: pass --allow-shared to rewrite it", source, nm, sharedNote)
			return d
		}
		d.Action, d.New = naming.ActRewrite, nm
		d.Note = fmt.Sprintf("%s; %s (--allow-shared)", source, sharedNote)
		return n.longNote(d, nm)
	}
	d.Class, d.Action, d.New = ClassClaudeRenamed, naming.ActRewrite, nm
	d.Note = fmt.Sprintf("%s; Claude Code %s names it %s", source, n.version, nm)
	return n.longNote(d, nm)
}

// overLongLimit is the length above which a name is reported as over-long (the 64 of most
// providers and of Anthropic's tool_reference).
const overLongLimit = 64

// overLong marks a current name over 64 units as kept, with the providers that reject it.
func (n *claudeNaming) overLong(d naming.Decision, name string) naming.Decision {
	if mcpname.Len(name) <= overLongLimit {
		return d
	}
	d.Class, d.Action = ClassClaudeOverLong, naming.ActKeep
	d.Note = fmt.Sprintf("%d units: the name Claude Code %s registers (it caps nothing), kept; %s", mcpname.Len(name), n.version, rejectedBy(name))
	return d
}

// longNote adds the providers that reject a new name over 64 units to a rewrite's note.
func (n *claudeNaming) longNote(d naming.Decision, name string) naming.Decision {
	if mcpname.Len(name) > overLongLimit {
		d.Note += fmt.Sprintf("; %d units, as Claude Code registers it: %s", mcpname.Len(name), rejectedBy(name))
	}
	return d
}

// rejectedBy names the providers of the built-in table that reject name, with the rule.
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

// attribution is a rewrite note's "raw identity …" clause and its Source for the candidates
// that lead to one current name. Several raw tools may have been stored under one name (1.0.51
// normalized only the server part: foo.bar/x.y and foo_bar/x.y were both mcp__foo_bar__x.y):
// then every one is named, none is picked as the call's identity.
func attribution(cs []claudeCandidate) (note, source string) {
	if len(cs) == 1 {
		return fmt.Sprintf("raw identity %s/%s from %s", cs[0].tool.Server, cs[0].tool.Tool, cs[0].source), cs[0].source
	}
	var sources []string
	for _, c := range cs {
		if !slices.Contains(sources, c.source) {
			sources = append(sources, c.source)
		}
	}
	var ts []string
	for _, c := range cs {
		t := c.tool.Server + "/" + c.tool.Tool
		if len(sources) > 1 {
			t += " (from " + c.source + ")"
		}
		ts = append(ts, t)
	}
	fits := "both"
	if len(cs) > 2 {
		fits = fmt.Sprintf("all %d", len(cs))
	}
	note = fmt.Sprintf("raw identity %s (the stored name fits %s)", strings.Join(ts, " or "), fits)
	if len(sources) == 1 {
		note += " from " + sources[0]
	}
	return note, strings.Join(sources, ", ")
}

func claudeToolList(cs []claudeCandidate) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.tool.Server+"/"+c.tool.Tool)
	}
	return strings.Join(s, ", ")
}

// claudeSelect splits a ToolSearch query "select:<name>,<name>,…" into its prefix and names;
// ok is false for any other query (a keyword search).
func claudeSelect(q string) (prefix string, names []string, ok bool) {
	rest, ok := strings.CutPrefix(q, "select:")
	if !ok {
		return "", nil, false
	}
	return "select:", strings.Split(rest, ","), true
}

// decideSelect decides a ToolSearch "select:" query: each listed name as decide would, the
// query rewritten as a whole when some name changes.
func (n *claudeNaming) decideSelect(site *store.Site, era *mcpname.ClaudeEra, allowShared bool) naming.Decision {
	d := naming.Decision{Site: site, Class: mcpname.ClassClean, Action: naming.ActNone}
	prefix, names, ok := claudeSelect(site.Name)
	if !ok || site.Units != nil {
		return d
	}
	var notes []string
	changed := false
	out := slices.Clone(names)
	worst := 0
	rank := map[mcpname.Class]int{ClassClaudeOverLong: 1, ClassClaudeRenamed: 2, ClassClaudeMayShare: 3, ClassClaudeShared: 4, ClassClaudeUnattributed: 5}
	for i, nm := range names {
		e := n.decide(site, nm, era, allowShared)
		if e.Action == naming.ActRewrite {
			out[i], changed = e.New, true
		}
		if e.Note != "" && e.Class != ClassClaudeOverLong {
			notes = append(notes, nm+": "+e.Note)
		}
		if r := rank[e.Class]; r > worst {
			worst, d.Class = r, e.Class
		}
	}
	if d.Class == ClassClaudeOverLong {
		d.Class = mcpname.ClassClean // the query string itself is not a tool name
	}
	if changed {
		// A kept entry stays as it is inside the rewritten list (its tool_use site says why).
		d.Action, d.New, d.Source = naming.ActRewrite, prefix+strings.Join(out, ","), "ToolSearch select: list"
	}
	d.Note = strings.Join(notes, " | ")
	return d
}
