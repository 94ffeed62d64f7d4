package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/codex"
	"github.com/sessionfix/sessionfix/store/qwen"
)

// Re-dispatch detection (issue 13 item 3): for each stored history call, the tool(s) it
// reaches TODAY by the agent's own lookup (mcpname.QwenResolve, mcpname.CodexResolve,
// mcpname.ClaudeDispatch) over the current tool set (an inventory, --discover, or what the
// agent's configuration and history record), compared with the raw identity that was called.
// Only two classes are findings: redispatch (one tool, another raw identity than the one
// called) and ambiguous (several tools, or a stored spelling several tools share so the one
// called cannot be told). Nothing here rewrites anything; the fix plan's decision is quoted.

// Tool is a raw MCP identity: the configured server key and the tool name the server lists.
type Tool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// String is "server/tool".
func (t Tool) String() string { return t.Server + "/" + t.Tool }

// Lookup is what re-dispatch detection knows of the current tool set beyond the stores.
type Lookup struct {
	// Qwen are the tools Qwen Code registers today (an --inventory), in the order given;
	// QwenSource names them in explanations ("inventory.json"). nil: Qwen calls are not checked.
	Qwen       []mcpname.QwenTool
	QwenSource string
	// Policy is the fix plan's: its per-agent slots (naming.AgentOf) hold the Codex tool sets
	// (inventory, else thread history, filtered by config.toml) and the Claude Code tools
	// (--inventory / --discover).
	Policy rewrite.Policy
}

// Redispatch is one stored call whose lookup today is a finding, with the number of sites of
// the store that hold the same call (Loc is the first).
type Redispatch struct {
	Store string    `json:"store"`
	Loc   store.Loc `json:"loc"`
	Agent string    `json:"agent"`
	// Kind is the site kind ("call", "compressed", …), JSONPath the first site's path.
	Kind     string `json:"site"`
	JSONPath string `json:"path"`
	// Stored is the name as stored; Namespace the Codex call's namespace member ("" when none).
	Stored    string `json:"stored"`
	Namespace string `json:"namespace,omitempty"`
	// Class is "redispatch" or "ambiguous" (mcpname.Dispatch.String).
	Class string `json:"class"`
	// Called is the raw identity that was called (nil: not known), CalledFrom where that
	// comes from ("telemetry mcp_server_name, line 4", "invocation record", …).
	Called     *Tool  `json:"called,omitempty"`
	CalledFrom string `json:"called_from,omitempty"`
	// Reaches are the tools the call reaches today (the one that answers first when the
	// agent picks one); Candidates, for a stored spelling several tools share, those tools.
	Reaches    []Tool `json:"reaches"`
	Candidates []Tool `json:"candidates,omitempty"`
	// Rule explains the finding by the agent's lookup rule; Fix says what fix does with it.
	Rule  string `json:"rule"`
	Fix   string `json:"fix"`
	Count int    `json:"count"`
}

// NewQwenTools lists an inventory's servers (sorted by key) and tools as Qwen tools.
func NewQwenTools(servers map[string][]string) []mcpname.QwenTool {
	var out []mcpname.QwenTool
	for _, k := range slices.Sorted(maps.Keys(servers)) {
		for _, t := range servers[k] {
			out = append(out, mcpname.QwenTool{Server: k, Tool: t})
		}
	}
	return out
}

// historyCall reports whether a site is a call name the agent sends back as history (a
// call, a compressed or bootstrap copy, a checkpoint's), not a response, telemetry, rule or
// record that is never sent.
func historyCall(s *store.Site) bool {
	if s.ReadOnly || s.Absent() || !sent(s) {
		return false
	}
	switch s.Kind {
	case store.SiteCall, store.SiteCompressed, store.SiteBootstrap, store.SiteCheckpoint:
		return !strings.Contains(s.Path, "functionResponse")
	}
	return false
}

// Redispatches returns the findings of one store's plan, in the plan's order, one per distinct
// (stored call, called identity) with its count. An agent without a known tool set gives none.
func Redispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	if lk == nil || sp == nil || sp.Snap == nil {
		return nil
	}
	var out []Redispatch
	switch sp.Snap.Agent {
	case qwen.ID:
		out = qwenRedispatches(sp, lk)
	case codex.ID:
		out = codexRedispatches(sp, lk)
	case claude.ID:
		out = claudeRedispatches(sp, lk)
	}
	return out
}

// collector merges findings of the same stored call and called identity.
type collector struct {
	out []Redispatch
	at  map[string]int
}

func (c *collector) add(r Redispatch) {
	if c.at == nil {
		c.at = map[string]int{}
	}
	k := r.Namespace + "\x00" + r.Stored + "\x00" + r.Class
	if r.Called != nil {
		k += "\x00" + r.Called.String()
	}
	if i, ok := c.at[k]; ok {
		c.out[i].Count++
		return
	}
	r.Count = 1
	c.at[k] = len(c.out)
	c.out = append(c.out, r)
}

// fixText says what the fix plan does with a finding's site: it never renames a call into
// another tool's name; a rewrite only ever takes the called tool's own current name.
func fixText(d rewrite.Decision, class mcpname.Dispatch) string {
	switch d.Action {
	case rewrite.ActRewrite:
		return fmt.Sprintf("fix rewrites it to %s (%s), the agent's own send-time spelling of the same stored call; the lookup above does not change", d.New, d.Source)
	case rewrite.ActKeep:
		return "fix keeps it: " + d.Note
	}
	if class == mcpname.DispatchSeveral {
		return "fix leaves it: no rewrite can tell which of the tools was meant"
	}
	return "fix leaves it: renaming the call to another tool's name would rewrite what the history says was called; rename or remove the server that now answers, or start a new session"
}

// tools converts the agents' tool types (QwenTool, CodexTool, ClaudeTool: server and tool).
func tools[T any](ts []T, conv func(T) Tool) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = conv(t)
	}
	return out
}

func qwenTool(t mcpname.QwenTool) Tool     { return Tool{t.Server, t.Tool} }
func codexTool(t mcpname.CodexTool) Tool   { return Tool{t.Server, t.Tool} }
func claudeTool(t mcpname.ClaudeTool) Tool { return Tool{t.Server, t.Tool} }

func toolList(ts []Tool) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// qwenRedispatches checks each history call of a Qwen Code store. The called identity: the
// telemetry record of the same name (ui_telemetry mcp_server_name) names the server, and the
// inventory tool of that server whose raw, legacy (0.12.0) or registered (0.24.x) spelling is
// the stored name is the tool; without telemetry, the one inventory tool with that spelling.
// Today's lookup: Qwen Code 0.24.x sends NormalizeMcp(stored) and its registry is keyed by
// Normalize(Raw(server, tool)) (qwen-reference.md §1 Naming; the spec's "Where names are produced and consumed").
func qwenRedispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	if lk.Qwen == nil {
		return nil
	}
	servers := map[string]map[string]int64{} // stored name → server → first telemetry line
	for _, s := range sp.Snap.Sites {
		if s.Kind == store.SiteTelemetry && s.Server != "" {
			if servers[s.Name] == nil {
				servers[s.Name] = map[string]int64{}
			}
			if _, ok := servers[s.Name][s.Server]; !ok {
				servers[s.Name][s.Server] = s.Loc.Line
			}
		}
	}
	src := cmp.Or(lk.QwenSource, "the inventory")
	qc := &qwenCache{tools: lk.Qwen, reg: map[string][]mcpname.QwenTool{}, who: map[[2]string][]mcpname.QwenTool{}}
	var c collector
	for _, d := range sp.Decisions {
		s := d.Site
		if !historyCall(s) || s.Units != nil || !mcpname.HasPrefix(s.Name) {
			continue
		}
		server, from := "", ""
		if sv := servers[s.Name]; len(sv) == 1 {
			for k, line := range sv {
				server, from = k, fmt.Sprintf("telemetry mcp_server_name %q, line %d", k, line)
			}
		}
		callers := qc.callers(s.Name, server)
		if len(callers) == 0 && server != "" {
			callers = qc.callers(s.Name, "")
			from = ""
		}
		got := qc.resolve(s.Name)
		sent := mcpname.NormalizeMcp(s.Name)
		r := Redispatch{Store: sp.Snap.Ref.Path, Loc: s.Loc, Agent: string(qwen.ID), Kind: string(s.Kind), JSONPath: s.Path,
			Stored: s.Name, Reaches: tools(got, qwenTool)}
		if r.Reaches == nil {
			r.Reaches = []Tool{}
		}
		var class mcpname.Dispatch
		switch {
		case len(callers) > 1:
			class = mcpname.DispatchSeveral
			r.Candidates = tools(callers, qwenTool)
			why := "the spelling (raw, legacy of 0.12.0 where characters outside [A-Za-z0-9_.-] become '_', or registered of 0.24.x) of each of"
			if mcpname.IsTruncationShape(s.Name) {
				why = "the middle-truncated legacy name (28 units + \"___\" + the last 32) of each of"
			}
			r.Rule = fmt.Sprintf("Qwen Code: the stored name is %s %s, so which one was called cannot be told; sent today as %s, which reaches %s",
				why, toolList(r.Candidates), sent, reachText(r.Reaches))
		case len(callers) == 1:
			called := qwenTool(callers[0])
			r.Called, r.CalledFrom = &called, from
			if from == "" {
				r.CalledFrom = "the only tool of " + src + " with this spelling"
			}
			class = mcpname.QwenClassify(got, callers[0])
			if class.Finding() {
				r.Rule = qwenRule(s.Name, sent, called, r.Reaches, class)
			}
		default:
			if len(got) < 2 {
				continue // no tool of the inventory spells it: nothing to compare
			}
			class = mcpname.DispatchSeveral
			r.Rule = qwenRule(s.Name, sent, Tool{}, r.Reaches, class)
		}
		if !class.Finding() {
			continue
		}
		r.Class, r.Fix = class.String(), fixText(d, class)
		c.add(r)
	}
	return c.out
}

func reachText(ts []Tool) string {
	if len(ts) == 0 {
		return "no current tool"
	}
	return toolList(ts)
}

// qwenRule explains a Qwen Code finding by its lookup rule.
func qwenRule(stored, sent string, called Tool, reaches []Tool, class mcpname.Dispatch) string {
	how := fmt.Sprintf("Qwen Code sends the stored call as normalizeMcp(%s) = %s", stored, sent)
	if sent == stored {
		how = fmt.Sprintf("Qwen Code sends the stored call %s as it is (provider-safe)", stored)
	}
	if class == mcpname.DispatchSeveral {
		return fmt.Sprintf("%s, the registered name of %d tools (%s): keys that flatten alike (normalize maps every character outside [A-Za-z0-9_-] to '_' and hashes only unsafe names, so a safe name can equal another tool's hashed one); the registry keeps the last one registered",
			how, len(reaches), toolList(reaches))
	}
	r := reaches[0]
	why := ""
	if mcpname.Legacy(mcpname.Raw(called.Server, called.Tool)) == stored && stored != mcpname.Raw(called.Server, called.Tool) {
		why = fmt.Sprintf(" (the stored name is the legacy spelling of %s, where '%s' flattened to '_')", called, flattened(called.Server+called.Tool))
	}
	return fmt.Sprintf("%s, the registered name of %s (normalize(%s)); the call was %s%s", how, r, mcpname.Raw(r.Server, r.Tool), called, why)
}

// flattened lists the characters Legacy replaces in s (outside [A-Za-z0-9_.-]).
func flattened(s string) string {
	var out []string
	seen := map[rune]bool{}
	for _, c := range s {
		ok := c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-')
		if !ok && !seen[c] {
			seen[c] = true
			out = append(out, string(c))
		}
	}
	return strings.Join(out, "', '")
}

// codexRedispatches checks each history function_call of a Codex rollout (its name and
// namespace members are one call). The called identity: the invocation record of the call id
// (mcp_tool_call_end). Today's tool set: the inventory (--inventory / --discover), else the
// raw identities of the home's thread history, filtered as config.toml registers them; the
// lookup: mcpname.CodexResolve under config.toml's allocator parameters.
func codexRedispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	cp := naming.AgentOf[naming.PathPolicy[codex.CodexPolicy]](lk.Policy, codex.ID).For(sp.Snap.Ref.Path)
	set, label := cp.Inventory, cmp.Or(cp.InventorySource, "the inventory")
	if set == nil {
		set, label = cp.History, cmp.Or(cp.HistorySource, "the thread history")
	}
	if set == nil {
		return nil
	}
	var cur []mcpname.CodexTool
	for _, t := range set {
		if mcpname.CodexServerNameValid(t.Server) && cp.Config.Registers(t) && !slices.Contains(cur, t) {
			cur = append(cur, t)
		}
	}
	params := cp.Config.Params()
	alloc := mcpname.CodexAllocate(cur, params)
	ids := map[string]*store.Identity{}
	bad := map[string]bool{}
	for i, id := range sp.Snap.Identities {
		if id.CallID == "" {
			continue
		}
		if p := ids[id.CallID]; p != nil && (p.Server != id.Server || p.Tool != id.Tool) {
			bad[id.CallID] = true
		}
		ids[id.CallID] = &sp.Snap.Identities[i]
	}
	// call is one function_call: its name site, its namespace, and the decision that says
	// what fix does with it (the rewrite of either member, else the name's).
	type call struct {
		name   *store.Site
		ns     string
		hasNS  bool
		action rewrite.Decision
	}
	var calls []*call
	byGroup := map[string]*call{}
	for _, d := range sp.Decisions {
		s := d.Site
		if s.ReadOnly || !sent(s) || (s.Kind != store.SiteCall && s.Kind != store.SiteCompressed) {
			continue
		}
		key := s.Group
		var c *call
		if key != "" {
			c = byGroup[key]
		}
		if c == nil {
			c = &call{}
			calls = append(calls, c)
			if key != "" {
				byGroup[key] = c
			}
		}
		if s.Field == codex.FieldNamespace {
			if !s.Absent() {
				c.ns, c.hasNS = s.Name, true
			}
			if d.Action == rewrite.ActRewrite {
				c.action = d
			}
			continue
		}
		c.name = s
		if c.action.Site == nil || d.Action == rewrite.ActRewrite {
			c.action = d
		}
	}
	var col collector
	for _, c := range calls {
		if c.name == nil || c.name.Units != nil || (!c.hasNS && !mcpname.HasPrefix(c.name.Name) && !strings.Contains(c.name.Name, "__")) {
			continue
		}
		stored := mcpname.CodexName{Namespace: c.ns, Name: c.name.Name}
		var called *mcpname.CodexTool
		from := ""
		if id := ids[c.name.CallID]; id != nil && !bad[c.name.CallID] {
			called = &mcpname.CodexTool{Server: id.Server, Tool: id.Tool}
			from = fmt.Sprintf("invocation record of call %s, line %d", c.name.CallID, id.Loc.Line)
		}
		class, got := mcpname.CodexDispatchIn(stored, called, alloc)
		if !class.Finding() {
			continue
		}
		r := Redispatch{Store: sp.Snap.Ref.Path, Loc: c.name.Loc, Agent: string(codex.ID), Kind: string(c.name.Kind), JSONPath: c.name.Path,
			Stored: c.name.Name, Namespace: c.ns, Class: class.String(), Reaches: tools(got, codexTool), CalledFrom: from}
		if called != nil {
			t := codexTool(*called)
			r.Called = &t
		}
		how := fmt.Sprintf("namespaced lookup: the allocator (SHA-1 suffixes on colliding namespaces and names) names %s today %s / %s", toolList(r.Reaches), c.ns, c.name.Name)
		if !c.hasNS {
			how = fmt.Sprintf("flat lookup (no namespace stored): %s is the E4 model string, E5/E6 joined string or canonical flat name of %s under today's allocator", c.name.Name, toolList(r.Reaches))
		}
		if class == mcpname.DispatchSeveral {
			r.Rule = fmt.Sprintf("Codex: %s; %d tools match, which one answers depends on the wire", how, len(got))
		} else {
			var own string
			switch n, ok := alloc[*called]; {
			case ok:
				own = fmt.Sprintf("; %s itself is named %s / %s today", r.Called, n.Namespace, n.Name)
			case !mcpname.CodexServerNameValid(called.Server):
				own = fmt.Sprintf("; server key %q is not valid for Codex", called.Server)
			case !cp.Config.Registers(*called):
				own = fmt.Sprintf("; %s does not register %s (server disabled or tool filtered)", cp.Config.Path, r.Called)
			default:
				own = fmt.Sprintf("; %s is not in %s", r.Called, label)
			}
			if t := got[0]; t.Server != called.Server && mcpname.CodexSanitize(t.Server) == mcpname.CodexSanitize(called.Server) {
				own += fmt.Sprintf("; the keys %q and %q sanitize alike (every character outside [A-Za-z0-9_] becomes '_')", called.Server, t.Server)
			}
			r.Rule = fmt.Sprintf("Codex: %s (over %s); the call was %s%s", how, label, r.Called, own)
		}
		r.Fix = fixText(c.action, class)
		col.add(r)
	}
	return col.out
}

// claudeRedispatches checks each tool_use of a Claude Code session against the tools of
// --inventory / --discover (configuration order). The called identity: the one tool the
// release that wrote the line (its "version") named so; from 2.1.50 on, the first of several.
// Today's lookup: mcpname.ClaudeDispatch in the era of the current release (ClaudePolicy.Version,
// else the newest recorded).
func claudeRedispatches(sp *rewrite.StorePlan, lk *Lookup) []Redispatch {
	cp := naming.AgentOf[naming.PathPolicy[claude.ClaudePolicy]](lk.Policy, claude.ID).For(sp.Snap.Ref.Path)
	if cp.Tools == nil {
		return nil
	}
	version := cmp.Or(cp.Version, mcpname.ClaudeLatestVersion)
	now, err := mcpname.ClaudeEraOf(version)
	if err != nil {
		now = mcpname.ClaudeEraDedup
	}
	meta := claude.ClaudeMetaOf(sp.Snap)
	var col collector
	for _, d := range sp.Decisions {
		s := d.Site
		if s.Kind != store.SiteCall || s.ReadOnly || s.Absent() || !mcpname.HasPrefix(s.Name) {
			continue
		}
		var called *mcpname.ClaudeTool
		from := ""
		wrote := ""
		if meta != nil {
			wrote = meta.VersionAt(s.Loc.Line)
		}
		if e, err := mcpname.ClaudeEraOf(wrote); err == nil {
			ts := mcpname.ClaudeToolsNamed(e, s.Name, cp.Tools)
			switch {
			case len(ts) == 1:
				called, from = &ts[0], fmt.Sprintf("the only tool Claude Code %s (line %d) named so (%s era)", wrote, s.Loc.Line, e)
			case len(ts) > 1 && e >= mcpname.ClaudeEraDedup:
				called, from = &ts[0], fmt.Sprintf("the first of %d tools sharing the name, which answered in Claude Code %s (line %d)", len(ts), wrote, s.Loc.Line)
			}
		}
		class, got := mcpname.ClaudeDispatch(now, s.Name, called, cp.Tools)
		if !class.Finding() {
			continue
		}
		r := Redispatch{Store: sp.Snap.Ref.Path, Loc: s.Loc, Agent: string(claude.ID), Kind: string(s.Kind), JSONPath: s.Path,
			Stored: s.Name, Class: class.String(), Reaches: tools(got, claudeTool), CalledFrom: from}
		if called != nil {
			t := claudeTool(*called)
			r.Called = &t
		}
		if class == mcpname.DispatchOther && len(got) > 1 {
			r.Reaches = r.Reaches[:1]
			r.Candidates = tools(got, claudeTool)
		}
		names := "normalize maps every character outside [a-zA-Z0-9_-] of the server key and the tool to '_'"
		if class == mcpname.DispatchSeveral {
			r.Rule = fmt.Sprintf("Claude Code %s gives %d tools (%s) the same name %s (%s); the call cannot be attributed to one of them (the release that wrote it offered the name once per tool)", version, len(got), toolList(r.Reaches), s.Name, names)
		} else if len(got) > 1 {
			r.Rule = fmt.Sprintf("Claude Code %s gives %s the same name %s (%s), offers it once and the first configured answers: %s; the call was %s", version, strings.Join(strings.Split(toolList(r.Candidates), ", "), " and "), s.Name, names, r.Reaches[0], r.Called)
		} else {
			r.Rule = fmt.Sprintf("Claude Code %s names %s %s (%s); the call was %s", version, r.Reaches[0], s.Name, names, r.Called)
		}
		r.Fix = fixText(d, class)
		col.add(r)
	}
	return col.out
}

// qwenCache looks the names of one store up once each: a store repeats the same few names, and
// each lookup normalizes every tool of the inventory.
type qwenCache struct {
	tools []mcpname.QwenTool
	reg   map[string][]mcpname.QwenTool
	who   map[[2]string][]mcpname.QwenTool
}

func (q *qwenCache) resolve(name string) []mcpname.QwenTool {
	r, ok := q.reg[name]
	if !ok {
		r = mcpname.QwenResolve(name, q.tools)
		q.reg[name] = r
	}
	return r
}

func (q *qwenCache) callers(name, server string) []mcpname.QwenTool {
	k := [2]string{name, server}
	r, ok := q.who[k]
	if !ok {
		r = mcpname.QwenCallers(name, server, q.tools)
		q.who[k] = r
	}
	return r
}
