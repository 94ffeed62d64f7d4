package claude

import (
	"context"
	"encoding/json"

	"github.com/sessionfix/sessionfix/reports"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
)

// ProjectOption is fix --rules' --project (the project whose .claude/settings*.json are
// migrated).
const ProjectOption = "project"

// RuleFix is Claude Code's permission-rule migration as fix --rules offers it (issue 11 item
// 5; agent.RuleFix): rules of the user, project and local settings and ~/.claude.json's legacy
// allowedTools written in an older release's spelling, rewritten to the spelling that names the
// same raw tool under --claude-version (PlanRuleFiles).
var RuleFix = &agent.RuleFix{
	What:    "the Claude Code rule migration",
	Rules:   "Claude Code rules",
	Usage:   "Claude Code's settings.json, settings.local.json and ~/.claude.json allowedTools (the default)",
	Default: true,
	Options: []agent.Option{
		{Name: VersionOption, Usage: "with --rules: the Claude Code release whose spelling and matching the rules are migrated to (default: " + mcpname.ClaudeLatestVersion + ")"},
		{Name: ProjectOption, File: true, Usage: "with --rules: the project whose .claude/settings*.json are migrated (default: the current directory)"},
		{Name: ProjectKeyOption, Usage: "with --rules: the project directory as Claude Code saw it (its key in ~/.claude.json), for copies given as PATH"},
		{Name: ClaudeJSONOption, File: true, Usage: "with --rules: the ~/.claude.json whose projects[*].allowedTools are migrated"},
	},
	Uses: []string{AllowSharedOption},
	Plan: planRuleFix,
	Help: `

CLAUDE CODE RULES (--rules): a rule written in an older release's spelling matches nothing under
the current one (mcp__foo.bar__deploy.prod in deny no longer denies deploy.prod from 1.0.51 on).
fix --rules --inventory FILE plans, for every rule of the user, project and local settings and
the legacy allowedTools of ~/.claude.json that names an inventory tool only in a legacy spelling
(a whole name of an older naming era, or a raw server key), the spelling that names the same raw
tool under --claude-version, and shows each rule with what it matched before and what the new
rule matches. A rewrite that would also grant a tool the old rule did not (a name two raw tools
share) is kept unless --allow-shared; for deny and ask it is made and noted. A migrated deny or
ask rule that would override a migrated allow rule of the same tool (deny, then ask, then allow:
both legacy spellings matched nothing, after the rewrite the restriction wins) is flagged CONFLICT
on both rules. Managed settings are
read, never written. With --apply the rule strings are replaced byte for byte (comments,
formatting and every other byte kept), with backups in a run that sessionfix undo restores.
fix --rules rewrites only rule files; fix without --rules never writes them.`,
}

// planRuleFix is RuleFix.Plan: --claude-version (default: the newest known release; a bad one
// is a usage error), the inventory's tools (InventoryTools), the rule files of the PATHs or of
// the user's home and --project (ClaudeLoaded.Resolve, with ~/.claude.json's legacy
// allowedTools), then PlanRuleFiles.
func planRuleFix(ctx context.Context, in agent.RuleFixInput) (*agent.RuleFixPlan, error) {
	now := permission.ClaudeNewest()
	if v := in.Options.String(VersionOption); v != "" {
		r, err := permission.ParseClaudeRelease(v)
		if err != nil {
			return nil, usage.Errorf("--%s: %v", VersionOption, err)
		}
		now = r
	}
	tools, err := InventoryTools(in.Inventory)
	if err != nil {
		return nil, err
	}
	var l ClaudeLoaded
	srcs, _, err := l.Resolve(ClaudeInputs{Paths: in.Paths, Project: in.Options.String(ProjectOption), Cwd: in.Cwd,
		ProjectKey: in.Options.String(ProjectKeyOption), ClaudeJSON: in.Options.String(ClaudeJSONOption),
		Getenv: in.Env.Getenv, Home: in.Env.Home, Command: "fix --rules"}, ClaudeHooks{Problem: in.Problem, Note: in.Note, Warn: in.Warn})
	if err != nil {
		return nil, err
	}
	if l.Global != nil {
		srcs = append(srcs, ClaudeSource{Path: l.Global.Path, Scope: permission.ClaudeScopeLegacy})
	}
	rep, files := PlanRuleFiles(ctx, srcs, tools, now, in.Options.Bool(AllowSharedOption), in.Problem)
	out := &agent.RuleFixPlan{Version: now.String(), Changes: make([]agent.RuleChange, len(rep.Rules)), Files: make([]agent.RuleFile, len(files))}
	for i, r := range rep.Rules {
		out.Changes[i] = agent.RuleChange{File: r.File, Line: r.Line, Column: r.Column, Scope: r.Scope, Key: r.Key, Index: r.Index,
			Action: r.Action, Rewrite: r.Action == string(MigrateRewrite), Old: r.Old, New: r.New, WrittenFor: r.WrittenFor,
			Before: r.Before, After: r.After, Extra: r.Extra, Note: r.Note, Overrides: r.Overrides}
	}
	for i, f := range files {
		out.Files[i] = agent.RuleFile{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions, Rewrites: f.Rewrites}
	}
	out.Report = func(mode, run string, outcomes []agent.RuleOutcome, problems []string) json.Marshaler {
		rep.Mode, rep.Run = mode, run
		for _, oc := range outcomes {
			rep.Outcomes = append(rep.Outcomes, RuleOutRow{File: oc.File, Status: oc.Status, Rules: oc.Rules, Reason: oc.Reason})
		}
		rep.Errors = append(rep.Errors, problems...)
		return reports.Document(rep)
	}
	return out, nil
}
