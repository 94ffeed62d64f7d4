package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sessionfix/sessionfix/agent/all"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/rulefix"
)

type fixOptions struct {
	Paths []string
	Apply bool
	// DryRun is --dry-run/-n: the default said explicitly (it contradicts --apply).
	DryRun   bool
	Yes      bool
	StateDir string
	Format   string
	Workers  int
	Verbose  bool
	Quiet    bool
	Common   pipeline.Options
	// FailOn is --fail-on (only "kept": exit exitcode.Finding when a name a provider rejects is kept).
	FailOn string
	// PlanOut is --plan-out: the dry run's plan is written there (rewrite.PlanFile).
	PlanOut string
	// Plan is --plan: apply exactly this plan file; namingSet are the naming flags given
	// with it (refused: the plan records its own).
	Plan      string
	planSet   bool
	namingSet []string
	// Force is --force: rewrite also a file another user owns or that is read-only.
	Force bool
	// Report is --report FILE: a report of the run for the person whose stores it changed
	// (pipeline.FixReport).
	Report string
}

func newFixCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "fix",
		Usage:       "rewrite legacy MCP tool names (dry-run unless --apply)",
		ArgsUsage:   "[PATH...]",
		Description: fixDescription() + fixRulesDescription(),
		Flags: append(append(planFlags(),
			&cli.BoolFlag{Name: "apply", Usage: "write the changes (default: dry-run, print the plan)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the plan and write nothing: the default, said explicitly (contradicts --apply)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation (required with --apply when standard input is not a terminal)"},
			&cli.BoolFlag{Name: "force", Usage: "rewrite also a file you do not own (it becomes yours: only root can give it back) or that is read-only (it stays so); without it such a file is named and its names kept (exit 3)"},
			&cli.StringFlag{Name: "state-dir", Usage: "where runs and backups are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json"},
			workersFlag(),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: fmt.Sprintf("list the plan of every store, also the names that need nothing (builtin, clean, normalized); above %d stores the text output is otherwise a summary", summaryStores)},
			quietFlag(quietUsage+"; a run that prints lists no plan: only the stores skipped, problems and the summary"),
			failOnFlag(),
			&cli.StringFlag{Name: "plan-out", Usage: "write the plan of this dry run to FILE (a sealed JSON plan file, docs/plan.md) for fix --apply --plan FILE", TakesFile: true},
			&cli.StringFlag{Name: "plan", Usage: "with --apply: apply exactly the plan in FILE (written by --plan-out); a store that changed since is refused (exit 4), the others are rewritten as planned", TakesFile: true},
			&cli.BoolFlag{Name: "move-legacy", Usage: "also move each store its agent's newest release no longer opens where it lies (a legacy layout) to where that release opens the same bytes, after the rewrites; recorded in the run, undo moves it back (a dry run lists the moves)"},
			&cli.StringFlag{Name: "report", Usage: "also write a report of the run to FILE for the person whose stores it changed: a file named .html (a page) or .md (Markdown); per store old → new, the names kept and why, what was skipped, and the command that undoes the run", TakesFile: true},
		), fixRulesFlags()...),
		Action: func(c *cli.Context) error {
			opts := fixOptions{
				Paths: c.Args().Slice(), Apply: c.Bool("apply"), DryRun: c.Bool("dry-run"), Yes: c.Bool("yes"), StateDir: c.String("state-dir"),
				Format: c.String("format"), Workers: c.Int("workers"), Verbose: c.Bool("verbose"), Quiet: c.Bool("quiet"), Common: readPlanFlags(c),
				FailOn: c.String("fail-on"), PlanOut: c.String("plan-out"), Plan: c.String("plan"), planSet: c.IsSet("plan"),
				Force:  c.Bool("force"),
				Report: c.String("report"),
			}
			opts.Common.MoveLegacy = c.Bool("move-legacy")
			if c.IsSet("plan-out") {
				if err := usage.FileName("plan-out", opts.PlanOut); err != nil {
					return err
				}
			}
			for _, f := range namingFlags {
				if c.IsSet(f) && !planStartFlag(f) {
					opts.namingSet = append(opts.namingSet, "--"+f)
				}
			}
			if c.Bool("rules") {
				a, err := ruleFixFor(opts.Common.Agent)
				if err != nil {
					return err
				}
				// The rule migration has no plan file, no --fail-on and reads no MCP config:
				// refused rather than silently ignored.
				for _, f := range rulefix.NotTaken(a) {
					if c.IsSet(f) {
						if slices.Contains(rulefix.OnlyFlags(), f) {
							return usageErrorf("--%s does not go with --rules of %s (it is a flag of %s; nothing was changed)", f, all.RuleFixOf(a).Rules, fixRulesWhat(f))
						}
						return usageErrorf("--%s does not go with --rules (%s; nothing was changed)", f, all.RuleFixOf(a).What)
					}
				}
				ropts, err := newFixRulesOptions(c, a, opts)
				if err != nil {
					return err
				}
				return runFixRules(c.Context, env, a, ropts)
			}
			for _, f := range rulefix.OnlyFlags() {
				if c.IsSet(f) {
					return usageErrorf("--%s goes with --rules (%s)", f, fixRulesWhat(f))
				}
			}
			return runFix(c.Context, env, opts)
		},
	}
}

// fixOutput prints fix results as they stream in: the plan of each store (table or one JSON
// object per store) and, with --apply, what happened to it.
type fixOutput struct {
	env      *Env
	opts     fixOptions
	showPlan bool
	// summary: a large run in text (summaryMode): the plans of the first summaryStores stores
	// with something to list (planStores counts them) are held in plans and printed at the
	// end only when no more came (overflow false); writeSummary follows either way.
	summary   bool
	plans     []string
	overflow  bool
	jsonStart bool
	began     bool
	// skipped: the stores --apply skipped or failed to write (pipeline.FixTally's), for the
	// JSON tail.
	skipped []pipeline.SkippedRow
	// partOpen: the plan of a store given in parts was printed without its closing blank line.
	partOpen bool
	// moves: the stores --move-legacy would move (dry run) or moved (apply).
	moves []pipeline.MoveRow
	// The text plan's size (issue 23 item 11: one 200 MiB session printed 165,301 lines):
	// rows is how many plan rows were listed, curPath, curRows and curCut the store being
	// listed and its rows listed and left out (a store given in parts counts as one); cutRows
	// and cutStores what was left out in all (planStoreRows, planRows).
	rows, curRows, curCut int
	planStores            int // stores with a plan so far
	curPath               string
	cutRows, cutStores    int
}

// A text plan lists at most planStoreRows rows of one store and planRows rows in all (without
// -v): a store's rows beyond are counted in one line under its table, the stores after the
// last row in the closing summary (writeFixSummary), so the output of a run grows with what
// it has to say, not with the size of the stores.
const (
	planStoreRows = 50
	planRows      = 200
)

// budget cuts fs's rows to what planStoreRows and planRows leave (every row with -v or in
// JSON), counting what it cut: curCut of the current store (all its parts), cutRows and
// cutStores of the run.
func (o *fixOutput) budget(fs fixStore) fixStore {
	if o.opts.Verbose || o.opts.Format == "json" {
		return fs
	}
	if fs.Path != o.curPath || !fs.Cont {
		o.curPath, o.curRows, o.curCut = fs.Path, 0, 0
	}
	room := max(0, min(planStoreRows-o.curRows, planRows-o.rows))
	if len(fs.Decisions) <= room {
		o.rows += len(fs.Decisions)
		o.curRows += len(fs.Decisions)
		return fs
	}
	more := len(fs.Decisions) - room
	fs.Decisions = fs.Decisions[:room]
	o.rows += room
	o.curRows += room
	if o.curCut == 0 {
		o.cutStores++
	}
	o.curCut += more
	o.cutRows += more
	return fs
}

func (o *fixOutput) store(r *rewrite.StoreResult) error {
	last := r.Batch == nil || r.Batch.Last
	// closeOpen ends a store whose parts were printed without their closing blank line, with
	// the count of its rows left out (cutTail).
	closeOpen := func() error {
		if !last || !o.partOpen {
			return nil
		}
		o.partOpen = false
		if o.curCut > 0 {
			fmt.Fprintf(o.env.Out, "  %s\n", cutTail(o.curCut))
		}
		_, err := fmt.Fprintln(o.env.Out)
		return err
	}
	if r.Plan == nil {
		return closeOpen() // reported with the problems
	}
	fs, _ := pipeline.FixStoreOf(r, o.showPlan, o.opts.Verbose)
	fs.Cont, fs.Open = r.Batch != nil && r.Batch.Index > 0, r.Batch != nil && !r.Batch.Last && !o.summary
	if len(fs.Decisions) == 0 && fs.Outcome == nil {
		return closeOpen()
	}
	if o.opts.Format == "json" {
		b, err := marshalJSON(fs)
		if err != nil {
			return err
		}
		sep := ",\n"
		if !o.jsonStart {
			sep = ""
			o.jsonStart = true
		}
		_, err = fmt.Fprintf(o.env.Out, "%s%s", sep, b)
		o.skippedLine(fs)
		return err
	}
	if len(fs.Decisions) > 0 {
		fs = o.budget(fs)
		tail := ""
		if last && o.curCut > 0 {
			tail = cutTail(o.curCut)
		}
		if !fs.Cont {
			o.planStores++
		}
		switch {
		case o.overflow:
		case o.summary && o.planStores > summaryStores:
			o.overflow, o.plans = true, nil
		case len(fs.Decisions) == 0:
			// Past the rows a plan lists: counted under the store and in the closing summary.
			if err := closeOpen(); err != nil {
				return err
			}
		case !o.summary:
			if err := writeStorePlan(o.env.Out, fs, tail); err != nil {
				return err
			}
			o.partOpen = fs.Open
		default:
			var b strings.Builder
			if err := writeStorePlan(&b, fs, tail); err != nil {
				return err
			}
			o.plans = append(o.plans, b.String())
		}
	} else if err := closeOpen(); err != nil {
		return err
	}
	o.skippedLine(fs)
	return nil
}

// cutTail is the line under a store's plan that counts its rows not listed.
func cutTail(n int) string {
	return fmt.Sprintf("… and %s of this store not listed (-v lists every name, --format json has them)", plural(n, "more name site"))
}

// writeHeld prints the plans a summary-mode run held back, when they were few enough
// (writeFixSummary says so otherwise).
func (o *fixOutput) writeHeld() {
	for _, p := range o.plans {
		fmt.Fprint(o.env.Out, p)
	}
}

// skippedLine reports a store --apply skipped (in use) or failed to write, on standard error
// with every format (issue 8 item 7); JSON also has it in "skipped" and the store's outcome.
func (o *fixOutput) skippedLine(fs fixStore) {
	if fs.Outcome == nil {
		return
	}
	if fs.Outcome.Status == "rewritten" {
		if fs.Outcome.Reason != "" {
			flushOut(o.env)
			fmt.Fprintf(o.env.Err, "%s: rewritten, but: %s\n", reports.Printable(fs.Path), reports.Printable(pipeline.TrimPathPrefix(fs.Path, fs.Outcome.Reason)))
		}
		return
	}
	label := "failed"
	if fs.Outcome.Status == "in-use" {
		label = "in use, skipped"
	}
	flushOut(o.env)
	fmt.Fprintf(o.env.Err, "%s: %s: %s\n", reports.Printable(fs.Path), label, reports.Printable(pipeline.TrimPathPrefix(fs.Path, fs.Outcome.Reason)))
}

// begin opens the JSON document.
func (o *fixOutput) begin(mode string) {
	o.jsonStart = false
	o.began = true
	if o.opts.Format == "json" {
		fmt.Fprintf(o.env.Out, "{\"mode\":%q,\"stores\":[\n", mode)
	}
}

func (o *fixOutput) end(a *aggregate, summary string, res *rewrite.Result) error {
	if o.opts.Format == "json" {
		t := pipeline.FixTail{Summary: summary, Kept: a.KeptLine(), Totals: a.Report.Totals, Skipped: o.skipped, Problems: a.Report.Problems, Agents: a.Report.Agents, Homes: a.Report.Homes,
			Redispatch: a.Report.Redispatch, RedispatchNote: pipeline.RedispatchLine(a.Report.Redispatch), Moves: o.moves}
		if t.Skipped == nil {
			t.Skipped = []pipeline.SkippedRow{}
		}
		if res != nil {
			t.RunID, t.RunDir = res.RunID, res.Dir
		}
		b, err := marshalJSON(t)
		if err != nil {
			return err
		}
		// Splice the tail's members into the open document.
		_, err = fmt.Fprintf(o.env.Out, "\n],%s\n", b[1:])
		writeProblems(o.env, a.Report.Problems)
		return err
	}
	switch {
	case o.summary:
		o.writeHeld()
		writeFixSummary(o.env.Out, a, o.opts.Quiet || !o.overflow)
	case o.cutRows > 0:
		// A plan too long to list: what was left out, then the summary.
		fmt.Fprintf(o.env.Out, "%s of %s not listed (at most %d a store and %d in all; -v lists every one, --format json has them)\n\n",
			plural(o.cutRows, "name site"), plural(o.cutStores, "store"), planStoreRows, planRows)
		writeFixSummary(o.env.Out, a, true)
	}
	writeProblems(o.env, a.Report.Problems)
	writeAgentInfo(o.env.Out, &a.Report)
	pipeline.WriteRedispatchText(o.env.Out, a.Report.Redispatch)
	writeHomes(o.env.Out, &a.Report, o.skipped, res != nil)
	fmt.Fprintln(o.env.Out, summary)
	for _, m := range o.moves {
		switch {
		case res == nil:
			fmt.Fprintf(o.env.Out, "would move %s -> %s (%s)\n", reports.Printable(m.From), reports.Printable(m.To), m.Why)
		case m.Moved:
			fmt.Fprintf(o.env.Out, "moved %s -> %s\n", reports.Printable(m.From), reports.Printable(m.To))
		default:
			flushOut(o.env)
			fmt.Fprintf(o.env.Err, "%s: not moved to %s: %s\n", reports.Printable(m.From), reports.Printable(m.To), reports.Printable(m.Error))
		}
	}
	if l := a.KeptLine(); l != "" {
		fmt.Fprintln(o.env.Out, l)
	}
	if l := pipeline.RedispatchLine(a.Report.Redispatch); l != "" {
		fmt.Fprintln(o.env.Out, l)
	}
	return nil
}

// writeFixSummary is the bounded summary fix prints after (or, when more than summaryStores
// stores had a plan, instead of) the per-store plans of a run over more than summaryStores
// stores; -v prints every plan, --format json has it. held: the plans were printed, so no
// line says they were left out.
func writeFixSummary(w io.Writer, a *aggregate, held bool) {
	if !held {
		fmt.Fprintf(w, "%s: the plan of each store is not listed (-v lists it, --format json has it)\n\n", plural(len(a.Report.Stores), "store"))
	}
	_ = writeSummary(w, &a.Report, "-v")
	fmt.Fprintln(w)
}

// summaryMode reports whether a fix run over n stores prints a summary instead of each plan.
func summaryMode(opts fixOptions, n int) bool {
	return opts.Format == "table" && !opts.Verbose && n > summaryStores
}

// abort ends the output of a run stopped by err (an interrupt, an unusable state directory):
// the JSON document is closed with an "error" member, and what a run already rewrote is named
// so it can be undone.
func (o *fixOutput) abort(err error, res *rewrite.Result) error {
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted")
	}
	hint := ""
	if res != nil && res.RunID != "" && res.Manifest != nil {
		hint = fmt.Sprintf("; %s already rewritten in run %s (undo with: sessionfix undo --state-dir %s %s)",
			plural(res.Files, "file"), res.RunID, reports.ShellQuote(o.opts.StateDir), res.RunID)
	}
	if o.opts.Format == "json" {
		if !o.began {
			mode := "apply"
			if !o.opts.Apply {
				mode = "dry-run"
			}
			fmt.Fprintf(o.env.Out, "{\"mode\":%q,\"stores\":[", mode)
		}
		skipped := o.skipped
		if skipped == nil {
			skipped = []pipeline.SkippedRow{}
		}
		tail := map[string]any{"error": err.Error() + hint, "skipped": skipped}
		if res != nil {
			tail["run_id"], tail["run_dir"] = res.RunID, res.Dir
		}
		b, merr := marshalJSON(tail)
		if merr == nil {
			fmt.Fprintf(o.env.Out, "\n],%s\n", b[1:])
		}
	}
	return fmt.Errorf("%w%s", err, hint)
}

func marshalJSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

func runFix(ctx context.Context, env *Env, opts fixOptions) error {
	if err := cmp.Or(usage.Format(opts.Format, "table", "json"), usage.Workers(opts.Workers),
		usage.Apply(opts.Apply, opts.DryRun, opts.Yes, env.InTerminal), usage.QuietVerbose(opts.Quiet, opts.Verbose), checkPlanFlags(opts)); err != nil {
		return err
	}
	var planned map[string]*rewrite.PlannedStore
	if opts.Plan != "" {
		lp, err := pipeline.LoadPlan(opts.Plan, opts.Common)
		if err != nil {
			return err
		}
		opts.Common, opts.Paths, planned = lp.Options, lp.Paths, lp.Planned
		writePlanSummary(env, opts, lp)
		if len(opts.Paths) == 0 {
			fmt.Fprintf(env.Err, "fix: the plan %s has nothing to rewrite\n", opts.Plan)
			return nil
		}
	}
	if err := opts.Common.Validate(); err != nil {
		return err
	}
	if opts.Yes && !opts.Apply && !opts.DryRun {
		// --yes answers the --apply question; without --apply there is none.
		fmt.Fprintln(env.Err, "note: --yes without --apply: this is a dry run, nothing is written (add --apply to rewrite)")
	}
	failOnKept, err := checkFailOn(opts.FailOn)
	if err != nil {
		return err
	}
	opts.StateDir = stateDirOf(env, opts.StateDir)
	opts.Common.StateDir = opts.StateDir
	if opts.Apply {
		// Before discovery, so a removed leftover is not also reported by the scan.
		cleanLeftovers(env, opts.StateDir)
	}
	view := &fixView{ctx: ctx, env: env, opts: opts}
	if opts.Report != "" {
		if view.report, err = pipeline.NewFixReport(opts.Report); err != nil {
			return err
		}
	}
	end, err := pipeline.Fix(ctx, pipelineEnv(env), pipeline.FixRequest{Paths: opts.Paths, Options: opts.Common, Apply: opts.Apply, Yes: opts.Yes,
		Planned: planned, PlanFile: opts.Plan, PlanOut: opts.PlanOut, Workers: opts.Workers, Now: env.Now, FailOnKept: failOnKept, Force: opts.Force},
		pipeline.FixHooks{
			View: view,
			Run:  func(p *pipeline.Pipeline) pipeline.RunFunc { return (&pipelineRun{Pipeline: p, env: env}).run },
			Confirm: func(s *aggregate) (bool, error) {
				t := s.Report.Totals
				flushOut(env)
				fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
					plural(t.Rewrite, "name"), pipeline.StoresPhrase(t.RewriteStores, s.RewriteDBs), opts.StateDir)
				return confirm(ctx, env.In)
			},
			WritePlan: func(pc *pipeline.PlanCollector) error { return writePlanFile(ctx, env, opts, pc) },
		})
	if err != nil {
		return err
	}
	if end.Declined {
		return declined(env)
	}
	return exitWith(end.Summary, env, "fix", end.Code)
}

// fixView prints a fix run (pipeline.FixView): the plan of each store and, with --apply,
// what happened to it, through a fixOutput per pass.
type fixView struct {
	ctx  context.Context
	env  *Env
	opts fixOptions
	// report is --report's, filled by the final pass (nil without the flag).
	report *pipeline.FixReport
	// out is the dry-run or apply pass's output, nil before it began; review the interactive
	// plan display's.
	out, review *fixOutput
}

func (v *fixView) Begin(pass pipeline.FixPass, stores int, reviewed bool) {
	large := summaryMode(v.opts, stores)
	switch pass {
	case pipeline.PassReview:
		// Interactive: the whole plan is shown before the question (as a dry run).
		fmt.Fprintln(v.env.Out, "planned changes:")
		tableOpts := v.opts
		tableOpts.Format = "table" // a person reads this before answering
		v.review = &fixOutput{env: v.env, opts: tableOpts, showPlan: !v.opts.Quiet, summary: large}
	case pipeline.PassDryRun:
		v.out = &fixOutput{env: v.env, opts: v.opts, showPlan: !v.opts.Quiet, summary: large}
		v.out.begin("dry-run")
	default:
		// After a review the plan or summary was just shown.
		v.out = &fixOutput{env: v.env, opts: v.opts, showPlan: !v.opts.Quiet && !reviewed, summary: large && !reviewed}
		v.out.begin("apply")
	}
}

func (v *fixView) Store(r *rewrite.StoreResult) error {
	if v.out == nil {
		return v.review.store(r)
	}
	if v.report != nil {
		v.report.Add(r)
	}
	return v.out.store(r)
}

func (v *fixView) End(pass pipeline.FixPass, e pipeline.FixPassEnd) error {
	if pass == pipeline.PassReview {
		// The text end of a run (held plans, summary, problems, closing lines), as a dry run.
		v.review.moves = pipeline.MoveRows(e.Moves, nil)
		return v.review.end(e.Summary, e.Line, nil)
	}
	v.out.skipped = e.Skipped
	v.out.moves = pipeline.MoveRows(e.Moves, e.Result)
	if err := v.out.end(e.Summary, e.Line, e.Result); err != nil {
		return err
	}
	if err := v.writeReport(e, nil); err != nil {
		return err
	}
	res := e.Result
	switch {
	case v.opts.Format != "table":
	case pass == pipeline.PassDryRun:
		switch {
		case v.opts.PlanOut == "" && e.Summary.Report.Totals.Rewrite > 0:
			fmt.Fprintln(v.env.Out, "dry-run: nothing was changed; run with --apply --yes to rewrite")
		case v.opts.PlanOut == "" && len(e.Moves) > 0:
			fmt.Fprintln(v.env.Out, "dry-run: nothing was changed; run with --apply --yes --move-legacy to move")
		}
	case res.RunID != "" && (res.Files > 0 || len(res.Moves) > 0):
		fmt.Fprintf(v.env.Out, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
			res.RunID, res.Dir, reports.ShellQuote(v.opts.StateDir), res.RunID)
		for _, n := range res.Manifest.ToolNotes {
			fmt.Fprintf(v.env.Out, "note: %s\n", n)
		}
	}
	return nil
}

func (v *fixView) Abort(err error, e pipeline.FixPassEnd) error {
	out := v.out
	if out == nil {
		out = &fixOutput{env: v.env, opts: v.opts}
	}
	out.skipped = e.Skipped
	if rerr := v.writeReport(e, err); rerr != nil {
		fmt.Fprintf(v.env.Err, "sessionfix: %v\n", rerr)
	}
	return out.abort(err, e.Result)
}

// writeReport writes --report's file, when asked, and says where (stderr with --format json,
// whose standard output is one document). stopped is why the run stopped early (nil at its
// end).
func (v *fixView) writeReport(e pipeline.FixPassEnd, stopped error) error {
	if v.report == nil || (v.out == nil && stopped == nil) {
		return nil
	}
	now := time.Now
	if v.env.Now != nil {
		now = v.env.Now
	}
	doc, err := v.report.Render(pipeline.FixReportRunOf(e, stopped, v.opts.Apply, v.opts.StateDir, v.opts.Paths, now(), version))
	if err != nil {
		return err
	}
	if err := fileio.WriteOutputContext(v.ctx, v.env.Out, v.report.Path, doc); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	w := v.env.Out
	if v.opts.Format == "json" {
		w = v.env.Err
	}
	fmt.Fprintf(w, "report written to %s\n", v.report.Path)
	return nil
}

// writeStorePlan prints one store's plan, then tail (what of it is not listed) when not empty.
func writeStorePlan(w io.Writer, fs fixStore, tail string) error {
	if !fs.Cont {
		fmt.Fprintf(w, "%s (%s)\n", reports.Printable(fs.Path), pipeline.KindLabel(fs.Kind, fs.Profile))
	}
	t := &reports.Table{Columns: []string{whereHeader(fs.Decisions), "site", "old", "new", "class"}}
	notes := map[string]bool{}
	var noteOrder []string
	for _, d := range fs.Decisions {
		newName := d.New
		switch d.Action {
		case string(naming.ActKeep):
			newName = "(kept)"
		case string(naming.ActNone):
			newName = "(unchanged)"
		}
		t.Add(d.Where, d.Site, d.Old.String(), newName, pipeline.ReasonLabel(d.Class, d.Reasons))
		if d.Note != "" {
			k := d.Old.String() + ": " + d.Note
			if !notes[k] {
				notes[k] = true
				noteOrder = append(noteOrder, k)
			}
		}
	}
	var b strings.Builder
	if err := reports.WriteText(&b, t); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if fs.Cont && len(lines) > 1 {
		lines = lines[1:] // the column heading was printed with the first part
	}
	for _, line := range lines {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, n := range noteOrder {
		fmt.Fprintf(w, "  note: %s\n", reports.Printable(n))
	}
	if tail != "" {
		fmt.Fprintf(w, "  %s\n", tail)
	}
	if fs.Open {
		return nil
	}
	_, err := fmt.Fprintln(w)
	return err
}

// whereHeader names the location column of a plan by what it holds: "line" (line numbers),
// "row" (database rows), "offset" (@byte offsets of a whole-file JSON store), or a
// combination such as "line/row".
func whereHeader(ds []pipeline.DecisionRow) string {
	var line, row, off bool
	for _, d := range ds {
		switch {
		case d.Row != "":
			row = true
		case d.Line > 0:
			line = true
		default:
			off = true
		}
	}
	var parts []string
	for _, p := range []struct {
		on bool
		s  string
	}{{line, "line"}, {row, "row"}, {off, "offset"}} {
		if p.on {
			parts = append(parts, p.s)
		}
	}
	if len(parts) == 0 {
		return "where"
	}
	return strings.Join(parts, "/")
}

// confirm reads a yes/no answer; anything but y/yes is no.
// confirm reads the answer to a [y/N] prompt: true for "y" or "yes" (any case). A signal
// (ctx cancelled) stops the wait at once, with ctx's error: the reader is left blocked in its
// goroutine, and the process exits.
func confirm(ctx context.Context, r io.Reader) (bool, error) {
	answer := make(chan bool, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			answer <- false
			return
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			answer <- true
			return
		}
		answer <- false
	}()
	select {
	case ok := <-answer:
		return ok, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// declined ends a run whose [y/N] question was answered no: said on standard error, exit
// exitcode.Declined.
func declined(env *Env) error {
	fmt.Fprintln(env.Err, "nothing was changed")
	return withCode(exitcode.Declined)
}
