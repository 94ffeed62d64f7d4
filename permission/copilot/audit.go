package copilot

import (
	"fmt"

	"github.com/sessionfix/sessionfix/permission/rules"
)

// Copilot CLI on the shared rule-audit layer (permission/rules): the rules found (flags of every
// invocation, persisted grants, custom agents' tools, skills' allowed-tools) and the configured
// tools under two releases become one rules.Evaluation.

// Words are Copilot CLI's words for the audit's values (rules.tsv's outcomes).
var Words = rules.Words{
	Match:   [3]string{"no", "match", "invalid"},
	Outcome: [5]string{"unknown", "ran", "not approved", "denied", "not offered"},
}

// AuditInput is what AuditEvaluation evaluates: the configured tools in Copilot's order, every
// rule found, and whether some invocation allows every tool (--allow-all-tools, --yolo).
type AuditInput struct {
	Tools    []Tool
	Rules    []Rule
	AllowAll bool
}

// AuditEvaluation evaluates in under now and before. Each pair matches as Matches says at that
// release (a rule outside the grammar is never applied: "invalid"); each tool's outcome is
// Evaluate's with every rule found taken together (a deny found anywhere denies, AllowAll when
// any invocation allows every tool). Findings: a permission pattern whose tool part names a
// configured tool but matches none under now (Lost: "never-matches"), a tool another one
// shadows now ("shadowed"), a rule outside the grammar ("invalid-rule").
func AuditEvaluation(in AuditInput, now, before Release) rules.Evaluation {
	ev := rules.Evaluation{}
	seen := map[[2]string]int{}
	for _, r := range in.Rules {
		ar := auditRule(r)
		k := [2]string{ar.File, ar.Key}
		ar.Index = seen[k]
		seen[k]++
		ev.Rules = append(ev.Rules, ar)
	}
	for _, t := range in.Tools {
		ev.Tools = append(ev.Tools, rules.ToolInfo{Tool: rules.Tool{Server: t.Server, Tool: t.Tool}})
	}
	pn, pb := newPoint(now, in), newPoint(before, in)
	ev.Now, ev.Before = pn, pb
	for i, r := range in.Rules {
		switch {
		case r.Err != "":
			ev.Findings = append(ev.Findings, rules.Finding{Class: "invalid-rule", Level: "error", Rule: i, Tool: -1,
				Message: fmt.Sprintf("%s %q: %s: Copilot CLI stops with \"Invalid rule format\"", r.Kind, r.Text, r.Err)})
		case r.Kind.IsPermission() && r.HasTool:
			if meant, lost := Lost(now, r, in.Tools); lost {
				ev.Findings = append(ev.Findings, rules.Finding{Class: "never-matches", Level: "error", Rule: i, Tool: toolIndex(in.Tools, meant[0]),
					Message: fmt.Sprintf("%s %q names %s/%s but its tool part matches no tool under %s (it compares the sanitized tool part): it never applies", r.Kind, r.Text, meant[0].Server, meant[0].Tool, now.Version)})
			}
		}
	}
	for j, tr := range pn.res.Tools {
		if tr.Outcome == Shadowed && tr.ShadowedBy != nil {
			ev.Findings = append(ev.Findings, rules.Finding{Class: "shadowed", Level: "warning", Rule: -1, Tool: j,
				Message: fmt.Sprintf("%s/%s is not offered under %s: %s/%s registers the same name %s", tr.Tool.Server, tr.Tool.Tool, now.Version, tr.ShadowedBy.Server, tr.ShadowedBy.Tool, tr.Name)})
		}
	}
	return ev
}

func toolIndex(tools []Tool, t Tool) int {
	for i, o := range tools {
		if o == t {
			return i
		}
	}
	return -1
}

// auditRule is a rule as the engine lists it: its file and place, the flag or list holding it
// as the key ("--deny-tool", a grant's "location /src"), its index among that file's rules of that key. A deny and an --excluded-tools entry
// restrict; the others grant (an --available-tools entry keeps its tool offered).
func auditRule(r Rule) rules.Rule {
	out := rules.Rule{File: r.Pos.File, Scope: r.Source, Key: string(r.Kind), Line: r.Pos.Line, Column: r.Pos.Col,
		Text: r.Text, Kind: string(r.Kind), Ignored: r.Err, Effect: rules.Grants}
	switch {
	case r.Source == SourceFlags:
		out.Key = "--" + string(r.Kind)
	case r.Where != "":
		out.Key = r.Where
	}
	if r.Kind == KindDeny || r.Kind == KindExcluded {
		out.Effect = rules.Restricts
	}
	return out
}

// point is one release's answers (rules.Semantics).
type point struct {
	rel   Release
	in    AuditInput
	regs  map[Tool]Registered
	res   Result
	byTol map[Tool]int
}

func newPoint(rel Release, in AuditInput) *point {
	p := &point{rel: rel, in: in, regs: map[Tool]Registered{}, byTol: map[Tool]int{}}
	for _, reg := range Register(rel, in.Tools) {
		p.regs[reg.Tool] = reg
	}
	p.res = Evaluate(rel, Setup{Tools: in.Tools, Rules: in.Rules, AllowAll: in.AllowAll})
	for i, tr := range p.res.Tools {
		p.byTol[tr.Tool] = i
	}
	return p
}

// Label is the release.
func (p *point) Label() string { return p.rel.Version }

// Match: Matched when the rule matches the tool's registered name (or raw name, for the kinds
// that compare it) under the release; a rule outside the grammar names nothing.
func (p *point) Match(rule, tool int) rules.Match {
	r, t := p.in.Rules[rule], p.in.Tools[tool]
	if r.Err != "" {
		return rules.No
	}
	if Matches(p.rel, r, p.regs[t]) {
		return rules.Matched
	}
	return rules.No
}

// Decide is the release's outcome for the tool.
func (p *point) Decide(tool int) rules.Verdict {
	t := p.in.Tools[tool]
	i, ok := p.byTol[t]
	if !ok {
		return rules.Verdict{Rule: -1}
	}
	tr := p.res.Tools[i]
	v := rules.Verdict{Name: tr.Name, Decision: string(tr.Outcome), Rule: -1}
	if len(tr.Rules) > 0 {
		v.Rule = tr.Rules[0]
	}
	switch tr.Outcome {
	case Ran:
		v.Outcome = rules.Ran
		if v.Rule < 0 {
			v.Note = "every tool allowed (--allow-all-tools) or read-only"
		}
	case Denied:
		v.Outcome = rules.Block
	case NotApproved:
		v.Outcome, v.Note = rules.Ask, "no allow rule matches: a headless run refuses it"
	case NotOffered:
		v.Outcome = rules.Hidden
	case Shadowed:
		v.Outcome = rules.Hidden
		if tr.ShadowedBy != nil {
			v.Note = "shadowed by " + tr.ShadowedBy.Server + "/" + tr.ShadowedBy.Tool
			v.SharedWith = []rules.Tool{{Server: tr.ShadowedBy.Server, Tool: tr.ShadowedBy.Tool}}
		}
	case Unreachable:
		v.Outcome, v.Note = rules.Block, "offered, but a call to its name reaches another tool or none"
		if tr.Reaches != nil {
			v.Note = "offered, but a call to its name reaches " + tr.Reaches.Server + "/" + tr.Reaches.Tool
		}
	}
	return v
}
