package claude

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// auditDescription is the --agent claude part of audit --help (Audit.Description).
const auditDescription = `

CLAUDE CODE (--agent claude): reads Claude Code's rule files — managed
(/etc/claude-code/managed-settings.json and managed-settings.d/*.json on Linux, /Library/Application
Support/ClaudeCode on macOS, C:\Program Files\ClaudeCode on Windows), user ($CLAUDE_CONFIG_DIR or
~/.claude: settings.json), project (DIR/.claude/settings.json: DIR is --project, default the working
directory unless it is the home, whose .claude is the user's; --project none: no project), local
(DIR/.claude/settings.local.json)
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
(sessionfix/audit/refused; warning), at the rule file and line, with the rule ids and
fingerprints all audits share; --baseline FILE (a previous --agent claude json or sarif output) exits 5 only for
findings not in it, and marks SARIF results new, unchanged or absent; --fail-on refused counts
the ignored pairs.
PATH (repeatable) names copies: a ~/.claude directory (settings.json, projects/; a claude.json or
.claude.json beside it is read as ~/.claude.json), a project directory (.claude/ inside), or a
project's .claude directory; then only the PATHs are read (no managed files), and --project-key
says which project of ~/.claude.json they are. --settings [SCOPE=]FILE (managed, user, project, local)
adds or replaces files; a bare FILE takes the scope its place says (~/.claude/settings.json user,
DIR/.claude/settings.json project, DIR/.claude/settings.local.json local, managed-settings.json
managed). Columns (CSV): settings_file,scope,key,index,rule,kind,server,tool,
name_now,name_before,now,before,change; --tools-out: server,tool,name_now,name_before,decision_now,
rule_now,outcome_now,decision_before,rule_before,outcome_before,shared_now.
   sessionfix audit --agent claude --inventory tools.json --project ~/src/lab --fail-on lost
   sessionfix audit --agent claude --mcp-config mcp-config.json --discover --format sarif --out audit.sarif
   sessionfix audit --agent claude --inventory tools.json --before 1.0.51 --project-key /home/demo/src/lab \
       --format html --out audit.html copy/dot-claude copy/lab/.claude`

// Loading is ClaudeLoaded as a command loads it: every problem and note met is recorded and
// printed to the standard error given (audit --agent claude; fix --rules gives its hooks in RuleFixInput, rulefix.go).
type Loading struct {
	ClaudeLoaded
	err     io.Writer
	partial bool
}

// NewLoading prints to err (standard error).
func NewLoading(err io.Writer) *Loading { return &Loading{err: err} }

// Problem records and prints an input that could not be used.
func (r *Loading) Problem(err error) {
	r.Problems = append(r.Problems, err.Error())
	r.printProblem(err)
}

func (r *Loading) printProblem(err error) {
	r.partial = true
	fmt.Fprintf(r.err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

// note records and prints a note.
func (r *Loading) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.Notes = append(r.Notes, s)
	r.printNote(s)
}

func (r *Loading) printNote(s string) {
	fmt.Fprintf(r.err, "audit: note: %s\n", reports.Printable(s))
}

// Hooks print what ClaudeLoaded's loaders say (they record it themselves).
func (r *Loading) Hooks() ClaudeHooks {
	return ClaudeHooks{Problem: r.printProblem, Note: r.printNote,
		Warn: func(w string) { fmt.Fprintf(r.err, "sessionfix: warning: %s\n", reports.Printable(w)) }}
}

// auditRules is Claude Code's audit run (Audit.Rules): the rule files (Resolve, LoadRules)
// with the project's trust, the tool list (ClaudeTools), the decisions under two releases
// (RunClaude; the engine matches every rule × tool through the report), the sessions'
// re-dispatch check (AuditHistory, its findings handed to o.Redispatch). Problems and notes are
// said as they are met (rules.Audit.Said); the engine says the LOST RESTRICTION lines first.
func auditRules(ctx context.Context, o agent.AuditInput) (*rules.Audit, error) {
	if o.ModeSet && o.Mode != string(permission.ModeDefault) {
		return nil, usage.Errorf("--mode: the Claude Code audit computes outcomes in Claude Code's default permission mode only")
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	now, before, err := ClaudeReleases(o.Options.String(VersionOption), o.Options.String(BeforeOption))
	if err != nil {
		return nil, err
	}
	if err := o.Baseline(); err != nil {
		return nil, err
	}
	r := NewLoading(o.Err)
	env := o.Engine.Env
	h := r.Hooks()
	srcs, configDir, err := r.Resolve(ClaudeInputs{Paths: o.Paths, Project: o.Project, Cwd: o.Cwd, ProjectKey: o.Options.String(ProjectKeyOption),
		ClaudeJSON: o.Options.String(ClaudeJSONOption), Settings: o.Settings, Getenv: env.Getenv, Home: env.Home, Command: "audit"}, h)
	if err != nil {
		return nil, err
	}
	in := ClaudeToolsInput{Inventory: o.Inventory, Discover: o.Discover, MCPConfigs: o.Options.Strings(MCPConfigOption), Now: now.String(),
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
	list, err := ClaudeTools(ctx, o.Engine, in, r.Problem, func(s string) { r.note("%s", s) })
	if err != nil {
		return nil, err
	}
	r.InventoryFrom, r.Incomplete, r.Unknown = list.From, list.Incomplete, list.Unknown
	tools := list.Tools
	ruleList, trusted := r.LoadRules(srcs, h)
	before = r.DefaultBefore(before, now, configDir, h)

	rep := RunClaude(ClaudeInput{Rules: ruleList, Trusted: trusted, Tools: tools, Now: now, Before: before})
	rd, errs, err := AuditHistory(ctx, o.Engine.History, configDir, tools, list.From, now.String())
	if err != nil {
		r.Problem(fmt.Errorf("re-dispatch check of the session history: %w", err))
	}
	for _, e := range errs {
		r.Problem(e)
	}
	if o.Redispatch != nil {
		o.Redispatch(rd)
	}
	a := rep.RuleAudit(&r.ClaudeLoaded, r.Read(o.Inventory))
	a.Partial = r.partial
	return a, nil
}
