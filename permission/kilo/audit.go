package kilo

import (
	"fmt"
	"strings"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission/rules"
)

// Kilo Code CLI on the shared rule-audit layer (permission/rules). Kilo names and matches alike
// in every recorded release (7.0.33 and 7.7.7: fixtures/kilo-real/rules.tsv, "same as 7.0.33"),
// so now and before are the same semantics under two labels and no pair is lost or gained; the
// audit's findings are what Kilo's naming does to the rules: a rule reaching tools of several
// servers (broad-rule), a tool another one's name shadows (shadowed), a name over 64 (over-long).

// Words are Kilo's words for the audit's values.
var Words = rules.Words{
	Match:   [3]string{"no", "match", "refused"},
	Outcome: [5]string{"unknown", "ran", "ask", "deny", "hidden"},
}

// Releases are the releases the recording measured, oldest first.
var Releases = []string{"7.0.33", "7.7.7"}

// AuditEvaluation is the evaluation of the config's rules (in order, after BuildDefaults) over
// tools (configuration order), labelled now and before. Rules come back with Text ("key":
// "action"), Kind (the action), Key "permission", Index and Effect (deny and ask restrict); the
// caller sets each rule's File, Scope, Line and Column.
func AuditEvaluation(rs []Rule, tools []Tool, now, before string) rules.Evaluation {
	ev := rules.Evaluation{}
	for i, r := range rs {
		text := fmt.Sprintf("%q: %q", r.Permission, r.Action)
		if r.Pattern != "*" {
			text = fmt.Sprintf("%q: {%q: %q}", r.Permission, r.Pattern, r.Action)
		}
		e := rules.Grants
		if r.Action != Allow {
			e = rules.Restricts
		}
		ev.Rules = append(ev.Rules, rules.Rule{Key: "permission", Index: i, Text: text, Kind: string(r.Action), Effect: e})
	}
	for _, t := range tools {
		ev.Tools = append(ev.Tools, rules.ToolInfo{Tool: rules.Tool{Server: t.Server, Tool: t.Tool}})
	}
	outs := Outcomes(tools, BuildDefaults, rs)
	ev.Now, ev.Before = point{label: now, rules: rs, outs: outs}, point{label: before, rules: rs, outs: outs}
	for _, c := range Covers(rs, tools) {
		ts := make([]string, len(c.Tools))
		for i, t := range c.Tools {
			ts[i] = t.Server + "/" + t.Tool
		}
		ev.Findings = append(ev.Findings, rules.Finding{Class: "broad-rule", Level: "warning", Rule: c.Index, Tool: -1,
			Message: fmt.Sprintf("%q reaches %s (servers %s) through %s: Kilo matches the model-facing name, in which those servers' keys sanitize alike",
				c.Rule.Permission, strings.Join(ts, ", "), strings.Join(c.Servers, ", "), strings.Join(c.Names, ", "))})
	}
	for j, o := range outs {
		if o.Shadowed {
			ev.Findings = append(ev.Findings, rules.Finding{Class: "shadowed", Level: "warning", Rule: -1, Tool: j,
				Message: fmt.Sprintf("%s/%s is named %s like %s/%s, registered later, which answers every call: %s/%s cannot be called", o.Tool.Server, o.Tool.Tool, o.Name, o.Answers.Server, o.Answers.Tool, o.Tool.Server, o.Tool.Tool)})
		}
		if o.OverLong && !o.Shadowed {
			ev.Findings = append(ev.Findings, rules.Finding{Class: "over-long", Level: "warning", Rule: -1, Tool: j,
				Message: fmt.Sprintf("%s/%s is offered as %s (%d UTF-16 units): providers with a 64 limit reject every request while it is offered", o.Tool.Server, o.Tool.Tool, o.Name, mcpname.Len(o.Name))})
		}
	}
	return ev
}

// point is Kilo's semantics under one label (rules.Semantics).
type point struct {
	label string
	rules []Rule
	outs  []Outcome
}

// Label is the release.
func (p point) Label() string { return p.label }

// Match: the rule's key matches the tool's model-facing name (any argument pattern).
func (p point) Match(rule, tool int) rules.Match {
	if Match(p.outs[tool].Name, p.rules[rule].Permission) {
		return rules.Matched
	}
	return rules.No
}

// Decide is Outcomes' answer: hidden when a deny of every argument disables the name or another
// tool answers it, else the deciding rule's action (ask when none matches).
func (p point) Decide(tool int) rules.Verdict {
	o := p.outs[tool]
	v := rules.Verdict{Name: o.Name, Decision: string(o.Action), Rule: -1}
	for i := range p.rules {
		if o.Rule == &p.rules[i] {
			v.Rule = i
		}
	}
	if o.Rule != nil && v.Rule < 0 {
		v.Note = "the default agent allows every tool"
	}
	switch {
	case o.Shadowed:
		v.Outcome, v.Note = rules.Hidden, "merged: "+o.Answers.Server+"/"+o.Answers.Tool+" answers "+o.Name
		v.SharedWith = []rules.Tool{{Server: o.Answers.Server, Tool: o.Answers.Tool}}
	case !o.Offered:
		v.Outcome = rules.Hidden
	case o.Action == Allow:
		v.Outcome = rules.Ran
	case o.Action == Deny:
		v.Outcome = rules.Block
	default:
		v.Outcome = rules.Ask
	}
	return v
}
