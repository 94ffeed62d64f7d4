package qwen

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/permission"
)

// ErrUnknownAgent is returned (wrapped) by Run when Input.Agent names no loaded subagent.
var ErrUnknownAgent = errors.New("unknown subagent")

// Decision is a tool's decision (audit.md "What is computed"): permission.Evaluate's
// allow / ask / deny / default, or one of the registration gates that remove the tool first.
type Decision string

// Decisions, in the order the layers are checked.
const (
	// DecisionExcluded: the tool is never discovered (mcp.allowed / mcp.excluded on its
	// server key, or its server's includeTools / excludeTools).
	DecisionExcluded Decision = "excluded"
	// DecisionDisabled: tools.disabled keeps the tool out of the registry.
	DecisionDisabled Decision = "disabled"
	// DecisionDisallowed: the subagent making the call hides the tool (disallowedTools).
	DecisionDisallowed Decision = "disallowed"
	DecisionDeny       Decision = "deny"
	DecisionAsk        Decision = "ask"
	DecisionAllow      Decision = "allow"
	// DecisionDefault: no rule applied; the server's trust decides (ran when trusted, else
	// ask in default mode).
	DecisionDefault Decision = "default"
)

// Input is everything Run evaluates. All of it is plain values; Run reads no file.
type Input struct {
	// Settings is the effective configuration (settings.Merge of the loaded files); nil
	// means no settings.
	Settings *settings.Merged
	// Agents are the loaded subagent files: their disallowedTools are rules of the audit and
	// their mcpServers keys mark agent-local servers.
	Agents []*settings.Agent
	// Inventory is the MCP tools; nil means none.
	Inventory *mcpinventory.Inventory
	// Mode is the approval mode the outcomes are computed in; "" means permission.ModeDefault
	// (audit.md §2: "the outcome in default approval mode").
	Mode permission.Mode
	// Agent, when not empty, is the front matter name of the subagent whose calls the tool
	// decisions describe (its disallowedTools hide tools). The first agent of that name in
	// Agents is used, as Qwen Code prefers the project level.
	Agent string
}

// Verdict is a tool's decision at one point in time.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Rule is the index in Report.Rules of the entry that decided; -1 when none did (a
	// default decision, or an allowlist the tool is not on: see Note).
	Rule int `json:"rule"`
	// Note explains a decision no single entry made ("server not in mcp.allowed", "tool not
	// in includeTools").
	Note string `json:"note,omitempty"`
	// Refused lists (indices in Report.Rules) the allow rules that matched but were refused
	// by the registry guard before the decision was reached. Always empty before the rename.
	Refused []int `json:"refused,omitempty"`
	// Outcome is ran, ask or block in the report's approval mode.
	Outcome permission.Verdict `json:"outcome"`
}

// Tool is one inventory tool with its derived names and decisions.
type Tool struct {
	// Tool holds the identity, raw name, registered name, legacy name and aliases
	// (qwen-reference.md §1.6).
	permission.Tool
	// Source says where the inventory entry came from (file, discovered, inferred).
	Source mcpinventory.Source
	// Trusted is the server's trust flag (settings when the server is configured there,
	// else the inventory).
	Trusted bool
	// AgentLocal marks a tool of a server declared only in a subagent's mcpServers: it is not
	// in the session registry.
	AgentLocal bool
	// Now and Before are the tool's decisions after and before the rename.
	Now, Before Verdict
}

// Report is the result of Run.
type Report struct {
	Mode permission.Mode
	// Agent is Input.Agent.
	Agent string
	// Rules are the entries in effect, each with its own origin: the settings entries in
	// settings.Merged.Rules order (tools.core left out), then every agent's disallowedTools.
	Rules []settings.Rule
	// Shadowed are settings entries that are in a file but not in effect (Merged.Shadowed).
	Shadowed []settings.Rule
	// Tools in inventory order (server key, then raw tool name).
	Tools []Tool
	a     *auditor
	// the producer context and live registry of each tool (NowMatch)
	ctxs []permission.Context
	regs [][]permission.Identity
}

// auditor holds the evaluation state of one Run.
type auditor struct {
	in     Input
	m      *settings.Merged
	mode   permission.Mode
	agent  *settings.Agent
	rep    *Report
	origin map[settings.Origin]int // origin -> index in rep.Rules
	parsed []permission.Rule       // parsed rep.Rules (allow/ask/deny kinds)

	rules   permission.Rules // the merged lists, aligned with m.Allow/Ask/Deny
	servers map[string]settings.MCPServer
	local   map[string]bool // agent-local server keys
	reg     []permission.Identity
	inReg   map[permission.Identity]bool
}

// Run evaluates every (rule, tool) pair and every tool's decision now and before. It fails
// only when Input.Agent names no loaded subagent (ErrUnknownAgent).
func Run(in Input) (*Report, error) {
	a := &auditor{in: in, m: in.Settings, mode: in.Mode, origin: map[settings.Origin]int{}}
	if a.m == nil {
		a.m = settings.Merge()
	}
	if a.mode == "" {
		a.mode = permission.ModeDefault
	}
	if in.Agent != "" {
		for _, ag := range in.Agents {
			if ag != nil && ag.Name == in.Agent {
				a.agent = ag
				break
			}
		}
		if a.agent == nil {
			return nil, fmt.Errorf("audit as subagent %q: %w", in.Agent, ErrUnknownAgent)
		}
	}
	a.rep = &Report{Mode: a.mode, Agent: in.Agent, Shadowed: a.m.Shadowed}
	a.collectRules()
	a.collectTools()
	for i := range a.rep.Tools {
		a.decide(&a.rep.Tools[i])
	}
	a.rep.a = a
	return a.rep, nil
}

func (a *auditor) addRule(r settings.Rule) {
	a.origin[r.Origin] = len(a.rep.Rules)
	a.rep.Rules = append(a.rep.Rules, r)
	var p permission.Rule
	switch r.Kind {
	case settings.KindAllow, settings.KindAsk, settings.KindDeny:
		p = permission.ParseRule(r.Expanded)
	}
	a.parsed = append(a.parsed, p)
}

func (a *auditor) collectRules() {
	for _, r := range a.m.Rules() {
		if r.Kind != settings.KindCore {
			a.addRule(r)
		}
	}
	for _, ag := range a.in.Agents {
		if ag == nil {
			continue
		}
		for _, r := range ag.DisallowedTools {
			a.addRule(r)
		}
	}
	// The merged lists in evaluation order; blank entries are kept (they never match) so
	// indices stay aligned with the MergedRule lists.
	parse := func(list []settings.MergedRule) []permission.Rule {
		out := make([]permission.Rule, len(list))
		for i, mr := range list {
			out[i] = permission.ParseRule(mr.Text)
		}
		return out
	}
	a.rules = permission.Rules{Allow: parse(a.m.Allow), Ask: parse(a.m.Ask), Deny: parse(a.m.Deny)}
}

func (a *auditor) collectTools() {
	a.servers = map[string]settings.MCPServer{}
	for _, s := range a.m.MCPServers {
		a.servers[s.Key] = s
	}
	a.local = map[string]bool{}
	for _, ag := range a.in.Agents {
		if ag == nil {
			continue
		}
		for _, k := range ag.MCPServers {
			if _, ok := a.servers[k]; !ok {
				a.local[k] = true
			}
		}
	}
	inv := a.in.Inventory
	if inv == nil {
		inv = mcpinventory.New()
	}
	for _, k := range inv.Keys() {
		s := inv.Servers[k]
		trusted := s.Trust
		if conf, ok := a.servers[k]; ok {
			trusted = conf.Trust
		}
		for _, t := range s.Tools {
			a.rep.Tools = append(a.rep.Tools, Tool{Tool: permission.NewTool(k, t.Name), Source: t.Source,
				Trusted: trusted, AgentLocal: a.local[k]})
		}
	}
	// The live session registry: every tool that gets registered (not excluded, not
	// disabled, not agent-local).
	a.inReg = map[permission.Identity]bool{}
	for i := range a.rep.Tools {
		t := &a.rep.Tools[i]
		if t.AgentLocal || a.excluded(t) != nil || a.disabledNow(t) != nil {
			continue
		}
		a.reg = append(a.reg, t.Identity)
		a.inReg[t.Identity] = true
	}
	if a.reg == nil {
		a.reg = []permission.Identity{}
	}
}

// registry returns the live registry a decision about t reads: the session registry, plus t
// itself when a registration gate removed it (so pairs of removed tools still say what the
// rule would do if the tool were registered). An agent-local tool is never added: the
// session registry does not see it even when the subagent calls it (R26-1).
func (a *auditor) registry(t *Tool) []permission.Identity {
	if a.inReg[t.Identity] || t.AgentLocal {
		return a.reg
	}
	return append(slices.Clip(a.reg), t.Identity)
}

// listSet reports whether some effective file sets the list (an empty list is set: Qwen
// Code then lets nothing through).
func (a *auditor) listSet(file, v2Key, v1Key string) bool {
	for _, f := range a.m.Files {
		if file != "" && f.Path != file {
			continue
		}
		if slices.Contains(f.Lists, v2Key) || (v1Key != "" && f.V1 && slices.Contains(f.Lists, v1Key)) {
			return true
		}
	}
	return false
}

// excluded returns the excluded verdict of t (equal now and before), or nil.
func (a *auditor) excluded(t *Tool) *Verdict {
	key, name := t.Identity.Server, t.Identity.Tool
	for _, r := range a.m.MCPExcluded {
		if permission.MatchesServerPattern(key, r.Expanded) {
			return &Verdict{Decision: DecisionExcluded, Rule: a.origin[r.Origin]}
		}
	}
	if a.listSet("", "mcp.allowed", "allowMCPServers") {
		var globs []string
		for _, r := range a.m.MCPAllowed {
			globs = append(globs, r.Expanded)
		}
		if !permission.MatchesAnyServerPattern(key, globs) {
			return &Verdict{Decision: DecisionExcluded, Rule: -1, Note: "server not in mcp.allowed"}
		}
	}
	conf, ok := a.servers[key]
	if !ok {
		return nil
	}
	for _, r := range conf.ExcludeTools {
		if r.Expanded == name {
			return &Verdict{Decision: DecisionExcluded, Rule: a.origin[r.Origin]}
		}
	}
	if !a.listSet(conf.Origin.File, settings.ServerKeyPath(key)+".includeTools", "") {
		return nil
	}
	for _, r := range conf.IncludeTools {
		if r.Expanded == name || strings.HasPrefix(r.Expanded, name+"(") {
			return nil
		}
	}
	return &Verdict{Decision: DecisionExcluded, Rule: -1, Note: "tool not in includeTools"}
}

// disabledNow returns the tools.disabled verdict of t now (IsToolDisabled), or nil.
func (a *auditor) disabledNow(t *Tool) *Verdict {
	for _, mr := range a.m.Disabled {
		if permission.IsToolDisabled([]string{mr.Text}, t.Name, t.DisabledToolAliases) {
			return &Verdict{Decision: DecisionDisabled, Rule: a.origin[mr.Origins[0].Origin]}
		}
	}
	return nil
}

// disabledBefore returns the tools.disabled verdict of t before the rename (an entry equal
// to the legacy name), or nil.
func (a *auditor) disabledBefore(t *Tool) *Verdict {
	for _, mr := range a.m.Disabled {
		if mr.Text == t.Legacy {
			return &Verdict{Decision: DecisionDisabled, Rule: a.origin[mr.Origins[0].Origin]}
		}
	}
	return nil
}

// decide computes t.Now (through permission.Decide) and t.Before.
func (a *auditor) decide(t *Tool) {
	ctx := t.Context(permission.ContextProducer)
	gate := a.excluded(t)
	if gate == nil {
		gate = a.disabledNow(t)
	}
	call := permission.Call{Context: ctx, Trusted: t.Trusted, Mode: a.mode, Rules: a.rules,
		Registry: a.registry(t), Disabled: gate != nil}
	var disallowed []settings.Rule
	if a.agent != nil {
		disallowed = a.agent.DisallowedTools
		for _, r := range disallowed {
			call.DisallowedTools = append(call.DisallowedTools, r.Expanded)
		}
	}
	out := permission.Decide(call)
	switch out.Reason {
	case permission.ReasonDisabled:
		t.Now = *gate
	case permission.ReasonDisallowed:
		t.Now = Verdict{Decision: DecisionDisallowed, Rule: -1}
		for _, r := range disallowed {
			if permission.MatchesToolPattern(r.Expanded, ctx.ToolName, ctx.Aliases, ctx.Identity) {
				t.Now.Rule = a.origin[r.Origin]
				break
			}
		}
	default:
		t.Now = Verdict{Decision: Decision(out.Evaluation.Decision), Rule: a.evaluatedRule(out.Evaluation.Rule)}
		for i := range out.Evaluation.Refused {
			t.Now.Refused = append(t.Now.Refused, a.refusedRule(out.Evaluation.Refused[i]))
		}
	}
	t.Now.Outcome = out.Verdict

	t.Before = a.decideBefore(t, disallowed)
	t.Before.Outcome = Outcome(t.Before.Decision, t.Trusted, a.mode)
}

// decideBefore is the legacy-era layering: the same gates and lists, every match replaced by
// its "before" value, no registry guard.
func (a *auditor) decideBefore(t *Tool, disallowed []settings.Rule) Verdict {
	if v := a.excluded(t); v != nil {
		return *v
	}
	if v := a.disabledBefore(t); v != nil {
		return *v
	}
	for _, r := range disallowed {
		if LegacyMatch(strings.TrimSpace(r.Expanded), t.Legacy) {
			return Verdict{Decision: DecisionDisallowed, Rule: a.origin[r.Origin]}
		}
	}
	for _, l := range []struct {
		list []settings.MergedRule
		d    Decision
	}{{a.m.Deny, DecisionDeny}, {a.m.Ask, DecisionAsk}, {a.m.Allow, DecisionAllow}} {
		for _, mr := range l.list {
			if legacyRuleMatch(mr.Text, t.Legacy) {
				return Verdict{Decision: l.d, Rule: a.origin[mr.Origins[0].Origin]}
			}
		}
	}
	return Verdict{Decision: DecisionDefault, Rule: -1}
}

// Outcome is the verdict of a decision in an approval mode, the L3–L5 layers of
// qwen-reference.md §2.2 as permission.Decide applies them: the gates and deny block; allow
// runs; default runs when the server is trusted; otherwise YOLO runs, plan blocks and the
// other modes ask.
func Outcome(d Decision, trusted bool, mode permission.Mode) permission.Verdict {
	switch d {
	case DecisionExcluded, DecisionDisabled, DecisionDisallowed, DecisionDeny:
		return permission.VerdictBlock
	case DecisionAllow:
		return permission.VerdictRan
	case DecisionDefault:
		if trusted {
			return permission.VerdictRan
		}
	}
	switch mode {
	case permission.ModeYolo:
		return permission.VerdictRan
	case permission.ModePlan:
		return permission.VerdictBlock
	}
	return permission.VerdictAsk
}

// evaluatedRule maps a rule pointer of permission.Evaluate back to its entry in rep.Rules.
func (a *auditor) evaluatedRule(p *permission.Rule) int {
	if p == nil {
		return -1
	}
	for _, l := range []struct {
		parsed []permission.Rule
		merged []settings.MergedRule
	}{{a.rules.Deny, a.m.Deny}, {a.rules.Ask, a.m.Ask}, {a.rules.Allow, a.m.Allow}} {
		for i := range l.parsed {
			if &l.parsed[i] == p {
				return a.origin[l.merged[i].Origins[0].Origin]
			}
		}
	}
	return -1
}

// refusedRule maps a refused allow rule (a copy) back to its entry in rep.Rules.
func (a *auditor) refusedRule(r permission.Rule) int {
	for i, p := range a.rules.Allow {
		if p.Raw == r.Raw {
			return a.origin[a.m.Allow[i].Origins[0].Origin]
		}
	}
	return -1
}

// now returns the "now" value of rule entry i for tool t.
func (a *auditor) now(i int, t *Tool, ctx permission.Context, reg []permission.Identity) permission.Match {
	r := a.rep.Rules[i]
	ok := false
	switch r.Kind {
	case settings.KindAllow:
		return permission.RuleMatch(permission.BehaviorAllow, a.parsed[i], ctx, reg)
	case settings.KindAsk:
		return permission.RuleMatch(permission.BehaviorAsk, a.parsed[i], ctx, reg)
	case settings.KindDeny:
		return permission.RuleMatch(permission.BehaviorDeny, a.parsed[i], ctx, reg)
	case settings.KindDisallowed:
		ok = permission.MatchesToolPattern(r.Expanded, ctx.ToolName, ctx.Aliases, ctx.Identity)
	case settings.KindDisabled:
		ok = permission.IsToolDisabled([]string{r.Expanded}, t.Name, t.DisabledToolAliases)
	case settings.KindIncludeTools:
		name := t.Identity.Tool
		ok = r.Server == t.Identity.Server && (r.Expanded == name || strings.HasPrefix(r.Expanded, name+"("))
	case settings.KindExcludeTools:
		ok = r.Server == t.Identity.Server && r.Expanded == t.Identity.Tool
	case settings.KindMCPAllowed, settings.KindMCPExcluded:
		ok = permission.MatchesServerPattern(t.Identity.Server, r.Expanded)
	}
	if ok {
		return permission.Matched
	}
	return permission.NoMatch
}

// NowMatch is the "now" value of rule i (Report.Rules) for tool j (Report.Tools).
func (r *Report) NowMatch(i, j int) permission.Match {
	if r.ctxs == nil {
		r.ctxs = make([]permission.Context, len(r.Tools))
		r.regs = make([][]permission.Identity, len(r.Tools))
		for k := range r.Tools {
			r.ctxs[k] = r.Tools[k].Context(permission.ContextProducer)
			r.regs[k] = r.a.registry(&r.Tools[k])
		}
	}
	return r.a.now(i, &r.Tools[j], r.ctxs[j], r.regs[j])
}

// BeforeMatch is the "before" value of rule i for tool j.
func (r *Report) BeforeMatch(i, j int) permission.Match {
	return before(r.Rules[i], &r.Tools[j], r.NowMatch(i, j))
}
