package copilot

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
)

// Tool is one raw MCP tool: the server key as configured and the tool name the server lists.
type Tool = mcpname.CopilotTool

// Release is what the rule model needs of one Copilot CLI release.
type Release struct {
	Version string `json:"version"`
	// Naming is the naming era (mcpname.CopilotEraOf): names and with them the tool part a
	// rule is compared with.
	Naming mcpname.CopilotEra `json:"naming"`
	// FilterRaw: --available-tools/--excluded-tools match "<server>/<raw tool>" as well as the
	// registered name (recorded with 1.0.102); false: the registered name only (1.0.40's
	// isToolEnabled). Releases between 1.0.40 and 1.0.102 were not recorded: from 1.0.102 on.
	FilterRaw bool `json:"filter_raw"`
	// Dispatch: every run of characters outside [a-zA-Z0-9_-] in a name the model returns
	// becomes "_" before the lookup (mcpname.CopilotDispatchName; from 0.0.420 on).
	Dispatch bool `json:"dispatch"`
}

var filterRawFrom = [3]int{1, 0, 102}

// ReleaseOf returns the Release of a version ("1.0.102"); an error wraps
// mcpname.ErrCopilotVersion.
func ReleaseOf(version string) (Release, error) {
	era, err := mcpname.CopilotEraOf(version)
	if err != nil {
		return Release{}, err
	}
	v, _ := mcpname.ParseCopilotVersion(version)
	return Release{Version: version, Naming: era, FilterRaw: mcpname.CompareClaudeVersions(v, filterRawFrom) >= 0,
		Dispatch: era != mcpname.CopilotEraRaw}, nil
}

// Registered is one configured tool as a release registers it (mcpname.CopilotRegister).
type Registered = mcpname.CopilotOffer

// Register names tools as rel registers them, in Copilot's order.
func Register(rel Release, tools []Tool) []Registered {
	return mcpname.CopilotRegister(rel.Naming, tools)
}

// toolPart is the tool part of name as the permission check sees it (1.0.40 ait:
// name.substring(S(server).length + 1); the raw key's length in the raw era).
func toolPart(rel Release, server, name string) string {
	prefix := server
	if rel.Naming != mcpname.CopilotEraRaw {
		prefix = mcpname.CopilotSanitize(server)
	}
	if len(prefix)+1 > len(name) {
		return ""
	}
	return name[len(prefix)+1:]
}

// Matches reports whether rule r matches the tool reg (as registered by rel) for its kind:
//
//   - a permission pattern (allow, deny, grant, skill): r.Server equals the server key exactly,
//     and, with a tool part, r.Tool equals the registered name's tool part (the sanitized tool
//     from 1.0.40 on; both cut to 64 with the name). 1.0.40's onMCP predicate; recorded.
//   - a filter entry (available, excluded): r.Text equals the registered name, or, with
//     rel.FilterRaw, "<server>/<raw tool>" (both recorded with 1.0.102).
//   - a custom agent's tools entry: lower-cased, "<server>/<raw tool>" or "<server>/*"
//     (1.0.40's PDn over namespacedName).
func Matches(rel Release, r Rule, reg Registered) bool {
	switch {
	case r.Kind.IsPermission():
		if r.Err != "" || r.Server != reg.Tool.Server {
			return false
		}
		return !r.HasTool || r.Tool == toolPart(rel, reg.Tool.Server, reg.Name)
	case r.Kind.IsFilter():
		return r.Text == reg.Name || rel.FilterRaw && r.Text == reg.Tool.Server+"/"+reg.Tool.Tool
	case r.Kind == KindAgentTool:
		e := strings.ToLower(r.Text)
		ns := strings.ToLower(reg.Tool.Server + "/" + reg.Tool.Tool)
		return e == ns || strings.HasSuffix(e, "/*") && strings.HasPrefix(ns, strings.TrimSuffix(e, "*"))
	}
	return false
}

// Matching returns the tools rule r matches under rel, in Copilot's order (shadowed tools
// included: a rule is compared with every registered name).
func Matching(rel Release, r Rule, tools []Tool) []Tool {
	var out []Tool
	for _, reg := range Register(rel, tools) {
		if Matches(rel, r, reg) {
			out = append(out, reg.Tool)
		}
	}
	return out
}

// Outcome is what happens to a tool (or a call) under a set of rules.
type Outcome string

// Outcomes (rules.tsv's words where it has them).
const (
	Ran         Outcome = "ran"          // offered, called, approved
	Denied      Outcome = "denied"       // a deny rule matched ("denied due to the following rules")
	NotApproved Outcome = "not approved" // no allow rule and no user to ask
	NotOffered  Outcome = "not offered"  // --available-tools / --excluded-tools keep it from the model
	Shadowed    Outcome = "shadowed"     // another tool answers to its name: never offered
	Unreachable Outcome = "unreachable"  // offered, but a call to it reaches another tool or none (1.0.39's dispatch rewrite)
	NoSuchTool  Outcome = "no such tool" // a call: no tool answers the dispatched name
)

// Setup is one invocation's inputs: the configured tools (config order), its rules, whether
// every tool is allowed (--allow-all-tools), and the tools the servers mark read-only
// (readOnlyHint: approved without a rule).
type Setup struct {
	Tools    []Tool
	Rules    []Rule
	AllowAll bool
	ReadOnly map[Tool]bool
}

// ToolResult is one configured tool's fate.
type ToolResult struct {
	Tool    Tool    `json:"tool"`
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// ShadowedBy: the tool that answers to Name (Shadowed). Reaches: the tool a call to Name
	// reaches instead (Unreachable; nil: none).
	ShadowedBy *Tool `json:"shadowed_by,omitempty"`
	Reaches    *Tool `json:"reaches,omitempty"`
	// Rules are the indexes (into Setup.Rules) of the rules that decided: the matching deny
	// rules (Denied), the allow rule that approved (Ran), the filter entries (NotOffered).
	Rules []int `json:"rules,omitempty"`
}

// Call is one call the model makes: to an offered name, dispatched under Called, reaching Tool
// (nil: no tool), with its outcome.
type Call struct {
	Name    string  `json:"name"`
	Called  string  `json:"called"`
	Tool    *Tool   `json:"tool,omitempty"`
	Outcome Outcome `json:"outcome"`
	Rules   []int   `json:"rules,omitempty"`
}

// Result is Evaluate's: per configured tool (in Copilot's order) and per call (one per offered
// name, in offer order, the way the recording's stand-in calls every offered tool once).
type Result struct {
	Tools []ToolResult `json:"tools"`
	Calls []Call       `json:"calls"`
}

// Evaluate is what rel does with s: which tools are offered (shadowing, then --available-tools,
// then --excluded-tools), where a call to each offered name goes (rel.Dispatch), and the
// permission of the tool it reaches (1.0.40's onMCP, in order: a matching deny denies; a
// read-only tool is approved; AllowAll approves; a matching allow or grant or skill entry
// approves; else not approved — nobody can be asked in a headless run). Rules outside the
// grammar and custom agent entries take no part.
func Evaluate(rel Release, s Setup) Result {
	regs := Register(rel, s.Tools)
	var available, excluded, perms []int
	for i, r := range s.Rules {
		switch {
		case r.Kind == KindAvailable:
			available = append(available, i)
		case r.Kind == KindExcluded:
			excluded = append(excluded, i)
		case r.Kind.IsPermission() && r.Err == "":
			perms = append(perms, i)
		}
	}
	matchAny := func(idx []int, reg Registered) []int {
		var out []int
		for _, i := range idx {
			if Matches(rel, s.Rules[i], reg) {
				out = append(out, i)
			}
		}
		return out
	}
	var res Result
	offered := map[string]Registered{}
	var order []string
	at := map[Tool]int{}
	for _, reg := range regs {
		tr := ToolResult{Tool: reg.Tool, Name: reg.Name}
		switch {
		case reg.Shadowed:
			tr.Outcome, tr.ShadowedBy = Shadowed, reg.ShadowedBy
		case len(available) > 0 && len(matchAny(available, reg)) == 0:
			tr.Outcome = NotOffered
		case len(matchAny(excluded, reg)) > 0:
			tr.Outcome, tr.Rules = NotOffered, matchAny(excluded, reg)
		default:
			offered[reg.Name] = reg
			order = append(order, reg.Name)
		}
		at[reg.Tool] = len(res.Tools)
		res.Tools = append(res.Tools, tr)
	}
	permission := func(reg Registered) (Outcome, []int) {
		if d := matchAny(perms, reg); hasKind(s.Rules, d, KindDeny) {
			return Denied, onlyKind(s.Rules, d, KindDeny)
		}
		if s.ReadOnly[reg.Tool] || s.AllowAll {
			return Ran, nil
		}
		if a := matchAny(perms, reg); len(a) > 0 {
			return Ran, a[:1]
		}
		return NotApproved, nil
	}
	for _, name := range order {
		c := Call{Name: name, Called: name}
		if rel.Dispatch {
			c.Called = mcpname.CopilotDispatchName(rel.Naming, name)
		}
		target, ok := offered[c.Called]
		if !ok {
			c.Outcome = NoSuchTool
		} else {
			t := target.Tool
			c.Tool = &t
			c.Outcome, c.Rules = permission(target)
		}
		res.Calls = append(res.Calls, c)
		own := &res.Tools[at[offered[name].Tool]]
		if c.Tool != nil && *c.Tool == own.Tool {
			own.Outcome, own.Rules = c.Outcome, c.Rules
		} else {
			own.Outcome, own.Reaches = Unreachable, c.Tool
		}
	}
	return res
}

func hasKind(rules []Rule, idx []int, k Kind) bool { return len(onlyKind(rules, idx, k)) > 0 }

func onlyKind(rules []Rule, idx []int, k Kind) []int {
	var out []int
	for _, i := range idx {
		if rules[i].Kind == k {
			out = append(out, i)
		}
	}
	return out
}

// Meant returns the configured tools a permission pattern with a tool part was written for,
// in any release's spelling: the tools of its server whose raw name is the tool part, or
// whose tool part in some naming era is (a rule written for 1.0.39's "literature.search_pubmed"
// or 1.0.102's "literature-search_pubmed" means lit/literature.search_pubmed). A filter entry
// means the tools whose name in some era, or "<server>/<raw tool>", it is. nil when none.
func Meant(r Rule, tools []Tool) []Tool {
	seen := map[Tool]bool{}
	var out []Tool
	add := func(t Tool) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, e := range mcpname.CopilotEras {
		rel := Release{Naming: e, FilterRaw: true}
		for _, reg := range mcpname.CopilotRegister(e, tools) {
			switch {
			case r.Kind.IsPermission() && r.Err == "" && r.HasTool && r.Server == reg.Tool.Server &&
				(r.Tool == reg.Tool.Tool || r.Tool == toolPart(rel, reg.Tool.Server, reg.Name)):
				add(reg.Tool)
			case r.Kind.IsFilter() && Matches(rel, r, reg):
				add(reg.Tool)
			case r.Kind == KindAgentTool && (Matches(rel, r, reg) || r.Text == reg.Name):
				add(reg.Tool)
			}
		}
	}
	return out
}

// Lost reports whether rule r is written for tools (meant: Meant) but matches none of them
// under rel: a deny that does not deny, an allow that never allows, a filter that filters
// nothing. A rule that matches nothing and was meant for nothing is not lost (it names no
// configured tool); a rule without a tool part never is.
func Lost(rel Release, r Rule, tools []Tool) (meant []Tool, lost bool) {
	meant = Meant(r, tools)
	if len(meant) == 0 {
		return nil, false
	}
	for _, t := range Matching(rel, r, tools) {
		for _, m := range meant {
			if t == m {
				return meant, false
			}
		}
	}
	return meant, true
}

// Edit is one byte-exact replacement in a file: the bytes [Span.Start, Span.End) are Old and
// become New; every other byte stays.
type Edit struct {
	File string `json:"file"`
	Span Span   `json:"span"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// RewritePlan is what the rule fix does with one rule: the tool it is for, the tool part that
// matches it under the release, and the edit, or why the rule is held back (Held) or needs
// nothing (OK).
type RewritePlan struct {
	Rule    Rule   `json:"rule"`
	Meant   *Tool  `json:"meant,omitempty"`
	NewTool string `json:"new_tool,omitempty"`
	Edit    *Edit  `json:"edit,omitempty"`
	Held    string `json:"held,omitempty"`
	OK      bool   `json:"ok,omitempty"`
}

// PlanRewrite plans the migration of a permission pattern's tool part (flags, grants, skills)
// to the spelling that matches the same raw tool under rel: server part kept as configured
// (Copilot compares it with the key as written), tool part = the registered name's tool part.
// src is the file the rule was read from (its bytes at r.ToolSpan must still be the tool part).
// Held back, with the reason: a rule that matches its tool already (OK), one meant for no
// configured tool or for several, one whose new tool part would match more than that one tool
// (two tools sanitize alike: the rule would then cover both), one whose tool part is written
// with quotes or escapes (no ToolSpan), or whose bytes changed.
func PlanRewrite(rel Release, r Rule, tools []Tool, src []byte) RewritePlan {
	p := RewritePlan{Rule: r}
	if !r.Kind.IsPermission() || r.Err != "" || !r.HasTool {
		p.Held = "not a server(tool) rule"
		return p
	}
	meant, lost := Lost(rel, r, tools)
	switch {
	case len(meant) == 0:
		p.Held = "it names no configured tool (pass the MCP config or an inventory naming its server's tools)"
		return p
	case !lost:
		p.OK = true
		return p
	case len(meant) > 1:
		var ts []string
		for _, t := range meant {
			ts = append(ts, t.Server+"/"+t.Tool)
		}
		p.Held = "it was written for several tools (" + strings.Join(ts, ", ") + "): which one is meant is not known"
		return p
	}
	t := meant[0]
	p.Meant = &t
	var reg Registered
	for _, g := range Register(rel, tools) {
		if g.Tool == t {
			reg = g
		}
	}
	p.NewTool = toolPart(rel, t.Server, reg.Name)
	nr := r
	nr.Tool, nr.Text = p.NewTool, r.Server+"("+p.NewTool+")"
	if m := Matching(rel, nr, tools); len(m) != 1 {
		var ts []string
		for _, o := range m {
			ts = append(ts, o.Server+"/"+o.Tool)
		}
		p.Held = fmt.Sprintf("%s would match %d tools (%s): they sanitize alike; kept as written", nr.Text, len(m), strings.Join(ts, ", "))
		return p
	}
	if strings.ContainsAny(p.NewTool, ")") {
		p.Held = "the new tool part holds a character the rule grammar does not allow"
		return p
	}
	if r.ToolSpan == nil {
		p.Held = "its tool part is written with quotes, escapes or a line continuation inside: not rewritten in place"
		return p
	}
	sp := *r.ToolSpan
	if sp.End > len(src) || string(src[sp.Start:sp.End]) != r.Tool {
		p.Held = "the file changed since the rule was read"
		return p
	}
	p.Edit = &Edit{File: r.Pos.File, Span: sp, Old: r.Tool, New: p.NewTool}
	return p
}
