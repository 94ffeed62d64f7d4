package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/rulefix"
	"github.com/sessionfix/sessionfix/store/claude"
)

// fixRulesFlags are fix's flags for the Claude Code rule migration (issue 11 item 5).
var fixRulesFlags = []cli.Flag{
	&cli.BoolFlag{Name: "rules", Usage: "rewrite legacy-spelled Claude Code permission rules (settings.json, settings.local.json, ~/.claude.json allowedTools) to the current spelling; without it rule files are never written"},
	&cli.StringFlag{Name: "claude-version", Usage: "with --rules: the Claude Code release whose spelling and matching the rules are migrated to (default: " + mcpname.ClaudeLatestVersion + ")"},
	&cli.StringFlag{Name: "project", Usage: "with --rules: the project whose .claude/settings*.json are migrated (default: the current directory)", TakesFile: true},
	&cli.StringFlag{Name: "project-key", Usage: "with --rules: the project directory as Claude Code saw it (its key in ~/.claude.json), for copies given as PATH"},
	&cli.StringFlag{Name: "claude-json", Usage: "with --rules: the ~/.claude.json whose projects[*].allowedTools are migrated", TakesFile: true},
}

// fixRulesWhat names the rule migration in fix's usage errors.
const fixRulesWhat = "the Claude Code rule migration"

// fixRulesOnly are the flags that go with --rules only (fixRulesFlags after --rules), in the
// order fix checks them.
func fixRulesOnly() []string {
	var out []string
	for _, f := range fixRulesFlags[1:] {
		out = append(out, f.Names()[0])
	}
	return out
}

const fixRulesDescription = `

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
fix --rules rewrites only rule files; fix without --rules never writes them.`

type fixRulesOptions struct {
	fixOptions
	Version     string
	Project     string
	ProjectKey  string
	ClaudeJSON  string
	AllowShared bool
	Cwd         string
}

func runFixRules(ctx context.Context, env *Env, o fixRulesOptions) error {
	switch {
	case o.Format != "table" && o.Format != "json":
		return usageErrorf("--format must be table or json, not %q", o.Format)
	case o.Apply && o.DryRun:
		return usageErrorf("--apply and --dry-run contradict each other (nothing was changed)")
	case o.Apply && !o.Yes && !env.InTerminal:
		return usageErrorf("--apply needs --yes when standard input is not a terminal (nothing was changed)")
	case o.Common.Inventory == "":
		return usageErrorf("fix --rules needs --inventory FILE (the raw server keys and tool names the rules are about)")
	case o.Common.Agent != "" && o.Common.Agent != "claude":
		return usageErrorf("--rules migrates Claude Code rules; --agent %s does not go with it", o.Common.Agent)
	case o.Common.Discover || o.Common.KeepTruncated || o.Common.RewriteLossy || o.Common.AgentOptions.String("codex-config") != "":
		return usageErrorf("--rules migrates Claude Code rules only: --discover, --keep-truncated, --rewrite-lossy and --codex-config do not go with it")
	}
	now := permission.ClaudeNewest()
	if o.Version != "" {
		v, err := permission.ParseClaudeRelease(o.Version)
		if err != nil {
			return usageErrorf("--claude-version: %v", err)
		}
		now = v
	}
	tools, err := claude.InventoryTools(o.Common.Inventory)
	if err != nil {
		return err
	}
	r := &claudeAuditRun{env: env}
	srcs, _, err := r.Resolve(r.inputs(o.Paths, o.Project, o.Cwd, o.ProjectKey, o.ClaudeJSON, nil, "fix --rules"), r.hooks())
	if err != nil {
		return err
	}
	if r.Global != nil {
		srcs = append(srcs, claude.ClaudeSource{Path: r.Global.Path, Scope: permission.ClaudeScopeLegacy})
	}
	o.StateDir = stateDirOf(env, o.StateDir)

	rep, files := claude.PlanRuleFiles(ctx, srcs, tools, now, o.AllowShared, r.problem)
	plans := make([]rulefix.RuleFile, len(files))
	for i, f := range files {
		plans[i] = rulefix.RuleFile{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions, Rewrites: f.Rewrites}
	}
	pl := rulefix.Plan(plans)
	rewrites := pl.Rewrites
	if o.Format == "table" {
		writeRulePlan(env, rep.Rules, now)
	}
	if !o.Apply || rewrites == 0 {
		if o.Format == "json" {
			rep.Errors = append(rep.Errors, r.Problems...)
			if err := reports.WriteJSON(env.Out, rep); err != nil {
				return err
			}
		} else if rewrites > 0 {
			fmt.Fprintln(env.Out, "dry-run: nothing was changed; run with --rules --apply --yes to rewrite")
		}
		return rulesEnd(r)
	}
	if !o.Yes {
		flushOut(env)
		fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
			plural(rewrites, "rule"), plural(len(pl.Plan.Stores), "file"), o.StateDir)
		ok, err := confirm(ctx, env.In)
		if err != nil {
			return err
		}
		if !ok {
			return declined(env)
		}
	}
	cleanLeftovers(env, o.StateDir)
	if err := rewrite.CheckStateDir(o.StateDir); err != nil {
		return err
	}
	res, outcomes, inUse, err := rulefix.Apply(ctx, pl, rewrite.ApplyOptions{StateDir: o.StateDir, Command: "fix --rules --apply", Now: env.Now}, r.problem)
	if res == nil {
		return err
	}
	rep.Mode, rep.Run = "apply", res.RunID
	for _, oc := range outcomes {
		rep.Outcomes = append(rep.Outcomes, claude.RuleOutRow{File: oc.File, Status: oc.Status, Rules: oc.Rules, Reason: oc.Reason})
	}
	if o.Format == "json" {
		rep.Errors = append(rep.Errors, r.Problems...)
		if err := reports.WriteJSON(env.Out, rep); err != nil {
			return err
		}
	} else {
		n, files := 0, 0
		for _, row := range rep.Outcomes {
			if row.Status == "rewritten" {
				n += row.Rules
				files++
			} else {
				fmt.Fprintf(env.Out, "%s: %s: %s\n", reports.Printable(row.File), row.Status, reports.Printable(row.Reason))
			}
		}
		fmt.Fprintf(env.Out, "rewrote %s in %s\n", plural(n, "rule"), plural(files, "file"))
		if res.RunID != "" {
			fmt.Fprintf(env.Out, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
				res.RunID, res.Dir, reports.ShellQuote(o.StateDir), res.RunID)
		}
	}
	if err != nil {
		return err
	}
	if inUse && !r.partial {
		return withCode(exitInUse)
	}
	return rulesEnd(r)
}

func rulesEnd(r *claudeAuditRun) error {
	if r.partial {
		return withCode(exitPartial)
	}
	return nil
}

// writeRulePlan prints each rule: where, old → new, what it matched before, what it matches
// after, and the flag.
func writeRulePlan(env *Env, rows []claude.RuleRow, now permission.ClaudeRelease) {
	if len(rows) == 0 {
		fmt.Fprintf(env.Out, "no legacy-spelled rule: every rule that names an inventory tool already uses %s's spelling\n", now)
		return
	}
	fmt.Fprintf(env.Out, "Claude Code rules in a legacy spelling (migrated to %s):\n", now)
	for _, r := range rows {
		arrow := r.New
		if r.Action != string(claude.MigrateRewrite) {
			arrow = "(kept)"
		}
		fmt.Fprintf(env.Out, "%s:%d:%d %s %s[%d]: %s %q → %s\n", reports.Printable(r.File), r.Line, r.Column, r.Scope, r.Key, r.Index,
			r.Action, reports.Printable(r.Old), reports.Printable(arrow))
		fmt.Fprintf(env.Out, "    matched before (%s spelling): %s\n", r.WrittenFor, reports.Printable(claude.OrNone(strings.Join(r.Before, ", "))))
		if r.New != "" {
			fmt.Fprintf(env.Out, "    %s matches under %s: %s\n", reports.Printable(r.New), now, reports.Printable(claude.OrNone(strings.Join(r.After, ", "))))
		}
		if len(r.Extra) > 0 {
			fmt.Fprintf(env.Out, "    SHARED NAME: also %s\n", reports.Printable(strings.Join(r.Extra, ", ")))
		}
		if r.Note != "" {
			fmt.Fprintf(env.Out, "    note: %s\n", reports.Printable(r.Note))
		}
		for _, ov := range r.Overrides {
			fmt.Fprintf(env.Out, "    CONFLICT: %s\n", reports.Printable(ov))
		}
	}
}

func newFixRulesOptions(c *cli.Context, base fixOptions) (fixRulesOptions, error) {
	wd, err := os.Getwd()
	if err != nil {
		return fixRulesOptions{}, fmt.Errorf("fix: current directory: %w", err)
	}
	return fixRulesOptions{fixOptions: base, Version: c.String("claude-version"), Project: c.String("project"),
		ProjectKey: c.String("project-key"), ClaudeJSON: c.String("claude-json"), AllowShared: c.Bool("allow-shared"), Cwd: wd}, nil
}
