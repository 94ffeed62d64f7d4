package claude

import (
	"fmt"

	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// The Claude Code audit on the shared rule-audit layer (package permission/rules; the engine,
// package audit, evaluates, orders lost first and writes every format): claudePoint is a
// release as rules.Semantics, RuleAudit the engine's input with claudeLayout, the shape the
// audit's reports have had (docs/audit.md §5).

// OrNone is s, or "(none)" when empty.
func OrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// TrustWord is "trusted" or "not trusted".
func TrustWord(t bool) string {
	if t {
		return "trusted"
	}
	return "not trusted"
}

// claudePoint is one release of the comparison over a ClaudeReport.
type claudePoint struct {
	rep    *ClaudeReport
	before bool
}

func (p claudePoint) Label() string {
	if p.before {
		return p.rep.Before.String()
	}
	return p.rep.Now.String()
}

func (p claudePoint) Match(rule, tool int) rules.Match {
	m := p.rep.NowMatch(rule, tool)
	if p.before {
		m = p.rep.BeforeMatch(rule, tool)
	}
	switch m {
	case permission.ClaudeMatched:
		return rules.Matched
	case permission.ClaudeIgnored:
		return rules.NotApplied
	}
	return rules.No
}

func (p claudePoint) Decide(tool int) rules.Verdict {
	t := p.rep.Tools[tool]
	v := t.Now
	if p.before {
		v = t.Before
	}
	out := rules.Verdict{Name: v.Name, Decision: string(v.Decision), Rule: v.Rule, Unreachable: v.Unreachable}
	for _, o := range v.SharedWith {
		out.SharedWith = append(out.SharedWith, rules.Tool{Server: o.Server, Tool: o.Tool})
	}
	switch v.Outcome {
	case permission.ClaudeOutcomeRan:
		out.Outcome = rules.Ran
	case permission.ClaudeOutcomeAsk:
		out.Outcome = rules.Ask
	case permission.ClaudeOutcomeBlock:
		out.Outcome = rules.Block
	case permission.ClaudeOutcomeNotOffered:
		out.Outcome = rules.Hidden
	}
	return out
}

// Evaluation is the report as the engine's input: the rules as written (deny and ask
// restrict), the tools in Claude Code's list order, the two releases.
func (r *ClaudeReport) Evaluation() rules.Evaluation {
	e := rules.Evaluation{Now: claudePoint{rep: r}, Before: claudePoint{rep: r, before: true}}
	for _, ru := range r.Rules {
		eff := rules.Grants
		if ru.Restrictive() {
			eff = rules.Restricts
		}
		e.Rules = append(e.Rules, rules.Rule{File: ru.File, Scope: string(ru.Scope), Key: ru.Key, Index: ru.Index, Line: ru.Line,
			Column: ru.Column, Text: ru.Text, Kind: string(ru.Kind), Effect: eff})
	}
	for _, t := range r.Tools {
		e.Tools = append(e.Tools, rules.ToolInfo{Tool: rules.Tool{Server: t.Server, Tool: t.Tool}})
	}
	return e
}

// RuleAudit is the audit of what l loaded (read: every file read), evaluated by r: the
// engine's input with Claude Code's layout.
func (r *ClaudeReport) RuleAudit(l *ClaudeLoaded, read []string) *rules.Audit {
	project := "(none)" // no project: nothing to trust
	if l.Project != "" {
		project = reports.Printable(l.Project) + " (" + TrustWord(r.Trusted) + ")"
	}
	a := &rules.Audit{ID: string(ID), Name: "Claude Code", Eval: r.Evaluation(), Read: read, Inventory: l.InventoryFrom,
		Words: rules.Words{Match: [3]string{rules.NotApplied: string(permission.ClaudeIgnored)}},
		Notes: l.Notes, Problems: l.Problems, Said: true, Legend: claudeAuditLegend,
		Facts: []rules.Fact{{Key: "session_versions", Type: rules.List, List: l.Versions}, {Key: "project", Value: l.Project},
			{Key: "trusted", Type: rules.Flag, Flag: r.Trusted}, {Key: "incomplete_servers", Type: rules.List, List: l.Incomplete},
			{Key: "unknown_session_names", Type: rules.List, List: l.Unknown}, {Label: "project", Value: project, Summary: true}}}
	for _, f := range l.Files {
		a.Files = append(a.Files, rules.File{Path: f.Path, Scope: string(f.Scope)})
	}
	a.Layout = claudeLayout()
	a.Layout.Page.Meta = []string{"Project: " + OrNone(l.Project) + " (" + TrustWord(r.Trusted) + ")"}
	return a
}

// ClaudePairColumns are the columns of the Claude pairs table.
var ClaudePairColumns = []string{"settings_file", "scope", "key", "index", "rule", "kind", "server", "tool",
	"name_now", "name_before", "now", "before", "change"}

// ClaudeToolColumns are the columns of the Claude tools table. shared_now names the other
// tools the current release gives the same name ("unreachable" when another one answers).
var ClaudeToolColumns = []string{"server", "tool", "name_now", "name_before", "decision_now", "rule_now",
	"outcome_now", "decision_before", "rule_before", "outcome_before", "shared_now"}

// claudeLayout is the shape of the Claude Code audit's reports: the columns above, the JSON
// document (lost_restrictions first, claude_version, the project and its trust), the page's
// wording and the SARIF rules' words.
func claudeLayout() *rules.Layout {
	f := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c} }
	omit := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c, Omit: true} }
	ruleFields := []rules.Field{f("settings_file", rules.CellFile), f("scope", rules.CellScope), f("key", rules.CellKey),
		f("index", rules.CellIndex), f("line", rules.CellLine), f("column", rules.CellColumn), f("rule", rules.CellRule), f("kind", rules.CellKind)}
	return &rules.Layout{
		PairColumns: []rules.Field{f("settings_file", rules.CellFile), f("scope", rules.CellScope), f("key", rules.CellKey),
			f("index", rules.CellIndex), f("rule", rules.CellRule), f("kind", rules.CellKind), f("server", rules.CellServer),
			f("tool", rules.CellTool), f("name_now", rules.CellNameNow), f("name_before", rules.CellNameBefore),
			f("now", rules.CellMatchNow), f("before", rules.CellMatchBefore), f("change", rules.CellChange)},
		ToolColumns: []rules.Field{f("server", rules.CellServer), f("tool", rules.CellTool), f("name_now", rules.CellNameNow),
			f("name_before", rules.CellNameBefore), f("decision_now", rules.CellDecisionNow), f("rule_now", rules.CellRuleNow),
			f("outcome_now", rules.CellOutcomeNow), f("decision_before", rules.CellDecisionBefore), f("rule_before", rules.CellRuleBefore),
			f("outcome_before", rules.CellOutcomeBefore), f("shared_now", rules.CellSharedNow)},
		Document: []rules.Field{f("lost_restrictions", rules.CellLostRestrictions), f("generated", rules.CellGenerated), f("agent", rules.CellAgent),
			f("claude_version", rules.CellNow), f("before", rules.CellBefore), omit("session_versions", rules.CellFact), f("project", rules.CellFact),
			f("trusted", rules.CellFact), f("inventory", rules.CellInventory), omit("incomplete_servers", rules.CellFact),
			omit("unknown_session_names", rules.CellFact), f("counts", rules.CellCounts), f("settings", rules.CellFiles), f("rules", rules.CellRules),
			f("tools", rules.CellTools), f("pairs", rules.CellPairs), omit("notes", rules.CellNotes), f("errors", rules.CellErrors),
			f("redispatch", rules.CellRedispatch)},
		Count: []rules.Field{f("rules", rules.CellCountRules), f("tools", rules.CellCountTools), f("pairs", rules.CellCountListed),
			f("lost", rules.CellCountLost), f("lost_restrictions", rules.CellCountLostRestrictions), f("gained", rules.CellCountGained),
			f("changed_outcomes", rules.CellCountChanged)},
		Rule: ruleFields,
		Pair: append(append([]rules.Field{}, ruleFields...), f("server", rules.CellServer), f("tool", rules.CellTool),
			f("name_now", rules.CellNameNow), f("name_before", rules.CellNameBefore), f("now", rules.CellMatchNow),
			f("before", rules.CellMatchBefore), f("change", rules.CellChange)),
		Tool: []rules.Field{f("server", rules.CellServer), f("tool", rules.CellTool), f("now", rules.CellVerdictNow), f("before", rules.CellVerdictBefore)},
		Verdict: []rules.Field{f("name", rules.CellName), f("decision", rules.CellDecision), omit("rule", rules.CellDecidingRule),
			omit("rule_at", rules.CellDecidingRuleAt), f("outcome", rules.CellOutcome), omit("shared_with", rules.CellSharedTools),
			omit("unreachable", rules.CellUnreachable)},
		Page: rules.Page{Counts: []rules.Cell{rules.CellCountLostRestrictions, rules.CellCountRules, rules.CellCountTools,
			rules.CellCountLost, rules.CellCountGained},
			LostTitle: "Lost restrictions (deny and ask rules that no longer match)", LostEmpty: "No deny or ask rule lost its tool."},
		SARIF:    claudeSARIFTexts,
		Summary:  []rules.Cell{rules.CellCountLost, rules.CellCountGained, rules.CellCountChanged},
		LostLine: lostLine,
	}
}

// lostLine is the LOST RESTRICTION line of a deny or ask rule that matched the tool under the
// earlier release and matches nothing of it now.
func lostLine(ru rules.Rule, t rules.ToolResult, now, before string) string {
	return fmt.Sprintf("audit: LOST RESTRICTION: %s rule %q (%s:%d:%d, %s) matched %s/%s as %s under %s and matches nothing of it under %s (now %s: %s)",
		ru.Kind, reports.Printable(ru.Text), ru.File, ru.Line, ru.Column, ru.Key, t.Server, t.Tool.Tool, t.Before.Name, before, now,
		t.Now.Name, rules.Default.OfOutcome(t.Now.Outcome))
}

var claudeAuditLegend = []rules.Legend{
	{Term: "now", Text: "does the rule match the tool as the current release (--claude-version) names it and matches rules?"},
	{Term: "before", Text: "did it match under the earlier release (--before), with that release's names and matching?"},
	{Term: "match", Value: true, Text: "the rule names the tool and the release applies it."},
	{Term: "ignored", Value: true, Text: "the rule names the tool but the release does not apply it (an allow rule of an untrusted project's .claude/settings.json in 2.1.332; an ask rule in 1.0.51, which had none)."},
	{Term: "no", Value: true, Text: "the rule does not name the tool."},
	{Term: "lost", Value: true, Text: "the rule matched before and no longer does: for deny and ask, a restriction is gone — fix the rule (sessionfix fix --rules)."},
	{Term: "gained", Value: true, Text: "the rule matches now and did not before."},
	{Term: "not offered", Value: true, Text: "a deny rule removed the tool from the list sent to the model (from 2.1.90)."},
	{Term: "block", Value: true, Text: "the tool is offered and its calls are denied."},
	{Term: "ask", Value: true, Text: "the tool asks for approval first (refused in claude -p)."},
	{Term: "ran", Value: true, Text: "the tool runs without asking."},
}

// claudeSARIFTexts word the Claude Code audit's SARIF rules (the ids every audit uses).
var claudeSARIFTexts = []rules.SARIFText{
	{Class: "lost", Short: "a Claude Code permission rule no longer matches a tool it matched under the earlier release",
		Full: "The rule matched the tool as the earlier release (--before) named it and matched rules, and matches nothing of it under the current one (--claude-version): a deny or ask rule lost is a restriction lost (fix it with sessionfix fix --rules), an allow rule lost a permission lost (docs/claude.md, Rules: audit --agent claude)."},
	{Class: "gained", Short: "a Claude Code permission rule now matches a tool it did not match under the earlier release",
		Full: "The rule matches the tool under the current release and did not under the earlier one: it grants or restricts more than before (docs/claude.md, Rules: audit --agent claude)."},
	{Class: "refused", Short: "a Claude Code permission rule names the tool but the current release does not apply it",
		Full: "The rule names the tool and is ignored: an allow rule of an untrusted project's .claude/settings.json (2.1.332 applies only its deny and ask rules), or an ask rule under a release without an ask list (1.0.51)."},
}
