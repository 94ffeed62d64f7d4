package qwen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/qwen/settings"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/permission/rules"
	"github.com/sessionfix/sessionfix/reports"
)

// auditUsage words audit's shared input flags for Qwen Code (Audit.Usage; --help shows them).
var auditUsage = map[string]string{
	"settings": "settings file to read, as FILE or SCOPE=FILE (repeatable; default: the scopes Qwen Code loads)",
	"project":  "workspace directory whose .qwen/settings.json and .qwen/agents are read (default: current directory, unless it is the home; without --settings only); none: no workspace or project scope",
	"agents":   "directory of subagent .md files (repeatable; default: .qwen/agents next to the settings files)",
	"history":  "session stores to infer tool names from when there is no inventory (default: Qwen Code's runtime directory)",
}

// auditDescription is Qwen Code's part of audit --help (Audit.Description): the default
// agent's, so it opens the description.
const auditDescription = `Reads Qwen Code settings (permissions.allow/ask/deny, tools.allowed/exclude/disabled,
mcp.allowed/excluded, mcpServers includeTools/excludeTools) and subagent files (disallowedTools),
pairs every rule with every MCP tool of the inventory and says, per pair, whether the rule
matches the tool now ("match", "no", or "refused": an allow rule the registry ambiguity guard
refuses), whether it matched before the provider-safe rename (against the tool's legacy name),
and the change ("same", "gained", "lost"). Per tool: the decision (deny, ask, allow, default,
disabled, excluded, disallowed), the rule that decided and the outcome (ran, ask, block), now
and before. Nothing is written but the reports.

PATH (repeatable) audits a copied Qwen Code home (a ~/.qwen: settings.json as the user scope,
agents/, and its session history) or a project directory (.qwen/settings.json as the workspace
scope, .qwen/agents): only what the PATHs hold is read (plus any --settings, --agents,
--history given), never the settings of whoever runs sessionfix.

Settings: without PATH or --settings, the files Qwen Code loads: system defaults, user
($QWEN_HOME/settings.json, else ~/.qwen/settings.json), workspace (--project DIR, default the
current directory: DIR/.qwen/settings.json) and system (/etc/qwen-code/settings.json or
$QWEN_CODE_SYSTEM_SETTINGS_PATH). --settings FILE (repeatable) reads only the files given; write
SCOPE=FILE to set the scope (user, workspace, system, system-defaults); a bare FILE is "user"
when it is the user settings file, "workspace" when it is DIR/.qwen/settings.json, else
"explicit" (merged after the workspace, before the system scope).
Subagents: .qwen/agents/*.md next to each user or workspace settings file, or --agents DIR.
A file that cannot be parsed is reported with file:line:col; the rest goes on (exit 3).

Inventory (the MCP tools): --inventory FILE ({"servers": {"<key>": {"trust": false, "tools":
["<raw tool name>", …]}}}), or --discover, which STARTS EVERY MCP SERVER CONFIGURED IN THE
SETTINGS (runs their commands, connects to their URLs with their headers) and calls tools/list,
each within --discover-timeout; a server that fails is reported (for a command: its exit status
and last stderr lines, secrets redacted) and the rest go on (exit 3); when every server fails,
no report is written (exit 1).
Discovery never happens unless asked. Without either, server keys come from mcpServers and
tool names from the session history (--history PATH, default Qwen Code's runtime directory)
where they can be recovered; both tables then get a last column "inventory" saying "inferred".

Outputs: --format csv (default) writes the pairs table to --out (default "-", standard output):
   settings_file,scope,key,index,rule,server,tool,registered_name,now,before,change
one row per pair where now or before is not "no" (--all-pairs: every pair). --tools-out PATH
writes the tools table as CSV (with any --format):
   server,tool,registered_name,legacy_name,decision_now,rule_now,outcome_now,
   decision_before,rule_before,outcome_before
--format html writes one self-contained page (both tables, counts, sort and filter; no network
fetches; readable with scripts off); --format json writes everything, with rule origins
(line, column) and aliases; --format sarif writes SARIF 2.1.0 for code scanning: one result per
lost (error), gained or refused (warning) pair, rule ids sessionfix/audit/lost, …/gained,
…/refused, located at the settings file and the rule's line. Cells starting with = + - @ tab or CR are made inert for
spreadsheets; control and bidi characters are shown as \uXXXX in CSV and HTML. Rules are shown
as written (before $VAR expansion); env and header values never appear.

Outcomes are computed in --mode (default: default, as docs/audit.md §2 asks). --subagent NAME computes
the tool decisions for calls made by that subagent (its disallowedTools hide tools).

--fail-on lost,refused,gained (any subset) exits 5 when such a pair exists: for scheduled audits
(exit 3, input that could not be read, wins: the findings may then be incomplete).
--baseline FILE (a previous audit --format json or sarif) exits 5 only for a lost, gained or
refused pair not in FILE (of the --fail-on classes when given; a pair's identity: class,
settings file, key, rule text, raw tool identity, not the line); with --format sarif each result
carries baselineState (new, unchanged) and the baseline's results gone now follow as absent.
A summary line goes to standard error.

EXAMPLES:
   sessionfix audit --inventory tools.json --out pairs.csv --tools-out tools.csv
   sessionfix audit --settings ~/.qwen/settings.json --settings workspace=app/.qwen/settings.json \
       --agents app/.qwen/agents --inventory tools.json --format html --out audit.html
   sessionfix audit --agent qwen --discover --discover-timeout 20s --format json --out audit.json
   sessionfix audit --format html --out audit.html tickets/4711/user-qwen tickets/4711/app
   sessionfix audit --inventory tools.json --fail-on lost,refused --out /dev/null   # cron
   sessionfix audit --inventory tools.json --format sarif --out audit.sarif   # today's findings
   sessionfix audit --inventory tools.json --baseline audit.sarif --format sarif --out now.sarif
`

// noProjectValue is --project none: no workspace scope (as when the working directory is the
// home, which settings.Discover never reads as a workspace).
const noProjectValue = "none"

// auditRun carries one audit's inputs and whatever went wrong on the way.
type auditRun struct {
	Loaded
	err     io.Writer
	partial bool
}

// problem prints an input that could not be used (Load records it in Loaded.Problems).
func (r *auditRun) problem(err error) {
	r.partial = true
	fmt.Fprintf(r.err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

func (r *auditRun) warn(format string, args ...any) {
	fmt.Fprintf(r.err, "sessionfix: "+format+"\n", args...)
}

// auditRules is Qwen Code's audit run (Audit.Rules): the PATH inputs or the settings scopes,
// the subagents and the inventory (Load: a file, discovered with the engine's MCP client, or
// inferred from the stored names), the rules matched now and before the rename (Run: the
// engine's Semantics), the history's re-dispatch check (AuditHistory, its findings handed to
// o.Redispatch). Problems are said as they are met (rules.Audit.Said).
func auditRules(ctx context.Context, o agent.AuditInput) (*rules.Audit, error) {
	var sessions []string
	noProject := o.Project == noProjectValue
	if noProject {
		o.Project = "" // --project none: no workspace scope
	}
	if len(o.Paths) > 0 {
		if o.Project != "" {
			return nil, usage.Errorf("--project and PATH exclude each other: give the project directory as a PATH")
		}
		if err := addPathInputs(o.Err, &o, &sessions); err != nil {
			return nil, err
		}
	} else if o.Project == "" && len(o.Settings) == 0 && !noProject {
		o.Project = o.Cwd
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.Baseline(); err != nil {
		return nil, err
	}
	senv := o.Engine.Vars
	r := &auditRun{err: o.Err}
	dopts := settings.DiscoverOptions{Env: senv, Home: o.Engine.Env.Home, ProjectDir: o.Project, Cwd: o.Cwd}
	sources, err := settingsSources(o.Settings, o.Paths, dopts)
	if err != nil {
		return nil, err
	}
	loaded, err := Load(ctx, LoadOptions{Sources: sources, Explicit: len(o.Settings) > 0, FromPaths: len(o.Paths) > 0,
		Discover: dopts, Agents: o.Agents, Inventory: o.Inventory, DiscoverTools: o.Discover,
		History: o.History, Getenv: o.Engine.Env.Getenv},
		Hooks{Problem: r.problem, Note: func(s string) { r.warn("%s", s) },
			Progress: func(s string) { fmt.Fprintln(o.Err, s) }, StoredNames: o.Engine.StoredNames, ListTools: o.Engine.ListTools, Renames: o.Engine.Renames})
	if err != nil {
		return nil, err
	}
	r.Loaded = *loaded

	rep, err := Run(Input{Settings: r.Merged, Agents: r.Agents, Inventory: r.Inventory,
		Mode: permission.Mode(o.Mode), Agent: o.Subagent})
	if err != nil {
		if errors.Is(err, ErrUnknownAgent) {
			return nil, usage.Errorf("--subagent %q: no such subagent in %s", o.Subagent, strings.Join(r.AgentDirs, ", "))
		}
		return nil, err
	}
	if len(o.History) == 0 {
		o.History = sessions
	}
	rd, probs, err := AuditHistory(ctx, o.Engine.History, o.History, r.Inventory, r.InventoryFrom)
	if err != nil {
		r.problem(fmt.Errorf("re-dispatch check of the session history: %w", err))
	}
	for _, e := range probs {
		r.problem(e)
	}

	if o.Redispatch != nil {
		o.Redispatch(rd)
	}
	a := rep.RuleAudit(&r.Loaded, r.Read(o.Inventory))
	a.Partial = r.partial
	return a, nil
}

// auditHomes is Audit.Homes: each PATH that is a Qwen Code home (a copied ~/.qwen, or a
// user's home directory whose .qwen holds projects/: settings.InputsOf) is audited on its own,
// with every project PATH; nil when at most one home is given (issue 23 item 1: the "user" scopes
// of two users were merged into one decision table).
func auditHomes(paths []string) []agent.AuditHome {
	var homes, others []string
	for _, p := range paths {
		if in, err := settings.InputsOf(p); err == nil && in.Role == settings.RoleHome {
			homes = append(homes, p)
		} else {
			others = append(others, p)
		}
	}
	if len(homes) < 2 {
		return nil
	}
	out := make([]agent.AuditHome, len(homes))
	for i, h := range homes {
		out[i] = agent.AuditHome{Home: h, Paths: append([]string{h}, others...)}
	}
	return out
}

// addPathInputs turns audit's PATH arguments into settings files (SCOPE=FILE), subagent
// directories and, without --inventory, --discover or --history, the history to infer tools
// from (settings.InputsOf), and says on stderr what each PATH gave.
func addPathInputs(w io.Writer, opts *agent.AuditInput, sessions *[]string) error {
	historyGiven := len(opts.History) > 0
	for _, p := range opts.Paths {
		in, err := settings.InputsOf(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("audit: %s: no such file or directory", p)
		case err != nil:
			return usage.Errorf("audit: %v", err)
		}
		var got []string
		if in.Settings != "" {
			opts.Settings = append(opts.Settings, string(in.Scope)+"="+in.Settings)
			got = append(got, fmt.Sprintf("settings %s (%s scope)", in.Settings, in.Scope))
		} else {
			got = append(got, "no settings.json in "+in.Dir)
		}
		if in.Agents != "" {
			opts.Agents = append(opts.Agents, in.Agents)
			got = append(got, "subagents "+in.Agents)
		}
		if in.History != "" {
			*sessions = append(*sessions, in.History)
		}
		if in.History != "" && opts.Inventory == "" && !opts.Discover && !historyGiven {
			opts.History = append(opts.History, in.History)
			got = append(got, "session history "+in.History)
		}
		role := "Qwen Code home"
		if in.Role == settings.RoleProject {
			role = "project"
		}
		fmt.Fprintf(w, "audit: %s is a %s: %s\n", reports.Printable(p), role, reports.Printable(strings.Join(got, ", ")))
	}
	return nil
}

// settingsSources turns --settings values into sources, or discovers the scopes (only when
// no PATH was given: a PATH run reads nothing of the runner's own).
func settingsSources(args []string, paths []string, dopts settings.DiscoverOptions) ([]settings.Source, error) {
	if len(args) == 0 {
		if len(paths) > 0 {
			return nil, nil
		}
		return settings.Discover(dopts), nil
	}
	global := settings.GlobalDir(dopts)
	var out []settings.Source
	seen := map[string]bool{}
	for _, a := range args {
		path, scope := a, settings.Scope("")
		if k, v, ok := strings.Cut(a, "="); ok {
			switch s := settings.Scope(k); s {
			case settings.ScopeSystemDefaults, settings.ScopeUser, settings.ScopeWorkspace, settings.ScopeSystem, settings.ScopeExplicit:
				path, scope = v, s
			}
		}
		if path == "" {
			return nil, usage.Errorf("--settings %q: no file", a)
		}
		if scope == "" {
			scope = settings.ScopeOf(path, dopts.Home, global)
		}
		if abs, err := filepath.Abs(path); err == nil {
			if seen[abs] {
				continue // a file given twice is read once
			}
			seen[abs] = true
		}
		out = append(out, settings.Source{Scope: scope, Path: path})
	}
	return out, nil
}
