package claude

import (
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
	Rules: auditRules, OwnChecks: true, Description: auditDescription, Homes: AuditHomes,
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

// ClaudeReport is the result of RunClaude: the rules, and the tools with their decisions
// under both releases; NowMatch and BeforeMatch say how each rule relates to each tool.
type ClaudeReport struct {
	Now, Before permission.ClaudeRelease
	Trusted     bool
	Rules       []ClaudeRuleEntry
	Tools       []ClaudeToolReport
	fNow, fBef  permission.ClaudeFeatures
}

// RunClaude evaluates every tool's decision now and before.
func RunClaude(in ClaudeInput) *ClaudeReport {
	rep := &ClaudeReport{Now: in.Now, Before: in.Before, Trusted: in.Trusted, Rules: in.Rules,
		fNow: permission.ClaudeFeaturesOf(in.Now), fBef: permission.ClaudeFeaturesOf(in.Before)}
	rules := make([]permission.ClaudeRule, len(in.Rules))
	for i, r := range in.Rules {
		rules[i] = r.ClaudeRule
	}
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
		rep.Tools = append(rep.Tools, ClaudeToolReport{ClaudeTool: t, Now: verdict(rep.fNow, t), Before: verdict(rep.fBef, t)})
	}
	return rep
}

// NowMatch is how rule i (ClaudeReport.Rules) relates to tool j (ClaudeReport.Tools) under
// the current release, as the tool is named there.
func (r *ClaudeReport) NowMatch(i, j int) permission.ClaudeMatch {
	return permission.ClaudePairMatch(r.fNow, r.Rules[i].ClaudeRule, r.Tools[j].Now.Name, r.Trusted)
}

// BeforeMatch is NowMatch under the earlier release.
func (r *ClaudeReport) BeforeMatch(i, j int) permission.ClaudeMatch {
	return permission.ClaudePairMatch(r.fBef, r.Rules[i].ClaudeRule, r.Tools[j].Before.Name, r.Trusted)
}
