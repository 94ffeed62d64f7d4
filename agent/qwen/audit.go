package qwen

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// Audit is Qwen Code's permission-rule audit as the command line sees it (agent.Audit), on the
// shared rule-audit layer (agent.Audit.Rules, package audit's engine): it reads the settings
// scopes and subagent files (auditmain.go, auditload.go); --agents, --history and --subagent
// are its own flags. What the room supplies is Qwen Code's knowledge: its rules and tools, the
// matching now and before the rename (Report.NowMatch, BeforeMatch: package permission and
// LegacyMatch), the decisions and outcomes (Run), and the shape its reports have had since
// the first audit (qwenLayout: the columns, members and wording scripts read).
var Audit = &agent.Audit{Reads: "Qwen Code settings", Flags: []string{"agents", "history", "subagent"},
	Rules: auditRules, OwnChecks: true, Description: auditDescription, Usage: auditUsage, Homes: auditHomes,
	Home: func(env agent.Env) string { return expandHome(cmp.Or(env.Getenv("QWEN_HOME"), "~/.qwen"), env.Home) }}

// restrictiveKinds are the rule kinds that take something away from a tool (deny, ask,
// tools.disabled, excludeTools, mcp.excluded, a subagent's disallowedTools): such a rule's
// lost pair is a restriction gone (docs/audit.md), listed first in the lost restrictions.
var restrictiveKinds = []settings.Kind{settings.KindDeny, settings.KindAsk, settings.KindDisabled,
	settings.KindExcludeTools, settings.KindMCPExcluded, settings.KindDisallowed}

// point is one side of the comparison (now: Qwen Code's current matcher; before: the
// pre-rename matcher on the legacy name) over a Report, as the engine's rules.Semantics.
type point struct {
	rep    *Report
	before bool
}

func (p point) Label() string {
	if p.before {
		return "before"
	}
	return "now"
}

func (p point) Match(rule, tool int) rules.Match {
	m := p.rep.NowMatch(rule, tool)
	if p.before {
		m = p.rep.BeforeMatch(rule, tool)
	}
	switch m {
	case permission.Matched:
		return rules.Matched
	case permission.Refused:
		return rules.NotApplied
	}
	return rules.No
}

func (p point) Decide(tool int) rules.Verdict {
	t := p.rep.Tools[tool]
	v, name := t.Now, t.Name
	if p.before {
		v, name = t.Before, t.Legacy
	}
	out := rules.Verdict{Name: name, Decision: string(v.Decision), Rule: v.Rule, Note: v.Note, Refused: v.Refused}
	switch v.Outcome {
	case permission.VerdictRan:
		out.Outcome = rules.Ran
	case permission.VerdictAsk:
		out.Outcome = rules.Ask
	case permission.VerdictBlock:
		out.Outcome = rules.Block
	}
	return out
}

func ruleOf(r settings.Rule) rules.Rule {
	e := rules.Grants
	if slices.Contains(restrictiveKinds, r.Kind) {
		e = rules.Restricts
	}
	return rules.Rule{File: r.File, Scope: string(r.Scope), Key: r.Key, Index: r.Index, Line: r.Line, Column: r.Column,
		Text: r.Literal, Kind: string(r.Kind), Ignored: r.Ignored, Effect: e, Server: r.Server}
}

// Evaluation is the report as the engine's input: Qwen Code's rules (as written, never
// $VAR-expanded), its tools with their aliases and trust, and the two points.
func (r *Report) Evaluation() rules.Evaluation {
	e := rules.Evaluation{Now: point{rep: r}, Before: point{rep: r, before: true}}
	for _, ru := range r.Rules {
		e.Rules = append(e.Rules, ruleOf(ru))
	}
	for _, t := range r.Tools {
		e.Tools = append(e.Tools, rules.ToolInfo{Tool: rules.Tool{Server: t.Identity.Server, Tool: t.Identity.Tool}, Source: string(t.Source),
			Attrs: []rules.Fact{{Key: "permission_aliases", Type: rules.List, List: t.PermissionAliases},
				{Key: "disabled_aliases", Type: rules.List, List: t.DisabledToolAliases},
				{Key: "trusted", Type: rules.Flag, Flag: t.Trusted}, {Key: "agent_local", Type: rules.Flag, Flag: t.AgentLocal}}})
	}
	return e
}

// Inferred reports whether some tool of the inventory was inferred (audit.md §1: such rows say
// "inventory: inferred").
func (r *Report) Inferred() bool {
	for _, t := range r.Tools {
		if t.Source == mcpinventory.SourceInferred {
			return true
		}
	}
	return false
}

// RuleAudit is the audit of the loaded inputs l (read: every file read), evaluated by r: the engine's input with Qwen Code's
// layout.
func (r *Report) RuleAudit(l *Loaded, read []string) *rules.Audit {
	a := &rules.Audit{ID: string(ID), Name: "Qwen Code", Eval: r.Evaluation(), Order: rules.Order{}, Read: read,
		Inventory: l.InventoryFrom, Problems: l.Problems, Said: true, Legend: auditLegend,
		Facts: []rules.Fact{{Key: "mode", Value: string(r.Mode)}, {Key: "subagent", Value: r.Agent},
			{Key: "agents", Type: rules.List, List: []string{}}}}
	for _, f := range l.Files {
		a.Files = append(a.Files, rules.File{Path: f.Path, Scope: string(f.Scope)})
	}
	for _, ag := range l.Agents {
		a.Facts[2].List = append(a.Facts[2].List, ag.Path)
	}
	for _, ru := range r.Shadowed {
		a.Shadowed = append(a.Shadowed, ruleOf(ru))
	}
	a.Layout = qwenLayout(r.Inferred())
	a.Layout.Page.Header = "approval mode " + string(r.Mode) + auditAs(r)
	a.Layout.Page.Files = l.FileList()
	if r.Inferred() {
		a.Layout.Page.Notes = []string{"The inventory was inferred from settings and session history: tools never called are missing, and a legacy name may stand for a raw name it cannot restore. Use --inventory or --discover for exact lists."}
	}
	if len(r.Rules) == 0 {
		where := "no settings or subagent file was read"
		if len(l.Files) > 0 || len(l.Agents) > 0 {
			where = "in " + l.FileList()
		}
		a.Layout.Lead = []string{fmt.Sprintf("audit: no permission rule found (%s): every tool gets its default decision (the server's trust)", reports.Printable(where))}
	}
	return a
}

// PairColumns are the columns of the pairs table, in the order of audit.md §3 (a contract:
// scheduled jobs read them by position); ToolColumns the tools table's.
var PairColumns = []string{"settings_file", "scope", "key", "index", "rule", "server", "tool",
	"registered_name", "now", "before", "change"}

// ToolColumns are the columns of the tools table, in the order of audit.md §3.
var ToolColumns = []string{"server", "tool", "registered_name", "legacy_name", "decision_now",
	"rule_now", "outcome_now", "decision_before", "rule_before", "outcome_before"}

// InventoryColumn is appended to both tables (and the JSON pairs) when some tool was inferred
// (audit.md §1: such rows say "inventory: inferred"); its cells are the inventory source of
// the row's tool (file, discovered, inferred).
const InventoryColumn = "inventory"

// qwenLayout is the shape of Qwen Code's audit reports (audit.md §3), inferred: some tool of
// the inventory was inferred (the inventory column).
func qwenLayout(inferred bool) *rules.Layout {
	f := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c} }
	omit := func(k string, c rules.Cell) rules.Field { return rules.Field{Key: k, Cell: c, Omit: true} }
	pairs := []rules.Field{f("settings_file", rules.CellFile), f("scope", rules.CellScope), f("key", rules.CellKey),
		f("index", rules.CellIndex), f("rule", rules.CellRule), f("server", rules.CellServer), f("tool", rules.CellTool),
		f("registered_name", rules.CellNameNow), f("now", rules.CellMatchNow), f("before", rules.CellMatchBefore), f("change", rules.CellChange)}
	tools := []rules.Field{f("server", rules.CellServer), f("tool", rules.CellTool), f("registered_name", rules.CellNameNow),
		f("legacy_name", rules.CellNameBefore), f("decision_now", rules.CellDecisionNow), f("rule_now", rules.CellRuleOrNoteNow),
		f("outcome_now", rules.CellOutcomeNow), f("decision_before", rules.CellDecisionBefore), f("rule_before", rules.CellRuleOrNoteBefore),
		f("outcome_before", rules.CellOutcomeBefore)}
	if inferred {
		pairs = append(pairs, f(InventoryColumn, rules.CellSource))
		tools = append(tools, f(InventoryColumn, rules.CellSource))
	}
	return &rules.Layout{
		PairColumns: pairs, ToolColumns: tools, Pair: pairs,
		Document: []rules.Field{f("generated", rules.CellGenerated), f("mode", rules.CellFact), omit("subagent", rules.CellFact),
			f("inventory", rules.CellInventory), f("counts", rules.CellCounts), f("settings", rules.CellFiles), f("agents", rules.CellFact),
			f("rules", rules.CellRules), omit("shadowed", rules.CellShadowed), f("tools", rules.CellTools), f("pairs", rules.CellPairs),
			f("errors", rules.CellErrors), f("redispatch", rules.CellRedispatch)},
		Count: []rules.Field{f("rules", rules.CellCountRules), f("tools", rules.CellCountTools), f("pairs", rules.CellCountListed),
			f("lost", rules.CellCountLost), f("gained", rules.CellCountGained), f("refused", rules.CellCountRefused)},
		Rule: []rules.Field{f("settings_file", rules.CellFile), f("scope", rules.CellScope), f("key", rules.CellKey), f("index", rules.CellIndex),
			f("line", rules.CellLine), f("column", rules.CellColumn), f("rule", rules.CellRule), f("kind", rules.CellKind),
			omit("server", rules.CellRuleServer), omit("ignored", rules.CellIgnored)},
		Tool: []rules.Field{f("server", rules.CellServer), f("tool", rules.CellTool), f("registered_name", rules.CellNameNow),
			f("legacy_name", rules.CellNameBefore), f("permission_aliases", rules.CellAttr), f("disabled_aliases", rules.CellAttr),
			f("trusted", rules.CellAttr), omit("agent_local", rules.CellAttr), f("inventory", rules.CellSource),
			f("now", rules.CellVerdictNow), f("before", rules.CellVerdictBefore)},
		Verdict: []rules.Field{f("decision", rules.CellDecision), omit("rule", rules.CellDecidingRule), omit("rule_at", rules.CellDecidingRuleSite),
			omit("note", rules.CellNote), omit("refused", rules.CellRefused), f("outcome", rules.CellOutcome)},
		Page: rules.Page{Title: "sessionfix audit: permission rules and MCP tools", FilesLabel: "Settings",
			Counts: []rules.Cell{rules.CellCountLostRestrictions, rules.CellCountRules, rules.CellCountTools, rules.CellCountLost,
				rules.CellCountGained, rules.CellCountRefused},
			LostTitle:  "Lost restrictions (deny, ask, exclude and disallow rules that no longer match)",
			PairFacets: []string{"scope", "now", "before", "change"}},
		SARIF:       sarifTexts,
		Message:     sarifMessage,
		Brief:       true,
		NoLostLines: true,
	}
}

// auditLegend explains the columns and values of the audit page (the words of audit --help).
var auditLegend = []rules.Legend{
	{Term: "now", Text: "does the rule match the tool's name as Qwen Code registers it today (normalized, mcp__server__tool_<hash> for a name that had dots)?"},
	{Term: "before", Text: "did it match the tool's legacy name, as registered before the provider-safe rename?"},
	{Term: "scope", Text: "where the rule comes from: system-defaults, user, workspace, explicit (--settings), system, or agent (a subagent's disallowedTools)."},
	{Term: "match", Value: true, Text: "the rule applies to the tool."},
	{Term: "no", Value: true, Text: "the rule does not apply to the tool."},
	{Term: "refused", Value: true, Text: "an allow rule names the tool, but Qwen Code's ambiguity guard refuses the grant: the tool asks instead."},
	{Term: "same", Value: true, Text: "the rename changed nothing for this pair."},
	{Term: "gained", Value: true, Text: "the rule matches now and did not before: it took effect with the rename."},
	{Term: "lost", Value: true, Text: "the rule matched before and no longer does (or is refused): what it granted or blocked is gone — fix the rule."},
	{Term: "deny", Value: true, Text: "decisions and outcomes that restrict the tool (deny, block, disabled, excluded, disallowed): the rule is doing its job."},
	{Term: "allow", Value: true, Text: "the tool runs without asking (outcome ran)."},
	{Term: "ask", Value: true, Text: "the tool asks for approval first."},
}

// sarifTexts word the Qwen Code audit's SARIF rules (ids stable: sessionfix/audit/<class>).
var sarifTexts = []rules.SARIFText{
	{Class: "lost", Short: "a permission rule no longer matches a tool it matched before the rename",
		Full: "The rule matched the tool's legacy name before the provider-safe rename and matches no more (or is refused): a deny, ask or exclude rule lost is a restriction lost, an allow rule lost a permission lost (docs/audit.md)."},
	{Class: "gained", Short: "a permission rule now matches a tool it did not match before the rename",
		Full: "The rule matches the tool's registered name now but did not match its legacy name: it grants or restricts more than before (docs/audit.md)."},
	{Class: "refused", Short: "an allow rule names the tool but the registry ambiguity guard refuses the grant",
		Full: "Qwen Code's IsMcpAllowAmbiguous refuses an allow rule that names the tool, so the tool is not allowed by it (qwen-reference.md)."},
}

// sarifMessage words a pair's SARIF result: the rule as written (never $VAR-expanded), its
// key, the tool with its registered name, and the match now and before the rename.
func sarifMessage(class string, ru rules.Rule, t rules.ToolResult, p rules.Pair) string {
	var what string
	switch class {
	case "lost":
		now := "matches no more"
		if p.Now == rules.NotApplied {
			now = "is refused"
		}
		what = fmt.Sprintf("matched it before the rename (legacy name %s) and now %s", t.Before.Name, now)
	case "gained":
		what = fmt.Sprintf("did not match it before the rename (legacy name %s) and matches it now", t.Before.Name)
	default:
		what = "names it, but the registry ambiguity guard refuses the grant"
	}
	key := ru.Key
	if ru.Index >= 0 {
		key = fmt.Sprintf("%s[%d]", ru.Key, ru.Index)
	}
	return fmt.Sprintf("%s rule %q (%s) %s tool %s (server %s, registered name %s): %s.",
		ru.Kind, ru.Text, key, class, t.Tool.Tool, t.Server, t.Now.Name, what)
}

func auditAs(rep *Report) string {
	if rep.Agent == "" {
		return ""
	}
	return "; calls made by subagent " + strconv.Quote(rep.Agent)
}
