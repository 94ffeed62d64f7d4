package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/fleet"
	"github.com/sessionfix/sessionfix/helptext"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/textreport"
)

type scanOptions struct {
	Paths   []string
	Format  string
	Workers int
	Verbose bool
	Common  pipeline.Options
	// FailOn is --fail-on (only "kept": exit exitcode.Finding when a name a provider rejects is kept).
	FailOn string
	// Baseline is --baseline: a previous scan --format sarif output; only findings not in it
	// make the run exit 5.
	Baseline string
	// Out is --out (the fleet database of --format sqlite); Host and User are --host and
	// --user ("": the host name, each home's owner).
	Out, Host, User string
}

func newScanCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:        "scan",
		Usage:       "find legacy MCP tool names in session stores (read-only)",
		ArgsUsage:   "[PATH...]",
		Description: helptext.ScanDescription(),
		Flags: append(append(planFlags(),
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output format: table, json, sarif (SARIF 2.1.0 for code scanning: one result per name fix would rewrite or keeps although a provider rejects it), or sqlite (with --out: the fleet database, one row per such name; docs/fleet.md)"},
			fleetOutFlag(),
			workersFlag(),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: fmt.Sprintf("list every store and name (above %d stores the text output is a summary)", textreport.SummaryStores)},
			failOnFlag(),
			fileFlag("baseline", "a previous scan --format sarif output: exit 5 only for findings (names fix would rewrite or keeps while a provider rejects them) not in it"),
		), fleetFlags()...),
		Action: func(c *cli.Context) error {
			opts := scanOptions{Paths: c.Args().Slice(), Format: c.String("format"), Workers: c.Int("workers"), Verbose: c.Bool("verbose"), Common: readPlanFlags(c),
				FailOn: c.String("fail-on"), Baseline: c.String("baseline"), Out: c.String("out"), Host: c.String("host"), User: c.String("user")}
			return runScan(c.Context, env, opts)
		},
	}
}

func runScan(ctx context.Context, env *Env, opts scanOptions) error {
	if err := usage.Format(opts.Format, "table", "json", "sarif", "sqlite"); err != nil {
		return err
	}
	if err := checkSQLiteOut(opts.Format, opts.Out); err != nil {
		return err
	}
	if err := usage.Workers(opts.Workers); err != nil {
		return err
	}
	failOnKept, err := pipeline.FailOnKept(opts.FailOn)
	if err != nil {
		return err
	}
	if err := opts.Common.Validate(); err != nil {
		return err
	}
	var known *reports.SARIFBaseline
	if opts.Baseline != "" {
		if known, err = pipeline.LoadSARIFBaseline(opts.Baseline); err != nil {
			return err
		}
	}
	origin, err := fleet.NewOrigin(opts.Host, opts.User, opts.Paths, env.Home)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := newPipeline(ctx, env, opts.Paths, opts.Common)
	if err != nil {
		return jsonErrorAt(env, opts.Format, origin.SARIF("scan", nil, nil, nil), err)
	}
	if len(opts.Paths) == 0 { // the default roots: $HOME's
		if origin, err = fleet.NewOrigin(opts.Host, opts.User, p.Roots, env.Home); err != nil {
			return err
		}
	}
	var sar report.ScanSARIF
	if _, err := p.run(ctx, rewrite.ProcessOptions{ApplyOptions: rewrite.ApplyOptions{Workers: opts.Workers}}, func(r *rewrite.StoreResult) error {
		if (opts.Format == "sarif" || opts.Format == "sqlite" || known != nil) && r.ScanErr == nil && r.Plan != nil {
			sar.Add(r.Plan)
		}
		return nil
	}); err != nil {
		return jsonErrorAt(env, opts.Format, origin.SARIF("scan", nil, nil, nil), err)
	}
	rep := &p.Summary.Report
	rep.Roots, rep.Elapsed = p.Roots, time.Since(start).Round(time.Millisecond).String()
	// The name findings come first; re-dispatch findings follow and are marked against a
	// baseline but never make its exit status (README: they change no exit status, as in
	// check and audit).
	names := len(sar.Results)
	rules, results := report.RedispatchSARIF(rep.Redispatch)
	sar.Rules, sar.Results = append(sar.Rules, rules...), append(sar.Results, results...)
	if opts.Format == "json" {
		if err := reports.WriteJSON(env.Out, rep); err != nil {
			return err
		}
		textreport.Problems(env.Out, env.Err, rep.Problems)
	} else if opts.Format == "sarif" {
		results := sar.Results
		if known != nil {
			results, _ = known.Mark(results)
		}
		inv := textreport.SARIFInvocation(rep.Problems, p.Summary.Failed || p.Summary.InUse > 0)
		if err := writeSARIF(env, origin.SARIF("scan", sar.Rules, results, inv)); err != nil {
			return err
		}
		textreport.Problems(env.Out, env.Err, rep.Problems)
	} else if opts.Format == "sqlite" {
		complete := !p.Summary.Failed && p.Summary.InUse == 0
		if err := writeFleet(ctx, env, opts.Out, "scan", origin, origin.Rows(sar.Results, "", nil), complete); err != nil {
			return err
		}
		textreport.Problems(env.Out, env.Err, rep.Problems)
	} else if err := textreport.Scan(env.Out, env.Err, p.Summary, opts.Verbose); err != nil {
		return err
	}
	if known != nil && p.Summary.InUse == 0 && !p.Summary.Failed {
		_, n := known.Mark(sar.Results[:names])
		if n > 0 {
			fmt.Fprintf(env.Err, "scan: %s not in the baseline %s (%d known fingerprints)\n", plural(n, "finding"), opts.Baseline, known.Len())
			return withCode(exitcode.Finding)
		}
		fmt.Fprintf(env.Err, "scan: no finding new since the baseline %s (%s now, %d known fingerprints)\n", opts.Baseline, plural(names, "finding"), known.Len())
		return nil
	}
	return endCode(p.Summary, env, "scan", false, failOnKept)
}

// jsonErrorAt ends the output of a run with --format json or sarif stopped by err before its
// report (nothing could be read, an interrupt; reports.WriteErrorDocument): a closed document,
// as undo and an aborted fix write, whose SARIF run is run (its category and properties: the
// host and user). err is returned unchanged (its message goes to standard error, the exit
// status is err's). With another format nothing is written.
func jsonErrorAt(env *Env, format string, run reports.SARIFRun, err error) error {
	msg := err.Error()
	if errors.Is(err, context.Canceled) {
		msg = "interrupted"
	}
	_ = reports.WriteErrorDocument(env.Out, format, run, msg, version)
	return err
}

// writeSARIF writes one SARIF 2.1.0 log holding run to standard output.
func writeSARIF(env *Env, run reports.SARIFRun) error {
	return reports.WriteSARIFRuns(env.Out, "sessionfix", version, "https://github.com/sessionfix/sessionfix", []reports.SARIFRun{run})
}
