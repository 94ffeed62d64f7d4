package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
)

// namingFlags are the flags a plan records (rewrite.PlanOptions): fix --plan refuses them.
// They are planFlags (the agents' options among them), in --help order.
var namingFlags = flagNames(planFlags())

// planStartFlag reports whether the plan flag f is about starting MCP servers (--discover,
// --discover-untrusted): a plan never decides that (issue 30 finding 1), so fix --plan takes
// them from the command line — --discover is required by a plan made with it, and refused by
// one made without.
func planStartFlag(f string) bool { return f == "discover" || f == "discover-untrusted" }

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
		return usage.FileName("plan", opts.Plan)
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
	case opts.Plan != "" && opts.Common.AllUsers:
		return usageErrorf("--plan takes its stores from the plan: drop --all-users (the plan of a dry run with --all-users names every home's stores)")
	case opts.Plan != "" && len(opts.namingSet) > 0:
		return usageErrorf("--plan records the naming options it was made with: drop %s", strings.Join(opts.namingSet, ", "))
	}
	return nil
}

// fixSays is where fix says what it did besides its report: standard output, or standard
// error with --format json (whose standard output is one document).
func fixSays(env *Env, opts fixOptions) io.Writer {
	if opts.Format == "json" {
		return env.Err
	}
	return env.Out
}

// writePlanFile writes the collected plan to --plan-out (pipeline.WritePlan) and says so.
func writePlanFile(ctx context.Context, env *Env, opts fixOptions, pc *pipeline.PlanCollector) error {
	if err := pc.Write(ctx, env.Out, opts.PlanOut, opts.Common, env.Now); err != nil {
		return err
	}
	fmt.Fprintf(fixSays(env, opts), "plan written to %s (%s in %s); nothing was changed; apply exactly this plan with: sessionfix fix --apply --yes --plan %s\n",
		opts.PlanOut, plural(pc.Names, "name"), plural(len(pc.Stores), "store"), reports.ShellQuote(opts.PlanOut))
	return nil
}
