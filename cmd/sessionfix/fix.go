package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/textreport"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
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
		Description: helptext.FixDescription() + fixRulesDescription(),
		Flags: append(append(planFlags(),
			&cli.BoolFlag{Name: "apply", Usage: "write the changes (default: dry-run, print the plan)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print the plan and write nothing: the default, said explicitly (contradicts --apply)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask for confirmation (required with --apply when standard input is not a terminal)"},
			&cli.BoolFlag{Name: "force", Usage: "rewrite also a file you do not own (it becomes yours: only root can give it back) or that is read-only (it stays so); without it such a file is named and its names kept (exit 3)"},
			&cli.StringFlag{Name: "state-dir", Usage: "where runs and backups are kept (default: ${XDG_STATE_HOME:-~/.local/state}/sessionfix)", EnvVars: []string{"SESSIONFIX_STATE_DIR"}},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table or json"},
			workersFlag(),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: fmt.Sprintf("list the plan of every store, also the names that need nothing (builtin, clean, normalized); above %d stores the text output is otherwise a summary", textreport.SummaryStores)},
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
			if !c.Bool("rules") {
				if err := rulefix.CheckFlags(nil, false, c.IsSet); err != nil {
					return err
				}
				return runFix(c.Context, env, opts)
			}
			a, err := rulefix.Agent(opts.Common.Agent)
			if err != nil {
				return err
			}
			if err := rulefix.CheckFlags(a, true, c.IsSet); err != nil {
				return err
			}
			ropts, err := newFixRulesOptions(c, a, opts)
			if err != nil {
				return err
			}
			return runFixRules(c.Context, env, a, ropts)
		},
	}
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
		textreport.PlanSummary(fixSays(env, opts), opts.Plan, lp)
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
	failOnKept, err := pipeline.FailOnKept(opts.FailOn)
	if err != nil {
		return err
	}
	opts.StateDir = stateDirOf(env, opts.StateDir)
	opts.Common.StateDir = opts.StateDir
	if opts.Apply {
		// Before discovery, so a removed leftover is not also reported by the scan.
		cleanLeftovers(env, opts.StateDir)
	}
	view := &textreport.FixView{Out: env.Out, Err: env.Err, Opts: opts.textOptions(), PlanOut: opts.PlanOut}
	if opts.Report != "" {
		if view.Report, err = pipeline.NewFixReport(opts.Report); err != nil {
			return err
		}
		view.WriteReport = func(e pipeline.FixPassEnd, stopped error) error {
			return writeFixReport(ctx, env, opts, view.Report, e, stopped)
		}
	}
	end, err := pipeline.Fix(ctx, pipelineEnv(env), pipeline.FixRequest{Paths: opts.Paths, Options: opts.Common, Apply: opts.Apply, Yes: opts.Yes,
		Planned: planned, PlanFile: opts.Plan, PlanOut: opts.PlanOut, Workers: opts.Workers, Now: env.Now, FailOnKept: failOnKept, Force: opts.Force},
		pipeline.FixHooks{
			View: view,
			Run:  func(p *pipeline.Pipeline) pipeline.RunFunc { return (&pipelineRun{Pipeline: p, env: env}).run },
			Confirm: func(s *pipeline.Summary) (bool, error) {
				t := s.Report.Totals
				flushOut(env)
				fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
					plural(t.Rewrite, "name"), report.StoresPhrase(t.RewriteStores, s.RewriteDBs), opts.StateDir)
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

// textOptions are the flags the text output follows.
func (o fixOptions) textOptions() textreport.FixOptions {
	return textreport.FixOptions{Format: o.Format, Verbose: o.Verbose, Quiet: o.Quiet, Apply: o.Apply, StateDir: o.StateDir}
}

// writeFixReport writes --report's file (rep, filled by the final pass; e the pass's end,
// stopped why the run stopped early, nil at its end) and says where (stderr with --format json,
// whose standard output is one document).
func writeFixReport(ctx context.Context, env *Env, opts fixOptions, rep *pipeline.FixReport, e pipeline.FixPassEnd, stopped error) error {
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	doc, err := rep.Render(pipeline.FixReportRunOf(e, stopped, opts.Apply, opts.StateDir, opts.Paths, now(), version))
	if err != nil {
		return err
	}
	if err := fileio.WriteOutputContext(ctx, env.Out, rep.Path, doc); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	fmt.Fprintf(fixSays(env, opts), "report written to %s\n", rep.Path)
	return nil
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
