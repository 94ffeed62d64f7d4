package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/textreport"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rulefix"
)

// fixRulesFlags are fix's flags for the rule migrations: --rules and the migrations' own
// (agent.RuleFix.Options).
func fixRulesFlags() []cli.Flag {
	rf := rulefix.Fixers()
	if len(rf) == 0 {
		return nil
	}
	var what []string
	for _, a := range rf {
		what = append(what, all.RuleFixOf(a).Usage)
	}
	out := []cli.Flag{&cli.BoolFlag{Name: "rules", Usage: "rewrite permission rules written in an older release's spelling to the spelling that matches the same raw tools now: " +
		strings.Join(what, "; ") + "; without it rule files are never written"}}
	for _, o := range rulefix.SharedOptions() {
		out = append(out, optionFlag(o))
	}
	return out
}

// fixRulesDescription is fix's --help sections on the rule migrations ("" without one).
func fixRulesDescription() string {
	var b strings.Builder
	for _, a := range rulefix.Fixers() {
		b.WriteString(all.RuleFixOf(a).Help)
	}
	return b.String()
}

type fixRulesOptions struct {
	fixOptions
	// Options are the values of the migration's own flags and of the agent's options it
	// uses (agent.RuleFix.Options, Uses), by flag name.
	Options agent.Values
	Cwd     string
}

// printProblem prints what fix --rules could not use (the run goes on and ends partial).
func printProblem(env *Env) func(error) {
	return func(err error) { fmt.Fprintf(env.Err, "sessionfix: %s\n", reports.Printable(err.Error())) }
}

// runFixRules is fix --rules: its options checked, rulefix.Run with the plan, the question and
// the outcome printed.
func runFixRules(ctx context.Context, env *Env, rf agent.Agent, o fixRulesOptions) error {
	if err := cmp.Or(usage.Format(o.Format, "table", "json"), usage.Apply(o.Apply, o.DryRun, o.Yes, env.InTerminal),
		rulefix.CheckOptions(rf, o.Common.Inventory, o.Common.Discover || o.Common.KeepTruncated || o.Common.RewriteLossy, o.Common.AgentOptions)); err != nil {
		return err
	}
	o.StateDir = stateDirOf(env, o.StateDir)
	end, err := rulefix.Run(ctx, rf, rulefix.Request{Apply: o.Apply, Yes: o.Yes, StateDir: o.StateDir, Now: env.Now,
		Input: agent.RuleFixInput{Env: agent.Env{Getenv: env.Getenv, Home: env.Home}, Inventory: o.Common.Inventory,
			Paths: o.Paths, Cwd: o.Cwd, Options: o.Options,
			StoredNames: pipeline.StoredNames, Renames: func() (*agent.Renames, []error) { return pipeline.RecordedRenames(o.StateDir) },
			Note: func(s string) { fmt.Fprintf(env.Err, "sessionfix: note: %s\n", reports.Printable(s)) },
			Warn: func(w string) { fmt.Fprintf(env.Err, "sessionfix: warning: %s\n", reports.Printable(w)) }}},
		rulefix.Hooks{
			Problem: printProblem(env),
			Planned: func(plan *agent.RuleFixPlan, _ *rulefix.Planned) {
				if o.Format == "table" {
					textreport.RulePlan(env.Out, all.RuleFixOf(rf).Rules, plan.Changes, plan.Version)
				}
			},
			Confirm: func(pl *rulefix.Planned) (bool, error) {
				flushOut(env)
				fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
					plural(pl.Rewrites, "rule"), plural(len(pl.Plan.Stores), "file"), o.StateDir)
				return confirm(ctx, env.In)
			},
			BeforeApply: func() { cleanLeftovers(env, o.StateDir) },
		})
	if err != nil {
		return err
	}
	if end.Declined {
		return declined(env)
	}
	if !end.Applied {
		if o.Format == "json" {
			if err := reports.WriteJSON(env.Out, end.Plan.Report("dry-run", "", nil, end.Problems)); err != nil {
				return err
			}
		} else if end.Planned.Rewrites > 0 {
			fmt.Fprintln(env.Out, "dry-run: nothing was changed; run with --rules --apply --yes to rewrite")
		}
		return codeOf(end.Code())
	}
	res := end.Result
	if o.Format == "json" {
		if err := reports.WriteJSON(env.Out, end.Plan.Report("apply", res.RunID, end.Outcomes, end.Problems)); err != nil {
			return err
		}
	} else {
		textreport.RuleOutcomes(env.Out, end.Outcomes, res, o.StateDir)
	}
	if end.ApplyErr != nil {
		return end.ApplyErr
	}
	return codeOf(end.Code())
}

// codeOf is nil for exit status 0, else an error that exits with code and prints nothing more.
func codeOf(code int) error {
	if code == 0 {
		return nil
	}
	return withCode(code)
}

func newFixRulesOptions(c *cli.Context, a agent.Agent, base fixOptions) (fixRulesOptions, error) {
	wd, err := os.Getwd()
	if err != nil {
		return fixRulesOptions{}, fmt.Errorf("fix: current directory: %w", err)
	}
	o := fixRulesOptions{fixOptions: base, Options: agent.Values{}, Cwd: wd}
	readOptions(c, o.Options, all.RuleFixOf(a).Options)
	for _, name := range all.RuleFixOf(a).Uses {
		if vs := base.Common.AgentOptions[name]; len(vs) > 0 {
			o.Options[name] = vs
		}
	}
	return o, nil
}
