package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/rulefix"
)

// ruleFixers are the agents with a rule-file migration (agent.RuleFix), the default one first
// (the one fix --rules runs without --agent), then in the agent list's order.
func ruleFixers() []*agent.Agent {
	var out []*agent.Agent
	for _, a := range all.Agents {
		if a.RuleFix != nil {
			if a.RuleFix.Default {
				out = append([]*agent.Agent{a}, out...)
			} else {
				out = append(out, a)
			}
		}
	}
	return out
}

// ruleFix is the agent whose rule migration fix --rules runs without --agent (nil: none, and
// fix has no --rules).
func ruleFix() *agent.Agent {
	if rf := ruleFixers(); len(rf) > 0 {
		return rf[0]
	}
	return nil
}

// ruleFixFor is the agent whose rule migration fix --rules runs with --agent id ("" : the
// default), or a usage error naming the agents that have one.
func ruleFixFor(id string) (*agent.Agent, error) {
	if id == "" {
		return ruleFix(), nil
	}
	var names []string
	for _, a := range ruleFixers() {
		if string(a.ID) == id {
			return a, nil
		}
		names = append(names, a.RuleFix.Rules)
	}
	return nil, usageErrorf("--rules migrates %s; --agent %s has no rule migration (nothing was changed)", andList(names), id)
}

// sharedRuleFixOptions are the migrations' own flags, one per name, the default agent's first:
// an option two migrations declare (--before, --project) is one flag, its usage followed by the
// others' ("; also " …), as audit's options are.
func sharedRuleFixOptions() []agent.Option {
	var out []agent.Option
	at := map[string]int{}
	for _, a := range ruleFixers() {
		for _, o := range a.RuleFix.Options {
			if i, ok := at[o.Name]; ok {
				out[i].Usage += "; also " + o.Usage
				continue
			}
			at[o.Name] = len(out)
			out = append(out, o)
		}
	}
	return out
}

// fixRulesFlags are fix's flags for the rule migrations: --rules and the migrations' own
// (agent.RuleFix.Options).
func fixRulesFlags() []cli.Flag {
	rf := ruleFixers()
	if len(rf) == 0 {
		return nil
	}
	var what []string
	for _, a := range rf {
		what = append(what, a.RuleFix.Usage)
	}
	out := []cli.Flag{&cli.BoolFlag{Name: "rules", Usage: "rewrite permission rules written in an older release's spelling to the spelling that matches the same raw tools now: " +
		strings.Join(what, "; ") + "; without it rule files are never written"}}
	for _, o := range sharedRuleFixOptions() {
		out = append(out, optionFlag(o))
	}
	return out
}

// fixRulesWhat names the rule migrations that declare flag ("" : every one) in fix's usage
// errors.
func fixRulesWhat(flag string) string {
	var out []string
	for _, a := range ruleFixers() {
		if flag == "" || slices.ContainsFunc(a.RuleFix.Options, func(o agent.Option) bool { return o.Name == flag }) {
			out = append(out, a.RuleFix.What)
		}
	}
	return andList(out)
}

// fixRulesOnly are the flags that go with --rules only (the migrations' options), in the order
// fix checks them.
func fixRulesOnly() []string {
	var out []string
	for _, o := range sharedRuleFixOptions() {
		out = append(out, o.Name)
	}
	return out
}

// fixRulesDescription is fix's --help sections on the rule migrations ("" without one).
func fixRulesDescription() string {
	var b strings.Builder
	for _, a := range ruleFixers() {
		b.WriteString(a.RuleFix.Help)
	}
	return b.String()
}

// rulesNotTaken are fix's flags that do not go with --rules of agent a (it has no plan file, no
// --fail-on, no SQLite store, no --force, no --all-users, no report): --plan-out, --plan,
// --fail-on, --force, --all-users, --report, a's own scan/fix options it does not read (not
// in RuleFix.Uses: an MCP config flag), --profile, --busy-timeout, and the other migrations'
// options a does not declare, in that order.
func rulesNotTaken(a *agent.Agent) []string {
	out := []string{"plan-out", "plan", "fail-on", "force", "all-users", "report"}
	for _, o := range a.Options {
		if !slices.Contains(a.RuleFix.Uses, o.Name) {
			out = append(out, o.Name)
		}
	}
	out = append(out, "profile", "busy-timeout")
	for _, o := range sharedRuleFixOptions() {
		if !slices.ContainsFunc(a.RuleFix.Options, func(x agent.Option) bool { return x.Name == o.Name }) {
			out = append(out, o.Name)
		}
	}
	return out
}

// rulesRefused are the flags given that --rules does not take: fix's naming flags the
// migration does not read (--discover, --keep-truncated, --rewrite-lossy) and every other
// agent's own options, named in that order; set says whether any of them was given.
func rulesRefused(o fixOptions, a *agent.Agent) (names []string, set bool) {
	names = []string{"--discover", "--keep-truncated", "--rewrite-lossy"}
	set = o.Common.Discover || o.Common.KeepTruncated || o.Common.RewriteLossy
	seen := map[string]bool{}
	for _, opt := range a.Options {
		seen[opt.Name] = true
	}
	for _, other := range all.Agents {
		for _, opt := range other.Options {
			if other == a || seen[opt.Name] {
				continue // the migrating agent's own (also when another room shares it): refused by fix's list or read (RuleFix.Uses)
			}
			seen[opt.Name] = true
			names = append(names, "--"+opt.Name)
			set = set || len(o.Common.AgentOptions[opt.Name]) > 0
		}
	}
	return names, set
}

type fixRulesOptions struct {
	fixOptions
	// Options are the values of the migration's own flags and of the agent's options it
	// uses (agent.RuleFix.Options, Uses), by flag name.
	Options agent.Values
	Cwd     string
}

// rulesRun records and prints what the migration reports (problems make the run partial).
type rulesRun struct {
	env      *Env
	problems []string
	partial  bool
}

func (r *rulesRun) problem(err error) {
	r.problems = append(r.problems, err.Error())
	r.partial = true
	fmt.Fprintf(r.env.Err, "sessionfix: %s\n", reports.Printable(err.Error()))
}

func runFixRules(ctx context.Context, env *Env, rf *agent.Agent, o fixRulesOptions) error {
	refused, refusedSet := rulesRefused(o.fixOptions, rf)
	switch {
	case o.Format != "table" && o.Format != "json":
		return usageErrorf("--format must be table or json, not %q", o.Format)
	case o.Apply && o.DryRun:
		return usageErrorf("--apply and --dry-run contradict each other (nothing was changed)")
	case o.Apply && !o.Yes && !env.InTerminal:
		return usageErrorf("--apply needs --yes when standard input is not a terminal (nothing was changed)")
	case o.Common.Inventory == "":
		return usageErrorf("fix --rules needs --inventory FILE (the raw server keys and tool names the rules are about)")
	case refusedSet:
		return usageErrorf("--rules migrates %s only: %s do not go with it", rf.RuleFix.Rules, andList(refused))
	}
	r := &rulesRun{env: env}
	o.StateDir = stateDirOf(env, o.StateDir)
	plan, err := rf.RuleFix.Plan(ctx, agent.RuleFixInput{Env: agent.Env{Getenv: env.Getenv, Home: env.Home}, Inventory: o.Common.Inventory,
		Paths: o.Paths, Cwd: o.Cwd, Options: o.Options, Problem: r.problem,
		StoredNames: pipeline.StoredNames, Renames: func() (*agent.Renames, []error) { return pipeline.RecordedRenames(o.StateDir) },
		Note: func(s string) { fmt.Fprintf(env.Err, "sessionfix: note: %s\n", reports.Printable(s)) },
		Warn: func(w string) { fmt.Fprintf(env.Err, "sessionfix: warning: %s\n", reports.Printable(w)) }})
	if err != nil {
		return err
	}
	plans := make([]rulefix.RuleFile, 0, len(plan.Files)+len(plan.Edits))
	for _, f := range plan.Files {
		plans = append(plans, rulefix.RuleFile{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions, Rewrites: f.Rewrites})
	}
	for _, f := range plan.Edits {
		// A rule file the room gave as byte edits: the engine's rule-file store reads it again
		// and checks every edit's old bytes (a file changed since its rules were read is not
		// planned: a problem, the run ends partial).
		rfile, err := rulefix.FromEdits(ctx, rf.ID, rulefix.RuleFileEdits{Path: f.Path, Edits: f.Edits, Labels: f.Labels, Rules: f.Rules})
		if err != nil {
			r.problem(err)
			continue
		}
		plans = append(plans, rfile)
	}
	pl := rulefix.Plan(plans)
	rewrites := pl.Rewrites
	if o.Format == "table" {
		writeRulePlan(env, rf.RuleFix.Rules, plan.Changes, plan.Version)
	}
	if !o.Apply || rewrites == 0 {
		if o.Format == "json" {
			if err := reports.WriteJSON(env.Out, plan.Report("dry-run", "", nil, r.problems)); err != nil {
				return err
			}
		} else if rewrites > 0 {
			fmt.Fprintln(env.Out, "dry-run: nothing was changed; run with --rules --apply --yes to rewrite")
		}
		return rulesEnd(r)
	}
	if !o.Yes {
		flushOut(env)
		fmt.Fprintf(env.Err, "Rewrite %s in %s? Originals are backed up under %s. [y/N] ",
			plural(rewrites, "rule"), plural(len(pl.Plan.Stores), "file"), o.StateDir)
		ok, err := confirm(ctx, env.In)
		if err != nil {
			return err
		}
		if !ok {
			return declined(env)
		}
	}
	cleanLeftovers(env, o.StateDir)
	if err := rewrite.CheckStateDir(o.StateDir); err != nil {
		return err
	}
	res, outcomes, inUse, err := rulefix.Apply(ctx, pl, rewrite.ApplyOptions{StateDir: o.StateDir, Command: "fix --rules --apply", Now: env.Now}, r.problem)
	if res == nil {
		return err
	}
	rows := make([]agent.RuleOutcome, len(outcomes))
	for i, oc := range outcomes {
		rows[i] = agent.RuleOutcome{File: oc.File, Status: oc.Status, Rules: oc.Rules, Reason: oc.Reason}
	}
	if o.Format == "json" {
		if err := reports.WriteJSON(env.Out, plan.Report("apply", res.RunID, rows, r.problems)); err != nil {
			return err
		}
	} else {
		n, files := 0, 0
		for _, row := range rows {
			if row.Status == "rewritten" {
				n += row.Rules
				files++
			} else {
				fmt.Fprintf(env.Out, "%s: %s: %s\n", reports.Printable(row.File), row.Status, reports.Printable(row.Reason))
			}
		}
		fmt.Fprintf(env.Out, "rewrote %s in %s\n", plural(n, "rule"), plural(files, "file"))
		if res.RunID != "" {
			fmt.Fprintf(env.Out, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
				res.RunID, res.Dir, reports.ShellQuote(o.StateDir), res.RunID)
		}
	}
	if err != nil {
		return err
	}
	if inUse && !r.partial {
		return withCode(exitcode.InUse)
	}
	return rulesEnd(r)
}

func rulesEnd(r *rulesRun) error {
	if r.partial {
		return withCode(exitcode.Partial)
	}
	return nil
}

// writeRulePlan prints each legacy-spelled rule (what names what is migrated, "Acme rules"):
// where, old → new, what it matched before, what it matches after, and the flags.
func writeRulePlan(env *Env, what string, rows []agent.RuleChange, now string) {
	if len(rows) == 0 {
		fmt.Fprintf(env.Out, "no legacy-spelled rule: every rule that names an inventory tool already uses %s's spelling\n", now)
		return
	}
	fmt.Fprintf(env.Out, "%s in a legacy spelling (migrated to %s):\n", what, now)
	for _, r := range rows {
		arrow := r.New
		if !r.Rewrite {
			arrow = "(kept)"
		}
		fmt.Fprintf(env.Out, "%s:%d:%d %s %s[%d]: %s %q → %s\n", reports.Printable(r.File), r.Line, r.Column, r.Scope, r.Key, r.Index,
			r.Action, reports.Printable(r.Old), reports.Printable(arrow))
		fmt.Fprintf(env.Out, "    matched before (%s spelling): %s\n", r.WrittenFor, reports.Printable(noneIfEmpty(strings.Join(r.Before, ", "))))
		if r.New != "" {
			fmt.Fprintf(env.Out, "    %s matches under %s: %s\n", reports.Printable(r.New), now, reports.Printable(noneIfEmpty(strings.Join(r.After, ", "))))
		}
		if len(r.Extra) > 0 {
			fmt.Fprintf(env.Out, "    SHARED NAME: also %s\n", reports.Printable(strings.Join(r.Extra, ", ")))
		}
		if r.Note != "" {
			fmt.Fprintf(env.Out, "    note: %s\n", reports.Printable(r.Note))
		}
		for _, ov := range r.Overrides {
			fmt.Fprintf(env.Out, "    CONFLICT: %s\n", reports.Printable(ov))
		}
	}
}

// noneIfEmpty is s, or "(none)" when s is empty.
func noneIfEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func newFixRulesOptions(c *cli.Context, a *agent.Agent, base fixOptions) (fixRulesOptions, error) {
	wd, err := os.Getwd()
	if err != nil {
		return fixRulesOptions{}, fmt.Errorf("fix: current directory: %w", err)
	}
	o := fixRulesOptions{fixOptions: base, Options: agent.Values{}, Cwd: wd}
	readOptions(c, o.Options, a.RuleFix.Options)
	for _, name := range a.RuleFix.Uses {
		if vs := base.Common.AgentOptions[name]; len(vs) > 0 {
			o.Options[name] = vs
		}
	}
	return o, nil
}
