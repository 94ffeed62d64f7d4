package gemini

import (
	"fmt"

	"github.com/sessionfix/sessionfix/permission/rules"
)

// Gemini CLI on the shared rule-audit layer (permission/rules): the same rule files and tools
// evaluated under two releases (now, before) become one rules.Evaluation whose Semantics answer
// from Evaluate's results.

// Words are Gemini CLI's words for the audit's values (the recording's outcomes).
var Words = rules.Words{
	Match:   [3]string{"no", "match", "refused"},
	Outcome: [5]string{"unknown", "ran", "ask", "denied", "hidden"},
}

// AuditEvaluation evaluates c under now and before (c.Release is replaced) and returns the
// evaluation the shared engine lays out: every input rule (in input order), the tools in
// c.Tools' order, the two points, and the findings of the now release. A rule the now release
// does not apply but that matched the tool before is "not applied" now (refused), as is one
// not applied before that matches now. When before is older than now, PlanMigration's plan is
// a finding per rule it concerns: "rewrite" (note: the spelling that matches the same raw tools
// under now) or "rewrite-held" (warning: why no spelling can; never widened).
func AuditEvaluation(c Config, now, before Release) rules.Evaluation {
	cn, cb := c, c
	cn.Release, cb.Release = now, before
	rn, rb := Evaluate(cn), Evaluate(cb)
	ev := rules.Evaluation{}
	index := map[string]int{}
	for i, rr := range rn.Rules {
		index[rr.Ref.ID] = i
		ev.Rules = append(ev.Rules, auditRule(rr))
	}
	for _, t := range c.Tools {
		ev.Tools = append(ev.Tools, rules.ToolInfo{Tool: rules.Tool{Server: t.Server, Tool: t.Name}})
	}
	pn, pb := newPoint(rn, c.Tools, index, len(rn.Rules)), newPoint(rb, c.Tools, index, len(rn.Rules))
	pn.other, pb.other = pb, pn
	ev.Now, ev.Before = pn, pb
	for _, f := range rn.Findings {
		ev.Findings = append(ev.Findings, auditFinding(f, index))
	}
	if before.AtLeast(now.V) {
		return ev
	}
	for _, rw := range PlanMigration(Migration{From: before, To: now, Mode: c.Mode, Interactive: c.Interactive, Settings: c.Settings, Policies: c.Policies, Tools: c.Tools}) {
		i, ok := index[rw.Rule.ID]
		if !ok {
			continue
		}
		f := rules.Finding{Class: "rewrite", Level: "note", Rule: i, Tool: -1}
		switch {
		case rw.Held:
			f.Class, f.Level = "rewrite-held", "warning"
			f.Message = fmt.Sprintf("%s (%s) means %s as written for %s and cannot be rewritten for %s: %s", rw.Old, rw.Rule.Pos, orNothing(rw.Intended), before, now, rw.Why)
		default:
			f.Message = fmt.Sprintf("%s (%s) matches %s under %s as it did under %s when written %s (PlanMigration's byte-exact rewrite)", rw.Old, rw.Rule.Pos, orNothing(rw.After), now, before, rw.New)
		}
		ev.Findings = append(ev.Findings, f)
	}
	return ev
}

// auditRule is an input rule as the engine lists it: a settings entry by its value (its list is
// the key), a policy rule by its text ("mcpName = …, toolName = …"; key "rule", its index in the
// file). A rule that is not an allow restricts (deny, ask_user, and server filters hide).
func auditRule(rr *RuleResult) rules.Rule {
	ref := rr.Ref
	r := rules.Rule{File: ref.Pos.File, Scope: string(ref.Scope), Line: ref.Pos.Line, Column: ref.Pos.Col, Text: ref.Text,
		Kind: string(ref.Kind), Effect: rules.Grants}
	switch {
	case ref.Policy != nil:
		r.Key, r.Index = "rule", ref.Policy.Index
	case ref.Entry != nil:
		r.Key, r.Index, r.Text = ref.Entry.Key, ref.Entry.Index, ref.Entry.Value
	}
	if ref.Decision != "allow" {
		r.Effect = rules.Restricts
	}
	return r
}

// auditFinding is a finding of Evaluate as the engine reports it: a rejected file is an error,
// a deprecated spelling, a bare exclude hitting several servers and a rule error warnings,
// the rest notes.
func auditFinding(f Finding, index map[string]int) rules.Finding {
	out := rules.Finding{Class: string(f.Kind), Level: "note", Rule: -1, Tool: -1, File: f.Pos.File, Line: f.Pos.Line, Message: f.Message}
	switch f.Kind {
	case FindingRejectedFile:
		out.Level = "error"
	case FindingDeprecated, FindingBareExclude, FindingRuleError:
		out.Level = "warning"
	}
	if f.Rule != nil {
		if i, ok := index[f.Rule.ID]; ok {
			out.Rule = i
		}
	}
	return out
}

// point is one release's answers (rules.Semantics).
type point struct {
	res     *Result
	tools   []Tool
	index   map[string]int
	matches []map[Tool]bool // per rule index: the tools it matches
	ignored []bool
	other   *point
}

// newPoint is res's answers by rule index (index: a rule's ID to its index among n rules).
func newPoint(res *Result, tools []Tool, index map[string]int, n int) *point {
	p := &point{res: res, tools: tools, index: index, matches: make([]map[Tool]bool, n), ignored: make([]bool, n)}
	for _, rr := range res.Rules {
		i, ok := index[rr.Ref.ID]
		if !ok {
			continue
		}
		p.matches[i] = map[Tool]bool{}
		for _, t := range rr.Matches {
			p.matches[i][t] = true
		}
		p.ignored[i] = rr.Ignored != ""
	}
	return p
}

// Label is the release.
func (p *point) Label() string { return p.res.Release.String() }

// Match: Matched when the release applies the rule to the tool; NotApplied when it does not
// apply the rule and the rule matches the tool at the other point.
func (p *point) Match(rule, tool int) rules.Match {
	t := p.tools[tool]
	switch {
	case p.matches[rule][t]:
		return rules.Matched
	case p.ignored[rule] && p.other != nil && p.other.matches[rule][t]:
		return rules.NotApplied
	}
	return rules.No
}

// Decide is the release's verdict on the tool.
func (p *point) Decide(tool int) rules.Verdict {
	v := p.res.Verdict(p.tools[tool])
	if v == nil {
		return rules.Verdict{Rule: -1, Outcome: rules.Unknown}
	}
	out := rules.Verdict{Name: v.Name, Decision: "default", Rule: -1, Note: v.Why}
	switch v.Outcome {
	case Hidden:
		out.Outcome = rules.Hidden
	case Denied:
		out.Outcome = rules.Block
	case Ask:
		out.Outcome = rules.Ask
	case Ran:
		out.Outcome = rules.Ran
	}
	if v.By != nil {
		out.Decision = v.By.Decision
		if i, ok := p.index[v.By.ID]; ok {
			out.Rule = i
		}
	}
	return out
}
