package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/owner"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
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

// writePlanSummary says, before anything is read or asked, what the plan file is: who wrote it
// (the file's owner: another user's plan carries no profile or inventory and, as root, is
// applied only to that user's files), when, and every option it carries, as the plan records
// them (docs/plan.md; issue 30 finding 2). On standard output, or standard error with
// --format json.
func writePlanSummary(env *Env, opts fixOptions, lp *pipeline.LoadedPlan) {
	w := env.Out
	if opts.Format == "json" {
		w = env.Err
	}
	who := "you"
	if lp.Foreign {
		who = owner.Describe(lp.Author) + ", not you: it may not carry a profile or an inventory"
		if lp.Options.StoresOwnedBy != nil {
			who += ", and only that user's files are rewritten"
		}
	}
	names := 0
	for _, ps := range lp.Planned {
		names += ps.Names
	}
	fmt.Fprintf(w, "plan %s: written %s by %s; %s in %s; options: %s\n", reports.Printable(opts.Plan),
		lp.Created.UTC().Format("2006-01-02 15:04:05Z"), who, plural(names, "name"), plural(len(lp.Paths), "store"), planOptionList(lp.Recorded))
}

// planOptionList is every option a plan carries, in the plan's order: "name value" pairs
// (a list joined by commas) separated by "; ", or "none".
func planOptionList(o rewrite.PlanOptions) string {
	b, err := json.Marshal(o)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return "none"
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		var val string
		switch x := v.(type) {
		case string:
			val = reports.Printable(x)
		case []any:
			var items []string
			for _, it := range x {
				items = append(items, reports.Printable(fmt.Sprint(it)))
			}
			val = strings.Join(items, ",")
		default:
			val = fmt.Sprint(x)
		}
		parts = append(parts, fmt.Sprintf("%v %s", k, val))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
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
