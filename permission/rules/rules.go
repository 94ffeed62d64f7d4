// Package rules is the rule-audit contract (issue 24 item 2): what an agent's permission
// package supplies so that one engine (package audit) can evaluate its rules against its tools
// now and before, and render the shared reports (CSV, HTML, JSON, SARIF), the lost-first order,
// the counts --fail-on reads and the baseline fingerprints.
//
// An agent supplies, per audit (an Audit):
//   - its rules as written and located (Rule: file, scope, key, index, line, column, text, kind,
//     and whether it grants or restricts: Effect);
//   - the tools audited (ToolInfo: raw server key and tool name, and where the tool came from);
//   - two points of comparison (Semantics: "now" and "before", typically two releases): for a
//     (rule, tool) pair whether the rule matches the tool at that point (Match), and for each
//     tool what happens to it there (Verdict: its name, the deciding rule, the Outcome
//     ran / ask / block / hidden / not offered);
//   - its words for those values (Words), the order its pairs are listed in (Order), its own
//     findings beyond lost/gained/refused (Finding) and the facts of its report header (Fact).
//
// Evaluate is the pure evaluation loop every agent shares: it asks the two Semantics once per
// tool and once per (rule, tool) pair, derives the change of each pair (gained iff only now is
// Matched, lost iff only before is: permission.ChangeOf's rule), orders the pairs and counts.
//
// No `any` appears in the contract: every value is typed. The per-agent knowledge (grammar,
// matcher and naming per release) stays in the agent's permission package (permission/gemini,
// permission/copilot, permission/kilo, …), which implements Semantics over its own model; the
// room (agent/<agent>) only finds the files and the tools. docs/adding-an-agent.md ("the
// shared rule-audit layer") walks through an implementation.
//
// It is pure: it reads no file; the Change words are permission's, shared with the older audits'
// baselines.
package rules

import (
	"github.com/sessionfix/sessionfix/permission"
)

// Tool is one raw MCP tool: the server key as configured and the tool name the server lists.
type Tool struct {
	Server string
	Tool   string
}

// String is "server/tool".
func (t Tool) String() string { return t.Server + "/" + t.Tool }

// ToolInfo is one audited tool and where it came from ("file", "discovered", "inferred": the
// inventory's source words).
type ToolInfo struct {
	Tool
	Source string
	// Attrs are what the agent knows of the tool beyond its names (its aliases, the server's
	// trust): JSON members of a layout's tools (CellAttr, by Key).
	Attrs []Fact
}

// Attr is the attribute named key, and whether the tool has it.
func (t ToolInfo) Attr(key string) (Fact, bool) {
	for _, f := range t.Attrs {
		if f.Key == key {
			return f, true
		}
	}
	return Fact{}, false
}

// Effect is what a rule does when it applies.
type Effect uint8

// Effects. A rule that restricts (deny, ask, exclude, hide) and stops matching is a lost
// restriction, listed first.
const (
	Grants Effect = iota + 1
	Restricts
)

// Rule is one rule as written, located. Line and Column are 1-based and point at the rule's
// token (Column in bytes; 0: unknown). Text is the rule as written (never $VAR-expanded).
type Rule struct {
	// File is the rule file (a path as found), Scope the agent's word for where it applies
	// ("user", "workspace", "home", "script"), Key the member or flag holding it
	// ("tools.exclude", "--deny-tool", "permission"), Index its index in that list.
	File, Scope, Key string
	Index            int
	Line, Column     int
	Text             string
	// Kind is the agent's word for what the rule is ("deny", "tools.exclude", "allow-tool").
	Kind string
	// Ignored says why the agent never applies the rule ("" = it does at some point).
	Ignored string
	Effect  Effect
	// Server is the server key the rule is scoped to, when it is written under one (a
	// server's own tool list); "" otherwise.
	Server string
}

// Restricts reports whether the rule restricts.
func (r Rule) Restricts() bool { return r.Effect == Restricts }

// Match is how a rule relates to a tool at one point.
type Match uint8

// Matches. NotApplied: the rule names the tool but the agent does not apply it at that point
// (a file the release rejects, a grant refused); it counts as not matching for the change and
// is reported as "refused" now.
const (
	No Match = iota
	Matched
	NotApplied
)

// Outcome is what happens to a tool at one point.
type Outcome uint8

// Outcomes. Block: offered to the model, every call refused. Hidden: not offered at all (a
// filter, an exclude, a deny that hides, another tool answering its name).
const (
	Unknown Outcome = iota
	Ran
	Ask
	Block
	Hidden
)

// Verdict is what one point does with one tool.
type Verdict struct {
	// Name is the tool's name at this point ("" when none is registered).
	Name string
	// Decision is the agent's word for what decided ("deny", "excluded", "default", "allow").
	Decision string
	// Rule is the index (into Evaluation.Rules) of the deciding rule; -1 when none.
	Rule int
	// Note says why, when no single rule decided or the rule is not one of the input's
	// ("yolo allows every tool", "shadowed by foo/get_data").
	Note    string
	Outcome Outcome
	// SharedWith are the other tools this point gives the same name.
	SharedWith []Tool
	// Refused are the rules (indexes) that named the tool and were not applied on the way to
	// the decision (grants a guard refused).
	Refused []int
	// Unreachable: the name is shared and SharedWith[0] answers the calls made under it (the
	// decision is the name's; the calls never reach this tool).
	Unreachable bool
}

// Semantics is one point of comparison (a release, a mode), bound to the Evaluation's rules
// and tools (an implementation may precompute per tool: names, registries). Match and Decide
// take indexes into Evaluation.Rules and Evaluation.Tools.
type Semantics interface {
	// Label names the point in reports ("0.61.0", "1.0.102").
	Label() string
	Match(rule, tool int) Match
	Decide(tool int) Verdict
}

// Finding is an agent's own finding beyond lost, gained and refused pairs: a deprecated
// spelling, a rule file the release rejects, a rule reaching several servers, a shadowed tool.
type Finding struct {
	// Class is the SARIF rule id's last part and the report's word ("deprecated",
	// "rejected-file", "broad-rule", "shadowed").
	Class string
	// Level is SARIF's: "error", "warning" or "note".
	Level string
	// Rule and Tool index the rule and tool it concerns; -1 when none.
	Rule, Tool int
	// File, Line locate it when Rule is -1 (a whole file); Message says it in a sentence.
	File    string
	Line    int
	Message string
}

// Evaluation is what Evaluate takes: the rules, the tools, the two points and the findings.
type Evaluation struct {
	Rules       []Rule
	Tools       []ToolInfo
	Now, Before Semantics
	Findings    []Finding
}

// Pair is one (rule, tool) pair: how the rule relates to the tool now and before, and the
// change.
type Pair struct {
	Rule, Tool  int
	Now, Before Match
	Change      permission.Change
}

// Visible reports whether the pair is listed by default: now or before is not No.
func (p Pair) Visible() bool { return p.Now != No || p.Before != No }

// ToolResult is one tool with its verdicts now and before.
type ToolResult struct {
	ToolInfo
	Now, Before Verdict
}

// Counts summarize a Result. Pairs counts the pairs listed by default (Visible); Lost every lost
// pair, LostRestrictions those of restricting rules; NotApplied the pairs whose rule names the
// tool now and is not applied (SARIF "refused"); Changed the tools whose outcome differs.
type Counts struct {
	Rules, Tools, Pairs            int
	Lost, LostRestrictions, Gained int
	NotApplied, Changed            int
}

// Group is one group of the pair order: pairs with this change (and, when Effect is not 0,
// of rules with this effect).
type Group struct {
	Change permission.Change
	Effect Effect
}

// Order lists the pair groups first in report order; the remaining pairs follow. Inside a
// group pairs are rule-major (rule order, then tool order).
type Order []Group

// LostFirst is the order every audit uses unless it says otherwise: lost restrictions, other
// lost pairs, gained pairs, the rest.
var LostFirst = Order{{permission.ChangeLost, Restricts}, {permission.ChangeLost, 0}, {permission.ChangeGained, 0}}

// Result is Evaluate's answer.
type Result struct {
	Rules    []Rule
	Tools    []ToolResult
	Pairs    []Pair
	Counts   Counts
	Findings []Finding
	// Now and Before are the points' labels.
	Now, Before string
}

// ChangeOf is the change of a pair from before to now: gained when only now is Matched, lost
// when only before is (NotApplied counts as not matching), else same.
func ChangeOf(now, before Match) permission.Change {
	n, b := now == Matched, before == Matched
	switch {
	case n && !b:
		return permission.ChangeGained
	case b && !n:
		return permission.ChangeLost
	}
	return permission.ChangeSame
}

// Evaluate calls e.Now.Decide and e.Before.Decide once per tool and Match once per (rule, tool)
// pair and point, and returns the pairs grouped by order (rule-major inside each group; the
// pairs of no group last), the tools in input order and the counts.
func Evaluate(e Evaluation, order Order) *Result {
	res := &Result{Rules: e.Rules, Findings: e.Findings, Now: e.Now.Label(), Before: e.Before.Label()}
	for j, t := range e.Tools {
		tr := ToolResult{ToolInfo: t, Now: e.Now.Decide(j), Before: e.Before.Decide(j)}
		if tr.Now.Outcome != tr.Before.Outcome {
			res.Counts.Changed++
		}
		res.Tools = append(res.Tools, tr)
	}
	groups := make([][]Pair, len(order)+1)
	for i, r := range e.Rules {
		for j := range e.Tools {
			p := Pair{Rule: i, Tool: j, Now: e.Now.Match(i, j), Before: e.Before.Match(i, j)}
			p.Change = ChangeOf(p.Now, p.Before)
			switch p.Change {
			case permission.ChangeLost:
				res.Counts.Lost++
				if r.Restricts() {
					res.Counts.LostRestrictions++
				}
			case permission.ChangeGained:
				res.Counts.Gained++
			}
			if p.Now == NotApplied {
				res.Counts.NotApplied++
			}
			if p.Visible() {
				res.Counts.Pairs++
			}
			g := len(order)
			for k, o := range order {
				if o.Change == p.Change && (o.Effect == 0 || o.Effect == r.Effect) {
					g = k
					break
				}
			}
			groups[g] = append(groups[g], p)
		}
	}
	for _, g := range groups {
		res.Pairs = append(res.Pairs, g...)
	}
	res.Counts.Rules, res.Counts.Tools = len(e.Rules), len(e.Tools)
	return res
}

// Visible returns the pairs listed by default (Pair.Visible), or every pair when all.
func (r *Result) Visible(all bool) []Pair {
	if all {
		return r.Pairs
	}
	var out []Pair
	for _, p := range r.Pairs {
		if p.Visible() {
			out = append(out, p)
		}
	}
	return out
}

// LostRestrictions returns the lost pairs of restricting rules, in order.
func (r *Result) LostRestrictions() []Pair {
	var out []Pair
	for _, p := range r.Pairs {
		if p.Change == permission.ChangeLost && r.Rules[p.Rule].Restricts() {
			out = append(out, p)
		}
	}
	return out
}

// Words are an agent's words for the values in its reports: Match[No], Match[Matched],
// Match[NotApplied]; Outcome[Unknown] … Outcome[Hidden]. An empty word falls back to the
// default (Default).
type Words struct {
	Match   [3]string
	Outcome [5]string
}

// Default are the words used where an agent gives none.
var Default = Words{
	Match:   [3]string{"no", "match", "refused"},
	Outcome: [5]string{"unknown", "ran", "ask", "block", "not offered"},
}

// OfMatch is the word for m.
func (w Words) OfMatch(m Match) string {
	if int(m) < len(w.Match) && w.Match[m] != "" {
		return w.Match[m]
	}
	return Default.Match[m]
}

// OfOutcome is the word for o.
func (w Words) OfOutcome(o Outcome) string {
	if int(o) < len(w.Outcome) && w.Outcome[o] != "" {
		return w.Outcome[o]
	}
	return Default.Outcome[o]
}

// Fact is one fact of a report's header: a JSON member (Key, its string Value) after "agent",
// an HTML header line ("<Label>: <Value>"; none when Label is "") and, when Summary, words of
// the summary line. A layout's document (CellFact) and tools (CellAttr, ToolInfo.Attrs) give
// it its Type: a string (Value), a list of strings (List) or a boolean (Flag).
type Fact struct {
	Key, Label, Value string
	Summary           bool
	Type              FactType
	List              []string
	Flag              bool
}

// File is one rule file read: its path, scope and the number of rules it gave.
type File struct {
	Path, Scope string
	Rules       int
}

// Audit is one agent's rule audit as its room hands it to the engine: the evaluation, how to
// word and order it, and what was read.
type Audit struct {
	// ID is the agent's id ("gemini"), Name its product name ("Gemini CLI").
	ID, Name string
	Eval     Evaluation
	Words    Words
	// Order is the pair order (nil: LostFirst).
	Order Order
	// Files are the rule files read; Read every file read (no output may be written over
	// one); Inventory says where the tools came from ("file inv.json", "discovered").
	Files     []File
	Read      []string
	Inventory string
	Facts     []Fact
	// Legend explains the agent's words (HTML): term → text, in order.
	Legend []Legend
	// Notes are said on standard error and in the documents; Problems are inputs that could
	// not be read (the run is partial: exit 3).
	Notes, Problems []string
	// Said: the room said its notes and problems on standard error as it met them (the
	// engine does not say them again). Partial: some input could not be read beyond those
	// in Problems (exit 3).
	Said, Partial bool
	// Shadowed are rules written in a file but not in effect (a higher scope replaced the
	// list): listed by a layout's document (CellShadowed), never evaluated.
	Shadowed []Rule
	// Layout is the shape of the reports (nil: the default layout).
	Layout *Layout
}

// Legend is one term of the HTML legend; Value: the term is a cell value (else a column).
type Legend struct {
	Term, Text string
	Value      bool
}
