package copilot

import (
	"fmt"
	"strings"

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
// rule found, and the runs they make up (Runs: each copilot invocation found with the rules that
// hold for every run; none: one run of every rule, AllowAll saying whether it allows every tool).
type AuditInput struct {
	Tools    []Tool
	Rules    []Rule
	AllowAll bool
	Runs     []Run
}

// Run is one copilot command line as Copilot CLI evaluates it: the indexes (into the rules
// given with it) of its own flags' rules and of the rules that hold for every run (persisted
// grants, custom agents, skills), whether it allows every tool (--allow-all-tools, --allow-all,
// --yolo), where it is (file:line:col of its command word) and its Key (InvocationKey).
type Run struct {
	Rules    []int
	AllowAll bool
	Where    string
	Key      string
}

// RunsOf fills in the rules of runs (one per invocation found, in order, Key set): a flag
// rule goes to the run of its file and invocation, every other rule to every run. With no run
// given: one run of every rule, allowing every tool when orAll.
func RunsOf(rules []Rule, runs []Run, orAll bool) []Run {
	if len(runs) == 0 {
		all := make([]int, len(rules))
		for i := range all {
			all[i] = i
		}
		return []Run{{Rules: all, AllowAll: orAll}}
	}
	out := make([]Run, len(runs))
	at := map[string]int{}
	for j, r := range runs {
		out[j] = r
		out[j].Rules = nil
		at[r.Key] = j
	}
	for i, r := range rules {
		if j, ok := at[InvocationKey(r.Pos.File, r.Invocation)]; ok && r.Source == SourceFlags && r.Invocation >= 0 {
			out[j].Rules = append(out[j].Rules, i)
			continue
		}
		for j := range out {
			out[j].Rules = append(out[j].Rules, i)
		}
	}
	return out
}

// InvocationKey names invocation i of file (RunsOf's maps).
func InvocationKey(file string, i int) string { return fmt.Sprintf("%s#%d", file, i) }

// AuditEvaluation evaluates in under now and before. Each pair matches as Matches says at that
// release (a rule outside the grammar is never applied: "invalid"); each tool's outcome is
// Evaluate's one run at a time (in.Runs: a copilot command line's flags with the rules of every
// run; a deny of one script line does not deny in another), the run shown for a tool being the
// first where it lost a restriction (restricted before, ran now), else the first where it
// gained one, else the first whose outcome changed, else the first where it runs (pickRun).
// Findings: a permission pattern whose tool part names a
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
	runs := in.Runs
	if len(runs) == 0 {
		runs = RunsOf(in.Rules, nil, in.AllowAll)
	}
	pn, pb := newPoint(now, in, runs), newPoint(before, in, runs)
	for j := range in.Tools {
		k := pickRun(pb, pn, j)
		pn.pick[j], pb.pick[j] = k, k
	}
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
	for j, tr := range pn.res[0].Tools {
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

// point is one release's answers (rules.Semantics): Evaluate's result per run, and per tool the
// run its verdict is taken from (pick).
type point struct {
	rel  Release
	in   AuditInput
	regs map[Tool]Registered
	runs []Run
	res  []Result
	pick []int
}

func newPoint(rel Release, in AuditInput, runs []Run) *point {
	p := &point{rel: rel, in: in, regs: map[Tool]Registered{}, runs: runs, pick: make([]int, len(in.Tools))}
	for _, reg := range Register(rel, in.Tools) {
		p.regs[reg.Tool] = reg
	}
	for _, r := range runs {
		rs := make([]Rule, len(r.Rules))
		for k, i := range r.Rules {
			rs[k] = in.Rules[i]
		}
		p.res = append(p.res, Evaluate(rel, Setup{Tools: in.Tools, Rules: rs, AllowAll: r.AllowAll}))
	}
	return p
}

// pickRun is the run whose outcomes of tool j are shown (AuditEvaluation): the first where it
// lost a restriction (restricted before, ran now), else the first where it gained one, else the
// first where its outcome changed, else the first where it runs now, else the first.
func pickRun(before, now *point, j int) int {
	best, rank := 0, 0
	for k := range now.runs {
		b, n := before.decide(k, j).Outcome, now.decide(k, j).Outcome
		r := 0
		switch {
		case b != rules.Ran && n == rules.Ran:
			r = 4
		case b == rules.Ran && n != rules.Ran:
			r = 3
		case b != n:
			r = 2
		case n == rules.Ran:
			r = 1
		}
		if r > rank {
			best, rank = k, r
		}
	}
	return best
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

// Decide is the release's outcome for the tool in the run picked for it.
func (p *point) Decide(tool int) rules.Verdict {
	v := p.decide(p.pick[tool], tool)
	if len(p.runs) > 1 && p.runs[p.pick[tool]].Where != "" {
		v.Note = strings.TrimPrefix(v.Note+"; ", "; ") + "in the run at " + p.runs[p.pick[tool]].Where
	}
	return v
}

// decide is the release's outcome for the tool in run k.
func (p *point) decide(k, tool int) rules.Verdict {
	t := p.in.Tools[tool]
	var tr *ToolResult
	for i := range p.res[k].Tools {
		if p.res[k].Tools[i].Tool == t {
			tr = &p.res[k].Tools[i]
			break
		}
	}
	if tr == nil {
		return rules.Verdict{Rule: -1}
	}
	v := rules.Verdict{Name: tr.Name, Decision: string(tr.Outcome), Rule: -1}
	if len(tr.Rules) > 0 {
		v.Rule = p.runs[k].Rules[tr.Rules[0]]
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
