package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// namingFlags are the flags a plan records (rewrite.PlanOptions): fix --plan refuses them.
// They are planFlags (the agents' options among them), in --help order.
var namingFlags = flagNames(planFlags())

// flagNames are the names of flags, in order.
func flagNames(flags []cli.Flag) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = f.Names()[0]
	}
	return out
}

// checkPlanFlags refuses the combinations of --plan-out and --plan that make no sense, before
// anything is read.
func checkPlanFlags(opts fixOptions) error {
	switch {
	case opts.planSet && opts.Plan == "":
		return usageErrorf("--plan needs a file name; it was given an empty one")
	case opts.PlanOut != "" && opts.Plan != "":
		return usageErrorf("--plan-out and --plan exclude each other: --plan-out writes a plan (a dry run), --plan applies one")
	case opts.PlanOut != "" && opts.Apply:
		return usageErrorf("--plan-out writes the plan of a dry run for review; apply it later with fix --apply --plan FILE (nothing was changed)")
	case opts.PlanOut == "-":
		return usageErrorf("--plan-out needs a file: standard output carries the report")
	case opts.Plan != "" && !opts.Apply:
		return usageErrorf("--plan applies a plan: it needs --apply (fix --plan-out FILE makes one)")
	case opts.Plan != "" && len(opts.Paths) > 0:
		return usageErrorf("--plan takes its stores from the plan: give no PATH")
	case opts.Plan != "" && len(opts.namingSet) > 0:
		return usageErrorf("--plan records the naming options it was made with: drop %s", strings.Join(opts.namingSet, ", "))
	}
	return nil
}

// writePlanFile writes the collected plan to --plan-out and says so (standard output for text, standard
// error with --format json, whose standard output is one document).
func writePlanFile(ctx context.Context, env *Env, opts fixOptions, pc *pipeline.PlanCollector) error {
	pf := pc.Plan()
	now := time.Now
	if env.Now != nil {
		now = env.Now
	}
	pf.Created = now().UTC()
	pf.Options = pipeline.RecordedOptions(opts.Common)
	b, err := rewrite.MarshalPlanFile(pf)
	if err != nil {
		return err
	}
	if err := fileio.WriteOutputContext(ctx, env.Out, opts.PlanOut, b); err != nil {
		return fmt.Errorf("--plan-out: %w", err)
	}
	w := env.Out
	if opts.Format == "json" {
		w = env.Err
	}
	fmt.Fprintf(w, "plan written to %s (%s in %s); nothing was changed; apply exactly this plan with: sessionfix fix --apply --yes --plan %s\n",
		opts.PlanOut, plural(pc.Names, "name"), plural(len(pc.Stores), "store"), reports.ShellQuote(opts.PlanOut))
	return nil
}
