package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/claude"
)

// auditAgentFlags are --agent and the audit flags the rooms declare (agent.Audit.Options), in
// list order (new values each call: a repeatable value must not carry over from one command
// line to the next).
func auditAgentFlags() []cli.Flag {
	out := []cli.Flag{&cli.StringFlag{Name: "agent", Value: string(all.Default.ID), Usage: "whose rules to audit: " + auditAgents(func(a *agent.Agent) string { return string(a.ID) + " (" + a.Audit.Reads + ")" })}}
	for _, a := range all.Auditors() {
		for _, o := range a.Audit.Options {
			out = append(out, optionFlag(o))
		}
	}
	return out
}

// claudeAuditOptions are the inputs of audit --agent claude.
type claudeAuditOptions struct {
	auditOptions
	Version, Before string
	ProjectKey      string
	ClaudeJSON      string
	MCPConfigs      []string
}

// claudeAuditDescription is the --agent claude part of audit --help.
const claudeAuditDescription = `

CLAUDE CODE (--agent claude): reads Claude Code's rule files — managed
(/etc/claude-code/managed-settings.json and managed-settings.d/*.json on Linux, /Library/Application
Support/ClaudeCode on macOS, C:\Program Files\ClaudeCode on Windows), user ($CLAUDE_CONFIG_DIR or
~/.claude: settings.json), project (DIR/.claude/settings.json), local (DIR/.claude/settings.local.json)
and legacy (projects[DIR].allowedTools in ~/.claude.json, where 1.0.0 kept rules) — with the project's
trust (hasTrustDialogAccepted in ~/.claude.json: 2.1.332 ignores the allow rules of an untrusted
project's .claude/settings.json and applies its deny and ask rules and the local file's allows).
The tools are found where the Claude Code repair finds raw identities: the MCP server keys of
~/.claude.json (mcpServers, top-level and per project), of each project's .mcp.json and of every
--mcp-config FILE (repeatable), the raw tools the project's sessions spell under those keys (names
of releases that kept tools raw) and their attributionMcpServer/attributionMcpTool pairs; with
--discover the configured servers are started and list their tools; --inventory FILE wins for the
servers it lists. A server known by its key only, and stored names no listed tool has, are
reported as INCOMPLETE (note, JSON incomplete_servers and unknown_session_names): their tools are
not audited. Every rule is paired with every tool under two releases: now (--claude-version,
default the newest known) and before (--before, default the oldest "version" in the project's
sessions). Each release names the tools in its own spelling and matches rules its own way: whole
names only in its spelling; mcp__<normalized server> from 1.0.51 (the raw key never);
mcp__<server>__* from 2.1.90; partial globs (mcp__lit__get_*) from 2.1.332; mcp__* never in allow,
every MCP tool in deny and ask from 2.1.332; ask rules not before 2.0.14 (1.0.51 has none). Pairs: match, no, or ignored (the rule names the
tool but the release does not apply it); change same, gained, lost. Tools: decision (deny, ask,
allow, default) and outcome (ran, ask, block; "not offered" where a deny removes the tool, from
2.1.90), now and before, and the tools a release gives the same name. A LOST RESTRICTION (a deny or
ask rule that matched before and no longer does) is printed first and listed first.
--format sarif: one result per lost pair (error), gained pair and pair whose rule now is ignored
(sessionfix/audit/refused; warning), at the rule file and line, with the Qwen audit's rule ids and
fingerprints; --baseline FILE (a previous --agent claude json or sarif output) exits 5 only for
findings not in it, and marks SARIF results new, unchanged or absent; --fail-on refused counts
the ignored pairs.
PATH (repeatable) names copies: a ~/.claude directory (settings.json, projects/; a claude.json or
.claude.json beside it is read as ~/.claude.json), a project directory (.claude/ inside), or a
project's .claude directory; then only the PATHs are read (no managed files), and --project-key
says which project of ~/.claude.json they are. --settings SCOPE=FILE (managed, user, project, local)
adds or replaces files. Columns (CSV): settings_file,scope,key,index,rule,kind,server,tool,
name_now,name_before,now,before,change; --tools-out: server,tool,name_now,name_before,decision_now,
rule_now,outcome_now,decision_before,rule_before,outcome_before,shared_now.
   sessionfix audit --agent claude --inventory tools.json --project ~/src/app --fail-on lost
   sessionfix audit --agent claude --mcp-config ~/src/app/mcp.json --discover --format sarif --out audit.sarif
   sessionfix audit --agent claude --inventory tools.json --before 1.0.51 --project-key /home/demo/src/lab \
       copy/dot-claude copy/lab/.claude --format html --out audit.html`

// claudeAuditRun carries the loaded inputs.
type claudeAuditRun struct {
	claude.ClaudeLoaded
	env     *Env
	known   *reports.SARIFBaseline // --baseline, nil without
	partial bool
	// redispatch are the stored calls of the audited sessions that reach another tool of the
	// audit's tool list today, or several (claude.AuditHistory).
	redispatch []check.Redispatch
}

// problem records and prints an input that could not be used.
func (r *claudeAuditRun) problem(err error) {
	r.Problems = append(r.Problems, err.Error())
	r.printProblem(err)
}

func (r *claudeAuditRun) printProblem(err error) {
	r.partial = true
	fmt.Fprintf(r.env.Err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

// note records and prints a note.
func (r *claudeAuditRun) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.Notes = append(r.Notes, s)
	r.printNote(s)
}

func (r *claudeAuditRun) printNote(s string) {
	fmt.Fprintf(r.env.Err, "audit: note: %s\n", reports.Printable(s))
}

// hooks print what claude.ClaudeLoaded's loaders say (they record it themselves).
func (r *claudeAuditRun) hooks() claude.ClaudeHooks {
	return claude.ClaudeHooks{Problem: r.printProblem, Note: r.printNote,
		Warn: func(w string) { fmt.Fprintf(r.env.Err, "sessionfix: warning: %s\n", reports.Printable(w)) }}
}

// inputs are the rule-file flags as claude.ClaudeInputs.
func (r *claudeAuditRun) inputs(paths []string, project, cwd, projectKey, claudeJSON string, settings []string, command string) claude.ClaudeInputs {
	return claude.ClaudeInputs{Paths: paths, Project: project, Cwd: cwd, ProjectKey: projectKey, ClaudeJSON: claudeJSON,
		Settings: settings, Getenv: r.env.Getenv, Home: r.env.Home, Command: command}
}

func newClaudeAuditOptions(c *cli.Context, base auditOptions) (claudeAuditOptions, error) {
	o := claudeAuditOptions{auditOptions: base, Version: c.String("claude-version"), Before: c.String("before"),
		ProjectKey: c.String("project-key"), ClaudeJSON: c.String("claude-json"), MCPConfigs: repeated(c, "mcp-config")}
	if c.IsSet("mode") && c.String("mode") != string(permission.ModeDefault) {
		return o, usageErrorf("--mode: the Claude Code audit computes outcomes in Claude Code's default permission mode only")
	}
	return o, nil
}

func runClaudeAudit(ctx context.Context, env *Env, o claudeAuditOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	now, before, err := claude.ClaudeReleases(o.Version, o.Before)
	if err != nil {
		return err
	}
	r := &claudeAuditRun{env: env}
	if o.Baseline != "" {
		known, err := loadAuditBaseline(o.Baseline)
		if err != nil {
			return err
		}
		r.known = known
	}

	h := r.hooks()
	srcs, configDir, err := r.Resolve(r.inputs(o.Paths, o.Project, o.Cwd, o.ProjectKey, o.ClaudeJSON, o.Settings, "audit"), h)
	if err != nil {
		return err
	}
	eng := pipeline.AuditEngine(pipelineEnv(env), o.DiscoverTimeout)
	in := claude.ClaudeToolsInput{Inventory: o.Inventory, Discover: o.Discover, MCPConfigs: o.MCPConfigs, Now: now.String(),
		Home: configDir, FromEnv: len(o.Paths) == 0, Project: r.Project}
	if r.Global != nil {
		in.Global = r.Global.Path
	}
	for _, s := range srcs {
		if s.Scope == permission.ClaudeScopeProject && !s.Explicit {
			// <project>/.claude/settings.json → <project>/.mcp.json
			in.MCPJSON = append(in.MCPJSON, filepath.Join(filepath.Dir(filepath.Dir(s.Path)), ".mcp.json"))
		}
	}
	list, err := claude.ClaudeTools(ctx, eng, in, r.problem, func(s string) { r.note("%s", s) })
	if err != nil {
		return err
	}
	r.InventoryFrom, r.Incomplete, r.Unknown = list.From, list.Incomplete, list.Unknown
	tools := list.Tools
	rules, trusted := r.LoadRules(srcs, h)
	before = r.DefaultBefore(before, now, configDir, h)

	rep := claude.RunClaude(claude.ClaudeInput{Rules: rules, Trusted: trusted, Tools: tools, Now: now, Before: before})
	rd, errs, err := claude.AuditHistory(ctx, eng.History, configDir, tools, list.From, now.String())
	if err != nil {
		r.problem(fmt.Errorf("re-dispatch check of the session history: %w", err))
	}
	for _, e := range errs {
		r.problem(e)
	}
	r.redispatch = pipeline.Redispatches(rd)
	// The lost restrictions come first, on stderr too.
	for _, p := range rep.LostRestrictions() {
		ru, t := rep.Rules[p.Rule], rep.Tools[p.Tool]
		fmt.Fprintf(env.Err, "audit: LOST RESTRICTION: %s rule %q (%s:%d:%d, %s) matched %s/%s as %s under %s and matches nothing of it under %s (now %s: %s)\n",
			ru.Kind, reports.Printable(ru.Text), reports.Printable(ru.File), ru.Line, ru.Column, ru.Key,
			reports.Printable(t.Server), reports.Printable(t.Tool), reports.Printable(t.Before.Name), before, now,
			reports.Printable(t.Now.Name), t.Now.Outcome)
	}
	c := rep.Counts
	pairs := reports.PrintableTable(claude.ClaudePairColumns, rep.PairRows(o.AllPairs))
	toolTable := reports.PrintableTable(claude.ClaudeToolColumns, rep.ToolRows())
	return finishAudit(ctx, env, o.auditOptions, r.known, r.redispatch, func() bool { return r.partial }, auditFindings{
		Pairs: pairs, Tools: toolTable,
		Page: func() *reports.HTMLPage {
			return rep.Page(&r.ClaudeLoaded, env.Now(), version, o.AllPairs, pairs, toolTable)
		},
		Doc: func(rd []check.Redispatch) any {
			return struct {
				*claude.ClaudeJSONReport
				Redispatch []check.Redispatch `json:"redispatch"`
			}{rep.JSON(&r.ClaudeLoaded, env.Now(), o.AllPairs), rd}
		},
		SARIF: rep.SARIF, Rules: claude.ClaudeSARIFRules, Read: r.Read(o.Inventory),
		Summary: func() {
			fmt.Fprintf(env.Err, "audit: Claude Code %s (before: %s), project %s (%s): %s, %s (inventory: %s), %s listed: %d lost (%s), %d gained; %s with another outcome\n",
				now, before, reports.Printable(claude.OrNone(r.Project)), claude.TrustWord(trusted), plural(c.Rules, "rule"), plural(c.Tools, "tool"),
				reports.Printable(r.InventoryFrom), plural(len(rep.VisiblePairs(o.AllPairs)), "pair"), c.Lost, plural(c.LostRestrictions, "restriction"), c.Gained, plural(c.Changed, "tool"))
		},
		FailCounts: func(results []reports.SARIFResult) map[string]int {
			refused := 0
			for _, x := range results {
				if x.RuleID == "sessionfix/audit/refused" {
					refused++
				}
			}
			return map[string]int{"lost": c.Lost, "gained": c.Gained, "refused": refused}
		},
	})
}
