// Package auditrun is the audit command as a library, above audit (the shared rule-audit
// engine and renderings) and the agent rooms: the shared flags checked once (Options), which
// agents an audit covers (Agent, Found) and which homes (agent.Audit.Homes), each agent's
// audit run on the shared layer (agent.Audit.Rules, audit.Build) or by its own plug-in
// (agent.Audit.Run), then one report in --format, --baseline, --fail-on and the exit status
// (partial input, exit 3, wins over a finding, exit 5). The command keeps the flags and the
// writers of outputs (Env).
package auditrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/audit"
	"github.com/sessionfix/sessionfix/check"
	"github.com/sessionfix/sessionfix/engine/sqlite/fleetdb"
	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool { return errors.As(err, new(*usage.Error)) }

// Options are audit's shared flags; the agent's run (agent.Audit.Run) reads its inputs
// from the ones it takes (agent.AuditInput).
type Options struct {
	// Settings are --settings values (FILE or SCOPE=FILE), Project --project, Cwd the working
	// directory, Agents --agents, History --history; their meaning is the agent's.
	Settings        []string
	Project         string
	Cwd             string
	Agents          []string
	Inventory       string
	Discover        bool
	DiscoverTimeout time.Duration
	// DiscoverUntrusted is --discover-untrusted: start the servers of configs another user owns
	// or can write too.
	DiscoverUntrusted bool
	History           []string
	// Paths are the PATH arguments (copied homes, project directories): when set, only the
	// inputs found in them (and the input flags given) are read, never those of whoever runs
	// sessionfix.
	Paths    []string
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
	// StateDir is --state-dir: whose fix runs' renames tell the raw identities of names a
	// repair rewrote ("" for fix's default; issue 23 item 2).
	StateDir string
	// Host and User are --host and --user: whose findings the SARIF runs and the fleet
	// database (--format sqlite) say they are ("": the host name, each home's owner).
	Host, User string
	// agent is the --agent audited (its id): the fleet rows' agent.
	agent string
}

// Env is what an audit reads and writes outside its options: the environment, the clock,
// standard error (problems, notes, summaries, progress lines), sessionfix's version, and the
// command's writers of a report (WriteOutput: a file, a device or FIFO, or "-" for standard
// output) and of the fleet database (WriteFleet: the rows of a command, said on standard
// error).
type Env struct {
	Getenv      func(string) string
	Environ     func() []string
	Home        string
	Now         func() time.Time
	Err         io.Writer
	Version     string
	WriteOutput func(ctx context.Context, path string, data []byte) error
	WriteFleet  func(ctx context.Context, out, command string, o *fleet.Origin, rows []fleetdb.Row, complete bool) error
}

// pipelineEnv is what the engine reads of env.
func (env *Env) pipelineEnv() pipeline.Env {
	return pipeline.Env{Getenv: env.Getenv, Environ: env.Environ, Home: env.Home, ClientVersion: env.Version}
}

var (
	auditFormats = []string{"csv", "html", "json", "sarif", "sqlite"}
	failOnValues = []string{"lost", "refused", "gained"}
	auditModes   = []string{string(permission.ModeDefault), string(permission.ModeYolo), string(permission.ModeAutoEdit), string(permission.ModePlan)}
)

// Run is the one audit run of agent a (vals: the rooms' audit option values; modeSet: --mode
// given): the agent's Run (agent.Audit.Run) reads its inputs and
// matches its rules with the engine injected (pipeline.AuditEngine), calling back for the
// shared flags' checks and --baseline; finishAudit writes what it found.
func Run(ctx context.Context, env *Env, a agent.Agent, opts Options, modeSet bool, vals agent.Values) error {
	opts.agent = string(a.Core().ID)
	var known *reports.SARIFBaseline
	in := auditInput(env, &opts, modeSet, vals, &known)
	if all.AuditOf(a).Homes != nil && len(opts.Paths) > 1 {
		if homes := all.AuditOf(a).Homes(opts.Paths); len(homes) > 1 {
			var jobs []auditJob
			for _, h := range homes {
				jobs = append(jobs, auditJob{agent: a, home: h.Home, paths: h.Paths})
			}
			return runAuditHomes(ctx, env, &opts, in, jobs, &known)
		}
	}
	run := all.AuditOf(a).Run
	if all.AuditOf(a).Rules != nil { // the shared rule-audit layer: the engine's evaluation and documents
		run = func(ctx context.Context, in agent.AuditInput) (*agent.AuditResult, error) {
			return ruleAuditResult(ctx, env, a, opts.AllPairs, in)
		}
	}
	res, err := run(ctx, in)
	if err != nil {
		return auditError(ctx, env, opts, err)
	}
	return finishAudit(ctx, env, opts, known, res)
}

// RunAgents audits several agents' rules, each on its own (audit without --agent and
// PATH, more than one agent's home found: issue 23 item 4), as several homes are (each section
// named by the agent and its home directory).
func RunAgents(ctx context.Context, env *Env, agents []agent.Agent, opts Options, modeSet bool, vals agent.Values) error {
	var known *reports.SARIFBaseline
	in := auditInput(env, &opts, modeSet, vals, &known)
	var jobs []auditJob
	aenv := agent.Env{Getenv: env.Getenv, Home: env.Home}
	for _, a := range agents {
		jobs = append(jobs, auditJob{agent: a, home: all.AuditOf(a).Home(aenv), label: a.Core().Name})
	}
	return runAuditHomes(ctx, env, &opts, in, jobs, &known)
}

// auditInput is the agent.AuditInput of an audit with opts (the rooms' option values vals;
// modeSet: --mode given); --baseline is read into *known when the room asks. Its Validate
// completes *opts (the split --fail-on, the default --out) for the caller's finish.
func auditInput(env *Env, opts *Options, modeSet bool, vals agent.Values, known **reports.SARIFBaseline) agent.AuditInput {
	return agent.AuditInput{Paths: opts.Paths, Settings: opts.Settings, Project: opts.Project, Cwd: opts.Cwd, Agents: opts.Agents,
		History: opts.History, Inventory: opts.Inventory, Discover: opts.Discover, AllPairs: opts.AllPairs,
		Mode: opts.Mode, ModeSet: modeSet, Subagent: opts.Subagent, Options: vals,
		Engine: pipeline.AuditEngineAt(env.pipelineEnv(), opts.DiscoverTimeout, opts.DiscoverUntrusted, opts.StateDir), Now: env.Now(), Version: env.Version, Err: env.Err,
		Validate: opts.validate,
		Baseline: func() error {
			if opts.Baseline == "" {
				return nil
			}
			var err error
			*known, err = loadAuditBaseline(opts.Baseline)
			return err
		}}
}

// auditJob is one audit of a multi-home (or multi-agent) audit: the agent, the home (the PATH
// naming it, or the agent's home directory), the PATHs its audit reads (nil: the environment's
// files) and, for an agent's own section, its name.
type auditJob struct {
	agent       agent.Agent
	home, label string
	paths       []string
}

// name is how the job's section and lines are named: the PATH as given ("tickets/4711/alice"), or
// the agent's name and its home directory.
func (j auditJob) name() string {
	if j.label != "" {
		return j.label + " (" + j.home + ")"
	}
	return j.home
}

// runAuditHomes audits each home on its own (issue 23 item 1: two users' rules are never one
// decision table): the agent's Run once per home, with that home and the project PATHs, its
// notes and problems on standard error under a line naming the home; then one report with a
// section per home (audit.HomesRendering), each home's summary, and --fail-on and --baseline
// over every home. A home whose audit fails (not a usage error) is named and the others go on
// (exit 3). known is where --baseline is read to (once).
func runAuditHomes(ctx context.Context, env *Env, opts *Options, in agent.AuditInput, homes []auditJob, known **reports.SARIFBaseline) error {
	validated, baselined := false, false
	validate, baseline := in.Validate, in.Baseline
	in.Validate = func() error {
		if validated {
			return nil
		}
		validated = true
		return validate()
	}
	in.Baseline = func() error {
		if baselined {
			return nil
		}
		baselined = true
		return baseline()
	}
	var done []homeAudit
	failed := false
	for i, h := range homes {
		fmt.Fprintf(env.Err, "audit: home %d of %d: %s\n", i+1, len(homes), reports.Printable(h.name()))
		in.Paths = h.paths
		var res *agent.AuditResult
		var err error
		if all.AuditOf(h.agent).Rules != nil {
			res, err = ruleAuditResult(ctx, env, h.agent, opts.AllPairs, in)
		} else {
			res, err = all.AuditOf(h.agent).Run(ctx, in)
		}
		switch {
		case err != nil && ctx.Err() != nil,
			err != nil && isUsage(err) && (i == 0 || h.label == ""):
			return auditError(ctx, env, *opts, err)
		case err != nil && isUsage(err):
			// Every agent found without --agent (h.label set): the flags were valid for the
			// first; what one agent cannot take (--discover with no server configured) leaves
			// that agent unaudited, said, and the run partial (exit 3), not the others undone.
			fmt.Fprintf(env.Err, "sessionfix: %s: %v (not audited)\n", reports.Printable(h.name()), err)
			failed = true
			continue
		case err != nil:
			fmt.Fprintf(env.Err, "sessionfix: home %s: %v (not audited)\n", reports.Printable(h.name()), err)
			failed = true
			continue
		}
		done = append(done, homeAudit{job: h, res: res})
	}
	if len(done) == 0 {
		return fmt.Errorf("audit: no home could be audited")
	}
	return finishAuditHomes(ctx, env, *opts, *known, done, failed)
}

// homeAudit is one home's audit result.
type homeAudit struct {
	job auditJob
	res *agent.AuditResult
}

// finishAuditHomes is finishAudit for several homes: one report with a section per home, every
// home's summary (and re-dispatch findings) under its name, --baseline and --fail-on over all
// of them; failed: a home could not be audited at all (exit 3, as partial input).
func finishAuditHomes(ctx context.Context, env *Env, o Options, known *reports.SARIFBaseline, done []homeAudit, failed bool) error {
	x := audit.HomesRendering{Known: known, Version: env.Version}
	partial := failed
	origin, err := auditOrigin(env, o)
	if err != nil {
		return err
	}
	var rows []fleetdb.Row
	var results []reports.SARIFResult
	counts := map[string]int{}
	for _, h := range done {
		f := h.res
		redispatch := f.Redispatch
		rdRules, rdResults := report.RedispatchSARIF(redispatch)
		home := origin.HomeOf(absPath(h.job.home))
		home.Path = absPath(h.job.home)
		rows = append(rows, origin.Rows(append(f.SARIF(), rdResults...), string(h.job.agent.Core().ID), &home)...)
		x.Homes = append(x.Homes, audit.Home{Path: h.job.name(), Agent: string(h.job.agent.Core().ID), Tools: f.Tools, Invocation: auditInvocation(f),
			Category: fleet.Category(origin.Host(), home.User, "audit", h.job.name()), Properties: map[string]string{"host": origin.Host(), "user": home.User}, Rendering: audit.Rendering{
				Pairs: f.Pairs, Page: f.Page,
				Doc: func() any {
					rd := redispatch
					if rd == nil {
						rd = []check.Redispatch{}
					}
					return f.Doc(rd)
				},
				SARIF: func() []reports.SARIFResult { return append(f.SARIF(), rdResults...) },
				Rules: append(slices.Clone(f.Rules), rdRules...),
			}})
		own := f.SARIF()
		results = append(results, own...)
		for k, n := range f.FailCounts(own) {
			counts[k] += n
		}
		partial = partial || f.Partial()
	}
	var read []string
	for _, h := range done {
		read = append(read, h.res.Read...)
	}
	if o.Format == "sqlite" {
		if err := writeFleetAndTools(ctx, env, o.Out, origin, rows, !partial, o.ToolsOut, x.Tools(), read); err != nil {
			return err
		}
	} else {
		main, err := x.Render(o.Format)
		if err != nil {
			return err
		}
		if err := writeReportAndTools(ctx, env, o.Out, main, o.ToolsOut, x.Tools(), read); err != nil {
			return err
		}
	}
	for i, h := range done {
		fmt.Fprintf(env.Err, "audit: home %d of %d: %s:\n", i+1, len(done), reports.Printable(h.job.name()))
		h.res.Summary(env.Err)
		redispatch := h.res.Redispatch
		if l := report.RedispatchLine(redispatch); l != "" {
			report.WriteRedispatchText(env.Err, redispatch)
			fmt.Fprintf(env.Err, "audit: %s\n", l)
		}
	}
	fmt.Fprintf(env.Err, "audit: %s audited on their own: %d lost, %d gained, %d refused in all\n", reports.Plural(len(done), "home"), counts["lost"], counts["gained"], counts["refused"])
	hit := false
	if known != nil {
		hit = newSinceBaseline(env, known, o.Baseline, results, o.FailOn)
	}
	for _, fo := range o.FailOn {
		if known != nil {
			break
		}
		if n := counts[fo]; n > 0 {
			fmt.Fprintf(env.Err, "audit: --fail-on %s: %s %s (over %s)\n", fo, reports.Plural(n, "pair"), fo, reports.Plural(len(done), "home"))
			hit = true
		}
	}
	switch {
	case partial:
		return exitcode.With(exitcode.Partial)
	case hit:
		return exitcode.With(exitcode.Finding)
	}
	return nil
}

// ruleAuditResult is the audit of an agent on the shared rule-audit layer (agent.Audit.Rules)
// as an agent.AuditResult: the rooms' problems and notes said on standard error, the report
// built by audit.Build (allPairs: every pair, not only those that differ). A usage error of
// in.Validate is returned as is.
func ruleAuditResult(ctx context.Context, env *Env, a agent.Agent, allPairs bool, in agent.AuditInput) (*agent.AuditResult, error) {
	check := in.CheckOnce()
	if !all.AuditOf(a).OwnChecks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	var found []naming.Redispatch
	in.Redispatch = func(f []naming.Redispatch) { found = f }
	ra, err := all.AuditOf(a).Rules(ctx, in)
	if err == nil {
		err = check()
	}
	if err != nil {
		return nil, err
	}
	if !ra.Said {
		for _, p := range ra.Problems {
			fmt.Fprintf(env.Err, "sessionfix: %s\n", reports.Printable(p))
		}
		for _, n := range ra.Notes {
			fmt.Fprintf(env.Err, "audit: note: %s\n", reports.Printable(n))
		}
	}
	rep := audit.Build(ra, allPairs, env.Now(), env.Version)
	for _, l := range rep.LostLines() {
		fmt.Fprintln(env.Err, reports.Printable(l))
	}
	return &agent.AuditResult{Pairs: rep.Pairs, Tools: rep.Tools, Page: rep.Page,
		Doc: func(redispatch []naming.Redispatch) json.Marshaler {
			var b bytes.Buffer
			if err := reports.WriteJSON(&b, redispatch); err != nil {
				return reports.Document(rep.JSON(nil))
			}
			return reports.Document(rep.JSON(bytes.TrimSpace(b.Bytes())))
		},
		SARIF: rep.SARIF, Rules: rep.SARIFRules(), Read: ra.Read, Summary: rep.Summary,
		FailCounts: audit.FailCounts, Partial: rep.Partial, Redispatch: found}, nil
}

// auditError ends an audit --format sarif or json that stopped before its report (a PATH or
// input that could not be read at all) as scan and check do (jsonError): the error document to
// --out or standard output, so a CI job uploading the file never finds it empty, and err is
// returned unchanged (its message on standard error, its exit status). Nothing is written for
// a usage error (exit 2), nor to an --out that names a file the audit was given to read.
func auditError(ctx context.Context, env *Env, opts Options, err error) error {
	if (opts.Format != "sarif" && opts.Format != "json") || isUsage(err) {
		return err
	}
	if opts.Out != "" && opts.Out != "-" {
		given := slices.Concat(opts.Settings, opts.History, opts.Agents, opts.Paths, []string{opts.Inventory, opts.Baseline, opts.Subagent})
		if slices.ContainsFunc(given, func(f string) bool { return f != "" && pipeline.SameFile(opts.Out, f) }) {
			return err
		}
	}
	var b bytes.Buffer
	msg := err.Error()
	if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	_ = reports.WriteErrorDocument(&b, opts.Format, reports.SARIFRun{}, msg, env.Version)
	if werr := env.WriteOutput(ctx, opts.Out, b.Bytes()); werr != nil {
		fmt.Fprintf(env.Err, "sessionfix: %v\n", werr)
	}
	return err
}

// Agent is the agent --agent names (given; isSet: whether a flag was given), one with an audit (agent.Agent.Audit; else a usage
// error listing those), once every other such agent's own audit flags are known to be unset
// (the first one set is a usage error naming its agent).
func Agent(given string, isSet func(string) bool) (agent.Agent, error) {
	id := given
	if id == "" {
		id = string(all.Default.Core().ID)
	}
	a := all.Lookup(store.AgentID(id))
	if a == nil || all.AuditOf(a) == nil {
		return nil, usage.Errorf("--agent must be %s, not %q", Agents(func(o agent.Agent) string { return string(o.Core().ID) }), given)
	}
	for _, o := range all.Auditors() {
		for _, f := range all.AuditOf(o).Flags {
			if o == a || !isSet(f) || slices.Contains(all.AuditOf(a).Flags, f) {
				continue
			}
			// Every agent whose audit takes the flag is named (--before: several).
			var names, ids []string
			for _, x := range all.Auditors() {
				if slices.Contains(all.AuditOf(x).Flags, f) {
					names, ids = append(names, x.Core().Name), append(ids, "--agent "+string(x.Core().ID))
				}
			}
			if a == all.Default {
				return nil, usage.Errorf("--%s is a %s audit flag: add %s", f, reports.AndList(names), reports.OrList(ids))
			}
			return nil, usage.Errorf("--%s is a %s audit flag; --agent %s does not take it", f, reports.AndList(names), a.Core().ID)
		}
	}
	return a, nil
}

// Found are the agents an audit without --agent and without PATH audits (issue 23 item
// 4): every agent with an audit whose home (agent.Audit.Home) exists, in list order. nil when
// none is found, or when --settings or an agent's own audit flag is given: those name one
// agent's inputs, so the run is the one agent's audit, --agent's (the default agent's without
// it; another agent's flag is then a usage error naming its --agent, Agent).
func Found(isSet func(string) bool, aenv agent.Env) []agent.Agent {
	if isSet("settings") {
		return nil
	}
	for _, o := range all.Auditors() {
		for _, f := range all.AuditOf(o).Flags {
			if isSet(f) {
				return nil
			}
		}
	}
	var out []agent.Agent
	for _, o := range all.Auditors() {
		if all.AuditOf(o).Home == nil {
			continue
		}
		if fi, err := os.Stat(all.AuditOf(o).Home(aenv)); err == nil && fi.IsDir() {
			out = append(out, o)
		}
	}
	return out
}

// Agents lists what of each agent with an audit, in list order: "a, b or c".
func Agents(what func(agent.Agent) string) string {
	var parts []string
	for _, a := range all.Auditors() {
		parts = append(parts, what(a))
	}
	return reports.OrList(parts)
}

func (o *Options) validate() error {
	if !slices.Contains(auditFormats, o.Format) {
		return usage.Errorf("--format must be csv, html, json or sarif, not %q", o.Format)
	}
	if !slices.Contains(auditModes, o.Mode) {
		return usage.Errorf("--mode must be one of %s, not %q", strings.Join(auditModes, ", "), o.Mode)
	}
	var fail []string
	for _, v := range o.FailOn {
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(failOnValues, f) {
				return usage.Errorf("--fail-on takes lost, refused and gained, not %q", f)
			}
			fail = append(fail, f)
		}
	}
	o.FailOn = fail
	if o.Inventory != "" && o.Discover {
		return usage.Errorf("--inventory and --discover exclude each other: give the tool list, or let sessionfix ask the servers")
	}
	if o.Inventory != "" && len(o.History) > 0 || o.Discover && len(o.History) > 0 {
		return usage.Errorf("--history is used only to infer tools, without --inventory or --discover")
	}
	if o.Out == "" {
		o.Out = "-"
	}
	if err := usage.SQLiteOut(o.Format, o.Out); err != nil {
		return err
	}
	if _, err := fleet.NewOrigin(o.Host, o.User, nil, ""); err != nil {
		return err
	}
	if o.Out == "-" && o.ToolsOut == "-" {
		return usage.Errorf("--out and --tools-out cannot both be standard output")
	}
	if o.ToolsOut != "" && o.ToolsOut != "-" && o.Out != "-" && fileio.SameOutput(o.Out, o.ToolsOut) {
		return usage.Errorf("--out and --tools-out name the same file: the tools table would overwrite the pairs")
	}
	if o.DiscoverTimeout <= 0 {
		return usage.Errorf("--discover-timeout must be positive")
	}
	if err := usage.DiscoverUntrusted(o.DiscoverUntrusted, o.Discover); err != nil {
		return err
	}
	return nil
}

// finishAudit is the end every agent's audit shares: the report in --format and the tools
// table written, the summary, the re-dispatch findings, --baseline and --fail-on, and the exit
// (partial input, exit 3, wins over a finding, exit 5).
func finishAudit(ctx context.Context, env *Env, o Options, known *reports.SARIFBaseline, f *agent.AuditResult) error {
	redispatch := f.Redispatch
	rdRules, rdResults := report.RedispatchSARIF(redispatch)
	origin, err := auditOrigin(env, o)
	if err != nil {
		return err
	}
	run := origin.SARIF("audit", nil, nil, nil)
	x := audit.Rendering{
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
		SARIF:      func() []reports.SARIFResult { return append(f.SARIF(), rdResults...) },
		Rules:      append(slices.Clone(f.Rules), rdRules...),
		Known:      known,
		Version:    env.Version,
		Invocation: auditInvocation(f),
		Category:   run.Category,
		Properties: run.Properties,
	}
	if o.Format == "sqlite" {
		rows := origin.Rows(append(f.SARIF(), rdResults...), o.agent, nil)
		if err := writeFleetAndTools(ctx, env, o.Out, origin, rows, !f.Partial(), o.ToolsOut, f.Tools, f.Read); err != nil {
			return err
		}
	} else {
		main, err := x.Render(o.Format)
		if err != nil {
			return err
		}
		if err := writeReportAndTools(ctx, env, o.Out, main, o.ToolsOut, f.Tools, f.Read); err != nil {
			return err
		}
	}
	f.Summary(env.Err)
	if l := report.RedispatchLine(redispatch); l != "" {
		report.WriteRedispatchText(env.Err, redispatch)
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
			fmt.Fprintf(env.Err, "audit: --fail-on %s: %s %s\n", fo, reports.Plural(n, "pair"), fo)
			hit = true
		}
	}
	switch {
	case f.Partial(): // the findings may be incomplete: broken input wins
		return exitcode.With(exitcode.Partial)
	case hit:
		return exitcode.With(exitcode.Finding)
	}
	return nil
}

// auditInvocation is the SARIF invocation of an audit: nil when every input was read (the log
// as before), else one with executionSuccessful false (exit 3) and no notifications — the
// rooms print each problem on standard error as they meet it and keep no list of them.
func auditInvocation(f *agent.AuditResult) *reports.SARIFInvocation {
	if !f.Partial() {
		return nil
	}
	return &reports.SARIFInvocation{Successful: false}
}

// auditOrigin is whose findings an audit reports: --host, --user, and the owners of the PATHs
// (each home's), else of $HOME.
func auditOrigin(env *Env, o Options) (*fleet.Origin, error) {
	return fleet.NewOrigin(o.Host, o.User, o.Paths, env.Home)
}

// absPath is path made absolute (as given when that fails).
func absPath(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// writeFleetAndTools is writeReportAndTools for --format sqlite: the rows written to the fleet
// database out (writeFleet; never a file the audit read), and the tools table to toolsOut.
func writeFleetAndTools(ctx context.Context, env *Env, out string, origin *fleet.Origin, rows []fleetdb.Row, complete bool, toolsOut string, tools *reports.Table, read []string) error {
	for _, o := range []struct{ flag, path string }{{"--out", out}, {"--tools-out", toolsOut}} {
		if o.path != "" && o.path != "-" && slices.ContainsFunc(read, func(f string) bool { return f != "" && pipeline.SameFile(o.path, f) }) {
			return usage.Errorf("audit: %s %s is a file this audit reads: refusing to write over it (nothing was written)", o.flag, o.path)
		}
	}
	if err := env.WriteFleet(ctx, out, "audit", origin, rows, complete); err != nil {
		return err
	}
	return writeTools(ctx, env, toolsOut, tools)
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
			return usage.Errorf("audit: %s %s is a file this audit reads: refusing to write the report over it (nothing was written)", o.flag, o.path)
		}
	}
	if err := env.WriteOutput(ctx, out, report); err != nil {
		return err
	}
	return writeTools(ctx, env, toolsOut, tools)
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
		fmt.Fprintf(env.Err, "audit: %s not in the baseline %s (%d known fingerprints)\n", reports.Plural(len(newer), "finding"), path, known.Len())
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

// writeTools writes the tools table as CSV to toolsOut (--tools-out, by writeOutput's rules);
// nothing when toolsOut is empty.
func writeTools(ctx context.Context, env *Env, toolsOut string, tools *reports.Table) error {
	if toolsOut == "" {
		return nil
	}
	var b bytes.Buffer
	if err := reports.WriteCSV(&b, tools); err != nil {
		return fmt.Errorf("audit: render tools: %w", err)
	}
	return env.WriteOutput(ctx, toolsOut, b.Bytes())
}
