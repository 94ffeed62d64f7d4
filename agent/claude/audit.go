package claude

import (
	"strconv"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// Claude Code audit (issue 11 item 4): every rule of Claude's rule files against every tool of
// the inventory, under two releases: Now (the release in use, default the newest known) and
// Before (default the oldest release found in the sessions). Rule semantics per release are
// package permission's (ClaudeFeaturesOf, ClaudePairMatch, ClaudeDecide); each release names
// the tools in its own era (mcpname.ClaudeNameIn). Pure: no I/O.

// Audit is the Claude Code audit as the command line sees it (agent.Audit): it reads the rule
// files; --claude-version, --before, --project-key, --claude-json and --mcp-config are its own
// audit flags (scan and fix take --claude-version and --mcp-config as well, for every agent; an
// audit of another agent reads neither, so it refuses them rather than ignore them).
var Audit = &agent.Audit{Reads: "Claude Code rule files", Flags: []string{VersionOption, BeforeOption, ProjectKeyOption, ClaudeJSONOption, MCPConfigOption},
	Options: []agent.Option{
		{Name: VersionOption, Usage: "with --agent claude: the release whose rule semantics are \"now\" (default: the newest known, " + mcpname.ClaudeLatestVersion + ")"},
		{Name: BeforeOption, Usage: "with --agent claude: the release compared against (default: the oldest \"version\" in the project's sessions)"},
		{Name: ProjectKeyOption, Usage: "with --agent claude: the project directory as Claude Code saw it (its key in ~/.claude.json; default: --project, or the only project of a copied ~/.claude.json)"},
		{Name: ClaudeJSONOption, File: true, Usage: "with --agent claude: the ~/.claude.json to read trust, legacy allowedTools and MCP server keys from"},
		{Name: MCPConfigOption, Repeatable: true, File: true, Usage: "with --agent claude: a Claude Code MCP config file ({\"mcpServers\": {…}}, the format of claude --mcp-config and .mcp.json; repeatable): its server keys name raw tools of the sessions' stored names, and with --discover its servers are listed"},
	},
	Run: runAudit, Description: auditDescription, Homes: AuditHomes,
	Home: func(env agent.Env) string { return Home(env.Getenv, env.Home) }}

// The audit's own option names (VersionOption and MCPConfigOption are shared with scan and fix).
const (
	BeforeOption     = "before"
	ProjectKeyOption = "project-key"
	ClaudeJSONOption = "claude-json"
)

// ClaudeRuleEntry is one rule with its origin.
type ClaudeRuleEntry struct {
	permission.ClaudeRule
	File  string
	Key   string
	Index int
	// Line and Column of the rule's string token (0 when unknown).
	Line, Column int
}

// Restrictive reports whether the rule restricts (deny or ask).
func (r ClaudeRuleEntry) Restrictive() bool {
	return r.Kind == permission.ClaudeDeny || r.Kind == permission.ClaudeAsk
}

// ClaudeInput is everything RunClaude evaluates.
type ClaudeInput struct {
	// Rules in scope order (managed, user, project, local, legacy: any order works; the
	// first matching rule of a kind decides, and is the one reported).
	Rules []ClaudeRuleEntry
	// Trusted: the project's trust dialog was accepted (hasTrustDialogAccepted).
	Trusted bool
	// Tools are the raw MCP tools (server key, tool), in the order Claude Code lists them
	// (configuration order, each server's list order): of two tools that share a name, the
	// first answers.
	Tools       []mcpname.ClaudeTool
	Now, Before permission.ClaudeRelease
}

// ClaudeVerdict is a tool's decision at one release.
type ClaudeVerdict struct {
	// Name is the tool's name in that release.
	Name     string                        `json:"name"`
	Decision permission.ClaudeDecisionKind `json:"decision"`
	// Rule is the index in ClaudeReport.Rules of the deciding rule; -1 for none.
	Rule    int                      `json:"rule"`
	Outcome permission.ClaudeOutcome `json:"outcome"`
	// SharedWith are the other tools this release gives the same name.
	SharedWith []mcpname.ClaudeTool `json:"shared_with,omitempty"`
	// Unreachable: the name is shared and another tool answers calls made under it; the
	// decision is the name's, the calls never reach this tool.
	Unreachable bool `json:"unreachable,omitempty"`
}

// ClaudeToolReport is one tool with its decisions now and before.
type ClaudeToolReport struct {
	mcpname.ClaudeTool
	Now, Before ClaudeVerdict
}

// ClaudePair is one (rule, tool) pair.
type ClaudePair struct {
	Rule, Tool  int
	Now, Before permission.ClaudeMatch
	Change      permission.Change
}

// Visible reports whether the pair is listed by default: now or before is not "no".
func (p ClaudePair) Visible() bool {
	return p.Now != permission.ClaudeNo || p.Before != permission.ClaudeNo
}

// ClaudeCounts summarizes a Claude report.
type ClaudeCounts struct {
	Rules int `json:"rules"`
	Tools int `json:"tools"`
	Pairs int `json:"pairs"`
	// Lost counts every lost pair; LostRestrictions those of deny and ask rules.
	Lost             int `json:"lost"`
	LostRestrictions int `json:"lost_restrictions"`
	Gained           int `json:"gained"`
	// Changed counts the tools whose outcome differs between before and now.
	Changed int `json:"changed_outcomes"`
}

// ClaudeReport is the result of RunClaude.
type ClaudeReport struct {
	Now, Before permission.ClaudeRelease
	Trusted     bool
	Rules       []ClaudeRuleEntry
	Tools       []ClaudeToolReport
	// Pairs are ordered: lost restrictions first, then other lost pairs, then gained, then
	// the rest; rule-major inside each group.
	Pairs  []ClaudePair
	Counts ClaudeCounts
}

// claudeChange: only an applied match counts as matching (ignored is not).
func claudeChange(now, before permission.ClaudeMatch) permission.Change {
	n, b := now == permission.ClaudeMatched, before == permission.ClaudeMatched
	switch {
	case n && !b:
		return permission.ChangeGained
	case b && !n:
		return permission.ChangeLost
	}
	return permission.ChangeSame
}

// RunClaude evaluates every pair and every tool's decision now and before.
func RunClaude(in ClaudeInput) *ClaudeReport {
	rep := &ClaudeReport{Now: in.Now, Before: in.Before, Trusted: in.Trusted, Rules: in.Rules}
	rules := make([]permission.ClaudeRule, len(in.Rules))
	for i, r := range in.Rules {
		rules[i] = r.ClaudeRule
	}
	fNow, fBef := permission.ClaudeFeaturesOf(in.Now), permission.ClaudeFeaturesOf(in.Before)
	verdict := func(f permission.ClaudeFeatures, t mcpname.ClaudeTool) ClaudeVerdict {
		name := f.Release.Name(t.Server, t.Tool)
		d := permission.ClaudeDecide(f, rules, name, in.Trusted)
		v := ClaudeVerdict{Name: name, Decision: d.Decision, Rule: d.Rule, Outcome: d.Outcome}
		named := mcpname.ClaudeToolsNamed(f.Release.Era(), name, in.Tools)
		for _, o := range named {
			if o != t {
				v.SharedWith = append(v.SharedWith, o)
			}
		}
		v.Unreachable = len(named) > 1 && named[0] != t
		return v
	}
	for _, t := range in.Tools {
		tr := ClaudeToolReport{ClaudeTool: t, Now: verdict(fNow, t), Before: verdict(fBef, t)}
		rep.Tools = append(rep.Tools, tr)
		if tr.Now.Outcome != tr.Before.Outcome {
			rep.Counts.Changed++
		}
	}
	var groups [4][]ClaudePair
	for i, r := range in.Rules {
		for j, t := range rep.Tools {
			p := ClaudePair{Rule: i, Tool: j,
				Now:    permission.ClaudePairMatch(fNow, r.ClaudeRule, t.Now.Name, in.Trusted),
				Before: permission.ClaudePairMatch(fBef, r.ClaudeRule, t.Before.Name, in.Trusted)}
			p.Change = claudeChange(p.Now, p.Before)
			g := 3
			switch {
			case p.Change == permission.ChangeLost && r.Restrictive():
				g = 0
				rep.Counts.LostRestrictions++
			case p.Change == permission.ChangeLost:
				g = 1
			case p.Change == permission.ChangeGained:
				g = 2
				rep.Counts.Gained++
			}
			if p.Change == permission.ChangeLost {
				rep.Counts.Lost++
			}
			if p.Visible() {
				rep.Counts.Pairs++
			}
			groups[g] = append(groups[g], p)
		}
	}
	for _, g := range groups {
		rep.Pairs = append(rep.Pairs, g...)
	}
	rep.Counts.Rules, rep.Counts.Tools = len(in.Rules), len(in.Tools)
	return rep
}

// VisiblePairs returns the pairs listed by default (now or before not "no"), or all.
func (r *ClaudeReport) VisiblePairs(all bool) []ClaudePair {
	if all {
		return r.Pairs
	}
	var out []ClaudePair
	for _, p := range r.Pairs {
		if p.Visible() {
			out = append(out, p)
		}
	}
	return out
}

// LostRestrictions returns the pairs of deny and ask rules that matched before and no longer
// do (the first thing the report shows).
func (r *ClaudeReport) LostRestrictions() []ClaudePair {
	var out []ClaudePair
	for _, p := range r.Pairs {
		if p.Change == permission.ChangeLost && r.Rules[p.Rule].Restrictive() {
			out = append(out, p)
		}
	}
	return out
}

// ClaudePairColumns are the columns of the Claude pairs table.
var ClaudePairColumns = []string{"settings_file", "scope", "key", "index", "rule", "kind", "server", "tool",
	"name_now", "name_before", "now", "before", "change"}

// ClaudeToolColumns are the columns of the Claude tools table. shared_now names the other
// tools the current release gives the same name ("unreachable" when another one answers).
var ClaudeToolColumns = []string{"server", "tool", "name_now", "name_before", "decision_now", "rule_now",
	"outcome_now", "decision_before", "rule_before", "outcome_before", "shared_now"}

// PairRow returns the cells of one pair, in ClaudePairColumns order.
func (r *ClaudeReport) PairRow(p ClaudePair) []string {
	ru, t := r.Rules[p.Rule], r.Tools[p.Tool]
	return []string{ru.File, string(ru.Scope), ru.Key, strconv.Itoa(ru.Index), ru.Text, string(ru.Kind),
		t.Server, t.Tool, t.Now.Name, t.Before.Name, string(p.Now), string(p.Before), string(p.Change)}
}

// PairRows returns the rows of VisiblePairs(all).
func (r *ClaudeReport) PairRows(all bool) [][]string {
	var out [][]string
	for _, p := range r.VisiblePairs(all) {
		out = append(out, r.PairRow(p))
	}
	return out
}

// RuleText is the deciding rule of v as written, "" for none.
func (r *ClaudeReport) RuleText(v ClaudeVerdict) string {
	if v.Rule < 0 {
		return ""
	}
	return r.Rules[v.Rule].Text
}

// SharedText describes v.SharedWith: "lit/literature.search_pubmed" (comma-separated), with
// " (unreachable: that tool answers)" when another tool answers the name.
func SharedText(v ClaudeVerdict) string {
	s := ""
	for i, o := range v.SharedWith {
		if i > 0 {
			s += ", "
		}
		s += o.Server + "/" + o.Tool
	}
	if v.Unreachable && s != "" {
		s += " (unreachable: " + v.SharedWith[0].Server + "/" + v.SharedWith[0].Tool + " answers)"
	}
	return s
}

// ToolRows returns one row per tool, in ClaudeToolColumns order.
func (r *ClaudeReport) ToolRows() [][]string {
	var out [][]string
	for _, t := range r.Tools {
		out = append(out, []string{t.Server, t.Tool, t.Now.Name, t.Before.Name,
			string(t.Now.Decision), r.RuleText(t.Now), string(t.Now.Outcome),
			string(t.Before.Decision), r.RuleText(t.Before), string(t.Before.Outcome), SharedText(t.Now)})
	}
	return out
}
