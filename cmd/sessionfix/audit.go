package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/audit"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
	"github.com/sessionfix/sessionfix/store/agent"
	"github.com/sessionfix/sessionfix/store/all"
	"github.com/sessionfix/sessionfix/store/claude"
	"github.com/sessionfix/sessionfix/store/qwen"
	"github.com/sessionfix/sessionfix/store/qwen/settings"
)

type auditOptions struct {
	// Settings are --settings values: PATH or SCOPE=PATH (SCOPE: system-defaults, user,
	// workspace, system, explicit). Empty: discover the scopes as Qwen Code does.
	Settings []string
	// Project is the workspace whose .qwen/settings.json and .qwen/agents are read when
	// Settings is empty.
	Project string
	// Cwd resolves a relative $QWEN_HOME, as Qwen Code does against its working directory.
	Cwd string
	// Agents are --agents directories; empty: next to the settings files.
	Agents          []string
	Inventory       string
	Discover        bool
	DiscoverTimeout time.Duration
	// History are the session stores names are inferred from (default: Qwen Code's runtime
	// directory, or the Qwen homes among Paths); used only without Inventory and Discover.
	History []string
	// Paths are the PATH arguments (copied Qwen homes, project directories): when set, only
	// the inputs found in them (and --settings, --agents, --history given) are read, never
	// the scopes of whoever runs sessionfix.
	Paths []string
	// sessions are the session histories of the Qwen homes among Paths (re-dispatch detection
	// reads them with any inventory).
	sessions []string
	Format   string
	Out      string
	ToolsOut string
	AllPairs bool
	FailOn   []string
	Mode     string
	Subagent string
	// Baseline is --baseline: a previous audit --format json or sarif output; the run exits 5
	// only for findings (lost, gained, refused pairs; of the --fail-on classes when given) not
	// in it, and SARIF results carry baselineState.
	Baseline string
}

var (
	auditFormats = []string{"csv", "html", "json", "sarif"}
	failOnValues = []string{"lost", "refused", "gained"}
	auditModes   = []string{string(permission.ModeDefault), string(permission.ModeYolo), string(permission.ModeAutoEdit), string(permission.ModePlan)}
)

func newAuditCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "show which permission rules match which MCP tools now, and before the rename (CSV, HTML, JSON)",
		ArgsUsage: "[PATH...]",
		Description: `Reads Qwen Code settings (permissions.allow/ask/deny, tools.allowed/exclude/disabled,
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
   sessionfix audit --discover --discover-timeout 20s --format json --out audit.json
   sessionfix audit --format html --out audit.html tickets/4711/user-qwen tickets/4711/app
   sessionfix audit --inventory tools.json --fail-on lost,refused --out /dev/null   # cron
   sessionfix audit --inventory tools.json --baseline audit.sarif --format sarif --out now.sarif
` + claudeAuditDescription,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "settings", Usage: "settings file to read, as FILE or SCOPE=FILE (repeatable; default: the scopes Qwen Code loads)", TakesFile: true},
			&cli.StringFlag{Name: "project", Usage: "workspace directory whose .qwen/settings.json and .qwen/agents are read (default: current directory; without --settings only)", TakesFile: true},
			&cli.StringSliceFlag{Name: "agents", Usage: "directory of subagent .md files (repeatable; default: .qwen/agents next to the settings files)", TakesFile: true},
			fileFlag("inventory", "JSON inventory of MCP tools (raw server keys and tool names, trust)"),
			&cli.BoolFlag{Name: "discover", Usage: "start the MCP servers configured in the settings (RUNS THEIR COMMANDS) and list their tools"},
			&cli.DurationFlag{Name: "discover-timeout", Value: inventory.DefaultTimeout, Usage: "time limit for each server with --discover"},
			&cli.StringSliceFlag{Name: "history", Usage: "session stores to infer tool names from when there is no inventory (default: Qwen Code's runtime directory)", TakesFile: true},
			&cli.StringFlag{Name: "format", Value: "csv", Usage: "output format: csv, html, json or sarif (SARIF 2.1.0: one result per lost, gained or refused pair)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Value: "-", Usage: "where to write the report: a file (replaced atomically), - for standard output, or a device or FIFO such as /dev/null or /dev/stdout (written through); a symbolic link is followed, never replaced"},
			&cli.StringFlag{Name: "tools-out", Usage: "also write the tools table as CSV to this file (- for standard output; devices, FIFOs and links as --out)", TakesFile: true},
			&cli.BoolFlag{Name: "all-pairs", Usage: "list every (rule, tool) pair, also those that match neither now nor before"},
			&cli.StringSliceFlag{Name: "fail-on", Usage: "exit 5 when a pair is lost, refused or gained (comma-separated subset; unreadable input, exit 3, wins)"},
			&cli.StringFlag{Name: "mode", Value: string(permission.ModeDefault), Usage: "approval mode of the outcomes: default, yolo, auto-edit or plan"},
			&cli.StringFlag{Name: "subagent", Usage: "compute the tool decisions for calls made by this subagent (its front matter name)"},
			fileFlag("baseline", "a previous audit output (--format json or sarif): exit 5 only for lost, gained or refused pairs not in it (of the --fail-on classes when given)"),
		}, auditAgentFlags()...),
		Action: func(c *cli.Context) error {
			opts := auditOptions{Paths: c.Args().Slice(),
				Settings: c.StringSlice("settings"), Project: c.String("project"), Agents: c.StringSlice("agents"),
				Inventory: c.String("inventory"), Discover: c.Bool("discover"), DiscoverTimeout: c.Duration("discover-timeout"),
				History: c.StringSlice("history"), Format: c.String("format"), Out: c.String("out"), ToolsOut: c.String("tools-out"),
				AllPairs: c.Bool("all-pairs"), FailOn: c.StringSlice("fail-on"), Mode: c.String("mode"), Subagent: c.String("subagent"),
				Baseline: c.String("baseline"),
			}
			for _, f := range []string{"out", "tools-out"} {
				// An empty value is an unset variable in a script (--out "$OUT"): the report
				// would silently go to stdout, or the tools table nowhere.
				if c.IsSet(f) && c.String(f) == "" {
					return usageErrorf("--%s needs a path (- for standard output); it was given an empty one", f)
				}
			}
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("audit: current directory: %w", err)
			}
			opts.Cwd = wd
			a, err := auditAgent(c)
			if err != nil {
				return err
			}
			if a.ID == claude.ID {
				copts, err := newClaudeAuditOptions(c, opts)
				if err != nil {
					return err
				}
				return runClaudeAudit(c.Context, env, copts)
			}
			if len(opts.Paths) > 0 {
				if opts.Project != "" {
					return usageErrorf("--project and PATH exclude each other: give the project directory as a PATH")
				}
				if err := addPathInputs(env, &opts); err != nil {
					return err
				}
			} else if opts.Project == "" && len(opts.Settings) == 0 {
				opts.Project = wd
			}
			return runAudit(c.Context, env, opts)
		},
	}
}

// auditAgent is the agent --agent names, one with an audit (agent.Agent.Audit; else a usage
// error listing those), once every other such agent's own audit flags are known to be unset
// (the first one set is a usage error naming its agent).
func auditAgent(c *cli.Context) (*agent.Agent, error) {
	a := all.Lookup(store.AgentID(c.String("agent")))
	if a == nil || a.Audit == nil {
		return nil, usageErrorf("--agent must be %s, not %q", auditAgents(func(o *agent.Agent) string { return string(o.ID) }), c.String("agent"))
	}
	for _, o := range all.Auditors() {
		for _, f := range o.Audit.Flags {
			switch {
			case o == a || !c.IsSet(f):
			case a == all.Default:
				return nil, usageErrorf("--%s is a %s audit flag: add --agent %s", f, o.Name, o.ID)
			default:
				return nil, usageErrorf("--%s is a %s audit flag; --agent %s does not take it", f, o.Name, a.ID)
			}
		}
	}
	return a, nil
}

// auditAgents lists what of each agent with an audit, in list order: "a, b or c".
func auditAgents(what func(*agent.Agent) string) string {
	var parts []string
	for _, a := range all.Auditors() {
		parts = append(parts, what(a))
	}
	return orList(parts)
}

func (o *auditOptions) validate() error {
	if !slices.Contains(auditFormats, o.Format) {
		return usageErrorf("--format must be csv, html, json or sarif, not %q", o.Format)
	}
	if !slices.Contains(auditModes, o.Mode) {
		return usageErrorf("--mode must be one of %s, not %q", strings.Join(auditModes, ", "), o.Mode)
	}
	var fail []string
	for _, v := range o.FailOn {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(failOnValues, f) {
				return usageErrorf("--fail-on takes lost, refused and gained, not %q", f)
			}
			fail = append(fail, f)
		}
	}
	o.FailOn = fail
	if o.Inventory != "" && o.Discover {
		return usageErrorf("--inventory and --discover exclude each other: give the tool list, or let sessionfix ask the servers")
	}
	if o.Inventory != "" && len(o.History) > 0 || o.Discover && len(o.History) > 0 {
		return usageErrorf("--history is used only to infer tools, without --inventory or --discover")
	}
	if o.Out == "" {
		o.Out = "-"
	}
	if o.Out == "-" && o.ToolsOut == "-" {
		return usageErrorf("--out and --tools-out cannot both be standard output")
	}
	if o.ToolsOut != "" && o.ToolsOut != "-" && o.Out != "-" && fileio.SameOutput(o.Out, o.ToolsOut) {
		return usageErrorf("--out and --tools-out name the same file: the tools table would overwrite the pairs")
	}
	if o.DiscoverTimeout <= 0 {
		return usageErrorf("--discover-timeout must be positive")
	}
	return nil
}

// auditRun carries the loaded inputs and whatever went wrong on the way.
type auditRun struct {
	qwen.Loaded
	env     *Env
	known   *reports.SARIFBaseline // --baseline, nil without
	partial bool
	// redispatch are the stored calls of the audited homes' session history that reach another
	// tool of the inventory today, or several (qwen.AuditHistory).
	redispatch []check.Redispatch
}

// problem prints an input that could not be used (qwen.Load records it in Loaded.Problems).
func (r *auditRun) problem(err error) {
	r.partial = true
	fmt.Fprintf(r.env.Err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

func (r *auditRun) warn(format string, args ...any) {
	fmt.Fprintf(r.env.Err, "sessionfix: "+format+"\n", args...)
}

func runAudit(ctx context.Context, env *Env, opts auditOptions) error {
	if err := opts.validate(); err != nil {
		return err
	}
	var known *reports.SARIFBaseline
	if opts.Baseline != "" {
		var err error
		if known, err = loadAuditBaseline(opts.Baseline); err != nil {
			return err
		}
	}
	senv := env.settingsEnv()
	eng := pipeline.AuditEngine(pipelineEnv(env), opts.DiscoverTimeout)
	r := &auditRun{env: env, known: known}
	dopts := settings.DiscoverOptions{Env: senv, Home: env.Home, ProjectDir: opts.Project, Cwd: opts.Cwd}
	sources, err := settingsSources(opts.Settings, opts.Paths, dopts)
	if err != nil {
		return err
	}
	loaded, err := qwen.Load(ctx, qwen.LoadOptions{Sources: sources, Explicit: len(opts.Settings) > 0, FromPaths: len(opts.Paths) > 0,
		Discover: dopts, Agents: opts.Agents, Inventory: opts.Inventory, DiscoverTools: opts.Discover,
		History: opts.History, Getenv: env.Getenv},
		qwen.Hooks{Problem: r.problem, Note: func(s string) { r.warn("%s", s) },
			Progress: func(s string) { fmt.Fprintln(env.Err, s) }, StoredNames: eng.StoredNames, ListTools: eng.ListTools})
	if err != nil {
		return err
	}
	r.Loaded = *loaded

	rep, err := qwen.Run(qwen.Input{Settings: r.Merged, Agents: r.Agents, Inventory: r.Inventory,
		Mode: permission.Mode(opts.Mode), Agent: opts.Subagent})
	if err != nil {
		if errors.Is(err, qwen.ErrUnknownAgent) {
			return usageErrorf("--subagent %q: no such subagent in %s", opts.Subagent, strings.Join(r.AgentDirs, ", "))
		}
		return err
	}
	sessions := opts.History
	if len(sessions) == 0 {
		sessions = opts.sessions
	}
	rd, probs, err := qwen.AuditHistory(ctx, eng.History, sessions, r.Inventory, r.InventoryFrom)
	if err != nil {
		r.problem(fmt.Errorf("re-dispatch check of the session history: %w", err))
	}
	for _, e := range probs {
		r.problem(e)
	}
	r.redispatch = pipeline.Redispatches(rd)

	c := rep.Counts
	pairs := reports.PrintableTable(rep.Columns(qwen.PairColumns), rep.PairRows(opts.AllPairs))
	tools := reports.PrintableTable(rep.Columns(qwen.ToolColumns), rep.ToolRows())
	return finishAudit(ctx, env, opts, r.known, r.redispatch, func() bool { return r.partial }, auditFindings{
		Pairs: pairs, Tools: tools,
		Page: func() *reports.HTMLPage { return rep.Page(&r.Loaded, env.Now(), version, opts.AllPairs, pairs, tools) },
		Doc: func(rd []check.Redispatch) any {
			return struct {
				*qwen.JSONReport
				Redispatch []check.Redispatch `json:"redispatch"`
			}{rep.JSON(&r.Loaded, env.Now(), opts.AllPairs), rd}
		},
		SARIF: rep.SARIF, Rules: qwen.SARIFRules, Read: r.Read(opts.Inventory),
		Summary: func() {
			if c.Rules == 0 {
				where := "no settings or subagent file was read"
				if len(r.Files) > 0 || len(r.Agents) > 0 {
					where = "in " + r.FileList()
				}
				fmt.Fprintf(env.Err, "audit: no permission rule found (%s): every tool gets its default decision (the server's trust)\n", reports.Printable(where))
			}
			fmt.Fprintf(env.Err, "audit: %s, %s (inventory: %s), %s listed: %d lost, %d gained, %d refused\n",
				plural(c.Rules, "rule"), plural(c.Tools, "tool"), r.InventoryFrom, plural(len(rep.VisiblePairs(opts.AllPairs)), "pair"), c.Lost, c.Gained, c.Refused)
		},
		FailCounts: func([]reports.SARIFResult) map[string]int {
			return map[string]int{"lost": c.Lost, "gained": c.Gained, "refused": c.Refused}
		},
	})
}

// addPathInputs turns audit's PATH arguments into settings files (SCOPE=FILE), subagent
// directories and, without --inventory, --discover or --history, the history to infer tools
// from (settings.InputsOf), and says on stderr what each PATH gave.
func addPathInputs(env *Env, opts *auditOptions) error {
	historyGiven := len(opts.History) > 0
	for _, p := range opts.Paths {
		in, err := settings.InputsOf(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("audit: %s: no such file or directory", p)
		case err != nil:
			return usageErrorf("audit: %v", err)
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
			opts.sessions = append(opts.sessions, in.History)
		}
		if in.History != "" && opts.Inventory == "" && !opts.Discover && !historyGiven {
			opts.History = append(opts.History, in.History)
			got = append(got, "session history "+in.History)
		}
		role := "Qwen Code home"
		if in.Role == settings.RoleProject {
			role = "project"
		}
		fmt.Fprintf(env.Err, "audit: %s is a %s: %s\n", reports.Printable(p), role, reports.Printable(strings.Join(got, ", ")))
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
			return nil, usageErrorf("--settings %q: no file", a)
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

// auditFindings is one agent's audit result as audit's shared tail (finishAudit) takes it: the
// pairs and tools tables, the documents of every format, what was read, the summary and the
// counts --fail-on reads.
type auditFindings struct {
	Pairs, Tools *reports.Table
	Page         func() *reports.HTMLPage
	// Doc is the agent's JSON document with the re-dispatch findings (never nil) added.
	Doc func(rd []check.Redispatch) any
	// SARIF are the pairs' results (also what --baseline compares); Rules the agent's SARIF rules.
	SARIF func() []reports.SARIFResult
	Rules []reports.SARIFRule
	Read  []string // every file read (written to no output path)
	// Summary prints the agent's summary line(s) to standard error once the report is written.
	Summary func()
	// FailCounts are the pairs per --fail-on class (lost, gained, refused), given SARIF's results.
	FailCounts func(results []reports.SARIFResult) map[string]int
}

// finishAudit is the end every agent's audit shares: the report in --format and the tools
// table written, the summary, the re-dispatch findings, --baseline and --fail-on, and the exit
// (partial input, exit 3, wins over a finding, exit 5).
func finishAudit(ctx context.Context, env *Env, o auditOptions, known *reports.SARIFBaseline, redispatch []check.Redispatch, partial func() bool, f auditFindings) error {
	rdRules, rdResults := pipeline.RedispatchSARIF(redispatch)
	main, err := audit.Rendering{
		Pairs: f.Pairs,
		Page:  f.Page,
		Doc: func() any {
			// The audit document plus the stored calls that reach another tool today
			// (docs/report.md "Re-dispatch findings"; package audit knows no session).
			rd := redispatch
			if rd == nil {
				rd = []check.Redispatch{}
			}
			return f.Doc(rd)
		},
		SARIF:   func() []reports.SARIFResult { return append(f.SARIF(), rdResults...) },
		Rules:   append(slices.Clone(f.Rules), rdRules...),
		Known:   known,
		Version: version,
	}.Render(o.Format)
	if err != nil {
		return err
	}
	if err := writeReportAndTools(ctx, env, o.Out, main, o.ToolsOut, f.Tools, f.Read); err != nil {
		return err
	}
	f.Summary()
	if l := pipeline.RedispatchLine(redispatch); l != "" {
		pipeline.WriteRedispatchText(env.Err, redispatch)
		fmt.Fprintf(env.Err, "audit: %s\n", l)
	}
	hit := false
	results := f.SARIF()
	if known != nil {
		hit = newSinceBaseline(env, known, o.Baseline, results, o.FailOn) // pairs only: re-dispatch findings never change the exit status
	}
	counts := f.FailCounts(results)
	for _, fo := range o.FailOn {
		if known != nil {
			break // with a baseline, --fail-on only chooses the classes counted above
		}
		if n := counts[fo]; n > 0 {
			fmt.Fprintf(env.Err, "audit: --fail-on %s: %s %s\n", fo, plural(n, "pair"), fo)
			hit = true
		}
	}
	switch {
	case partial(): // the findings may be incomplete: broken input wins
		return withCode(exitPartial)
	case hit:
		return withCode(exitFinding)
	}
	return nil
}

// writeReportAndTools writes the rendered report to out and, when toolsOut is set, the tools
// table as CSV to toolsOut (both by writeOutput's rules). Neither may name a file of read (the
// inventory, settings and rule files the audit read): that is a usage error and nothing is
// written.
func writeReportAndTools(ctx context.Context, env *Env, out string, report []byte, toolsOut string, tools *reports.Table, read []string) error {
	for _, o := range []struct{ flag, path string }{{"--out", out}, {"--tools-out", toolsOut}} {
		if o.path == "" || o.path == "-" {
			continue
		}
		if slices.ContainsFunc(read, func(f string) bool { return f != "" && pipeline.SameFile(o.path, f) }) {
			return usageErrorf("audit: %s %s is a file this audit reads: refusing to write the report over it (nothing was written)", o.flag, o.path)
		}
	}
	if err := writeOutput(ctx, env, out, report); err != nil {
		return err
	}
	if toolsOut != "" {
		var b bytes.Buffer
		if err := reports.WriteCSV(&b, tools); err != nil {
			return fmt.Errorf("audit: render tools: %w", err)
		}
		return writeOutput(ctx, env, toolsOut, b.Bytes())
	}
	return nil
}

// writeOutput writes a report to stdout ("-") or to the path the user named, by
// fileio.WriteOutputContext's rules (a regular file replaced atomically, a device, FIFO or /dev/stdout
// written through, a symbolic link followed, never replaced). A FIFO with no reader yet is
// waited for, and stderr says so (else the run looks hung).
func writeOutput(ctx context.Context, env *Env, path string, data []byte) error {
	waiting := fileio.OnWait(func(name string) {
		fmt.Fprintf(env.Err, "sessionfix: audit: waiting for a reader of the FIFO %s (Ctrl-C stops)\n", name)
	})
	if err := fileio.WriteOutputContext(ctx, env.Out, path, data, waiting); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// newSinceBaseline reports (on stderr, and as the result) whether some audit finding is not in
// the baseline read from path: of the --fail-on classes when given, else of any class (lost,
// gained, refused: the SARIF rule id's last part).
func newSinceBaseline(env *Env, known *reports.SARIFBaseline, path string, results []reports.SARIFResult, failOn []string) bool {
	var newer []string
	for _, x := range results {
		class := strings.TrimPrefix(x.RuleID, "sessionfix/audit/")
		if !known.Has(x.Fingerprint) && (len(failOn) == 0 || slices.Contains(failOn, class)) {
			newer = append(newer, class)
		}
	}
	if len(newer) > 0 {
		fmt.Fprintf(env.Err, "audit: %s not in the baseline %s (%d known fingerprints)\n", plural(len(newer), "finding"), path, known.Len())
		return true
	}
	fmt.Fprintf(env.Err, "audit: no finding new since the baseline %s (%d known fingerprints)\n", path, known.Len())
	return false
}

// loadAuditBaseline reads --baseline (a previous audit --format json or sarif output, either
// audit's: audit.ReadBaseline); an unreadable or unrecognised file is an error naming it.
func loadAuditBaseline(path string) (*reports.SARIFBaseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	known, err := audit.ReadBaseline(b)
	if err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, err)
	}
	return known, nil
}
