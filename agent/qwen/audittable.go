package qwen

import "strconv"

// PairColumns are the columns of the pairs table, in the order of audit.md §3 (a contract: scheduled
// jobs read them by position).
var PairColumns = []string{"settings_file", "scope", "key", "index", "rule", "server", "tool",
	"registered_name", "now", "before", "change"}

// ToolColumns are the columns of the tools table, in the order of audit.md §3.
var ToolColumns = []string{"server", "tool", "registered_name", "legacy_name", "decision_now",
	"rule_now", "outcome_now", "decision_before", "rule_before", "outcome_before"}

// InventoryColumn is appended to both tables when some tool was inferred (audit.md §1: such rows
// say "inventory: inferred"); its cells are the inventory source of the row's tool (file,
// discovered, inferred). Without inferred tools the tables have exactly the columns above.
const InventoryColumn = "inventory"

// Columns returns cols, plus InventoryColumn when the report has inferred tools.
func (r *Report) Columns(cols []string) []string {
	if !r.Inferred() {
		return cols
	}
	return append(append([]string(nil), cols...), InventoryColumn)
}

// PairRow returns the cells of one pair, in the order of r.Columns(PairColumns). Rule cells
// are the rule as written in the file (settings.Rule.Literal, never the $VAR-expanded text).
func (r *Report) PairRow(p Pair) []string {
	rule, t := r.Rules[p.Rule], r.Tools[p.Tool]
	row := []string{rule.File, string(rule.Scope), rule.Key, strconv.Itoa(rule.Index), rule.Literal,
		t.Identity.Server, t.Identity.Tool, t.Name, string(p.Now), string(p.Before), string(p.Change)}
	if r.Inferred() {
		row = append(row, string(t.Source))
	}
	return row
}

// PairRows returns the rows of VisiblePairs(all).
func (r *Report) PairRows(all bool) [][]string {
	pairs := r.VisiblePairs(all)
	out := make([][]string, len(pairs))
	for i, p := range pairs {
		out[i] = r.PairRow(p)
	}
	return out
}

// ToolRows returns one row per tool, in the order of r.Columns(ToolColumns).
func (r *Report) ToolRows() [][]string {
	out := make([][]string, len(r.Tools))
	for i, t := range r.Tools {
		row := []string{t.Identity.Server, t.Identity.Tool, t.Name, t.Legacy,
			string(t.Now.Decision), r.RuleText(t.Now), string(t.Now.Outcome),
			string(t.Before.Decision), r.RuleText(t.Before), string(t.Before.Outcome)}
		if r.Inferred() {
			row = append(row, string(t.Source))
		}
		out[i] = row
	}
	return out
}

// RuleText is what the rule cells of the tools table show for v: the deciding entry as
// written in its file, else v.Note in parentheses, else "".
func (r *Report) RuleText(v Verdict) string {
	switch {
	case v.Rule >= 0:
		return r.Rules[v.Rule].Literal
	case v.Note != "":
		return "(" + v.Note + ")"
	}
	return ""
}
