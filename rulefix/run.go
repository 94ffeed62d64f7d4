package rulefix

import (
	"context"
	"slices"
	"time"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/runlog"
)

// Fixers are the agents with a rule-file migration (agent.RuleFix), the default one first (the
// one fix --rules runs without --agent), then in the agent list's order.
func Fixers() []agent.Agent {
	var out []agent.Agent
	for _, a := range all.Agents {
		if all.RuleFixOf(a) != nil {
			if all.RuleFixOf(a).Default {
				out = append([]agent.Agent{a}, out...)
			} else {
				out = append(out, a)
			}
		}
	}
	return out
}

// Default is the agent whose rule migration fix --rules runs without --agent (nil: none, and
// fix has no --rules).
func Default() agent.Agent {
	if rf := Fixers(); len(rf) > 0 {
		return rf[0]
	}
	return nil
}

// For is the agent whose rule migration fix --rules runs with --agent id ("": Default), or nil
// and the migrated rules of every agent that has one (Fixers' RuleFix.Rules, in order) for the
// usage error that names them.
func For(id string) (agent.Agent, []string) {
	if id == "" {
		return Default(), nil
	}
	var names []string
	for _, a := range Fixers() {
		if string(a.Core().ID) == id {
			return a, nil
		}
		names = append(names, all.RuleFixOf(a).Rules)
	}
	return nil, names
}

// SharedOptions are the migrations' own flags, one per name, the default agent's first: an
// option two migrations declare (--before, --project) is one flag, its usage followed by the
// others' ("; also " …), as audit's options are.
func SharedOptions() []agent.Option {
	var out []agent.Option
	at := map[string]int{}
	for _, a := range Fixers() {
		for _, o := range all.RuleFixOf(a).Options {
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

// Declaring are the migrations that declare the option flag ("": every one), by their
// RuleFix.What, for fix's usage errors.
func Declaring(flag string) []string {
	var out []string
	for _, a := range Fixers() {
		if flag == "" || slices.ContainsFunc(all.RuleFixOf(a).Options, func(o agent.Option) bool { return o.Name == flag }) {
			out = append(out, all.RuleFixOf(a).What)
		}
	}
	return out
}

// OnlyFlags are the flags that go with --rules only (the migrations' options), in the order
// fix checks them.
func OnlyFlags() []string {
	var out []string
	for _, o := range SharedOptions() {
		out = append(out, o.Name)
	}
	return out
}

// NotTaken are fix's flags that do not go with --rules of agent a (it has no plan file, no
// --fail-on, no SQLite store, no --force, no --all-users, no report): --plan-out, --plan,
// --fail-on, --force, --all-users, --report, a's own scan/fix options it does not read (not
// in RuleFix.Uses: an MCP config flag), --profile, --busy-timeout, and the other migrations'
// options a does not declare, in that order (flag names without dashes).
func NotTaken(a agent.Agent) []string {
	out := []string{"plan-out", "plan", "fail-on", "force", "all-users", "report"}
	for _, o := range all.OptionsOf(a) {
		if !slices.Contains(all.RuleFixOf(a).Uses, o.Name) {
			out = append(out, o.Name)
		}
	}
	out = append(out, "profile", "busy-timeout")
	for _, o := range SharedOptions() {
		if !slices.ContainsFunc(all.RuleFixOf(a).Options, func(x agent.Option) bool { return x.Name == o.Name }) {
			out = append(out, o.Name)
		}
	}
	return out
}

// Refused are the flags --rules of agent a does not take among fix's naming and agent options:
// the naming flags the migration does not read (--discover, --keep-truncated, --rewrite-lossy)
// and every other agent's own options, named in that order ("--name"); set says whether any of
// them was given (naming: whether one of the three naming flags was; given: the agents' option
// values by flag name).
func Refused(a agent.Agent, naming bool, given agent.Values) (names []string, set bool) {
	names = []string{"--discover", "--keep-truncated", "--rewrite-lossy"}
	set = naming
	seen := map[string]bool{}
	for _, opt := range all.OptionsOf(a) {
		seen[opt.Name] = true
	}
	for _, other := range all.Agents {
		for _, opt := range all.OptionsOf(other) {
			if other == a || seen[opt.Name] {
				continue // the migrating agent's own (also when another room shares it): refused by fix's list or read (RuleFix.Uses)
			}
			seen[opt.Name] = true
			names = append(names, "--"+opt.Name)
			set = set || len(given[opt.Name]) > 0
		}
	}
	return names, set
}

// Request is one fix --rules run of an agent's migration: where the rules and the inventory
// are (Input: everything but Problem, which Run sets), whether to apply (Apply; Yes: without
// the [y/N] question) and where the run is recorded (StateDir, Now).
type Request struct {
	Input    agent.RuleFixInput
	Apply    bool
	Yes      bool
	StateDir string
	Now      func() time.Time
}

// Hooks are what Run asks its caller, in this order: Problem (an input that could not be used,
// reported as it is found: the run goes on and ends partial), Planned (the plan, before any
// question), Confirm (the [y/N] question, only with Apply and without Yes; false: nothing is
// written) and BeforeApply (just before the state directory is checked and written: the caller
// removes what a killed run left).
type Hooks struct {
	Problem     func(error)
	Planned     func(plan *agent.RuleFixPlan, p *Planned)
	Confirm     func(p *Planned) (bool, error)
	BeforeApply func()
}

// End is what a run did: Plan (the migration's plan) and Planned (as a rewrite plan); with
// Apply and a rule to rewrite, Applied, the run (Result; Outcomes per file, InUse: a file was
// refused in use) and ApplyErr (rewrite.Apply's error, the results written notwithstanding);
// Declined when the question was answered no; Problems as reported.
type End struct {
	Plan     *agent.RuleFixPlan
	Planned  *Planned
	Applied  bool
	Declined bool
	Result   *rewrite.Result
	Outcomes []agent.RuleOutcome
	InUse    bool
	ApplyErr error
	Problems []string
}

// Code is the run's exit status: exitcode.InUse when a file was in use and nothing else went
// wrong, exitcode.Partial after a problem, else 0 (a declined run: exitcode.Declined).
func (e *End) Code() int {
	switch {
	case e.Declined:
		return exitcode.Declined
	case e.InUse && len(e.Problems) == 0:
		return exitcode.InUse
	case len(e.Problems) > 0:
		return exitcode.Partial
	}
	return 0
}

// Run is fix --rules as a library: the room's migration plans its rule files (a.RuleFix.Plan),
// the files it gave as byte edits are read again by the engine's rule-file store (FromEdits: a
// file changed since is a problem, not planned), Plan makes them one rewrite plan, and with
// Apply (and a rule to rewrite) the answer of Confirm, the state directory checked
// (runlog.CheckStateDir) and Apply write them. err is an error that ended the run before
// anything was written (a usage error of the room's options, an unreadable inventory, a bad
// state directory), or Apply's when nothing ran; else End says what happened.
func Run(ctx context.Context, a agent.Agent, req Request, h Hooks) (*End, error) {
	end := &End{}
	problem := func(err error) {
		end.Problems = append(end.Problems, err.Error())
		h.Problem(err)
	}
	in := req.Input
	in.Problem = problem
	plan, err := all.RuleFixOf(a).Plan(ctx, in)
	if err != nil {
		return nil, err
	}
	end.Plan = plan
	plans := make([]RuleFile, 0, len(plan.Files)+len(plan.Edits))
	for _, f := range plan.Files {
		plans = append(plans, RuleFile{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions, Rewrites: f.Rewrites})
	}
	for _, f := range plan.Edits {
		// A rule file the room gave as byte edits: the engine's rule-file store reads it again
		// and checks every edit's old bytes (a file changed since its rules were read is not
		// planned: a problem, the run ends partial).
		rfile, err := FromEdits(ctx, a.Core().ID, RuleFileEdits{Path: f.Path, Edits: f.Edits, Labels: f.Labels, Rules: f.Rules})
		if err != nil {
			problem(err)
			continue
		}
		plans = append(plans, rfile)
	}
	end.Planned = Plan(plans)
	h.Planned(plan, end.Planned)
	if !req.Apply || end.Planned.Rewrites == 0 {
		return end, nil
	}
	if !req.Yes {
		ok, err := h.Confirm(end.Planned)
		if err != nil {
			return nil, err
		}
		if !ok {
			end.Declined = true
			return end, nil
		}
	}
	h.BeforeApply()
	if err := runlog.CheckStateDir(req.StateDir); err != nil {
		return nil, err
	}
	res, outcomes, inUse, err := Apply(ctx, end.Planned, rewrite.ApplyOptions{StateDir: req.StateDir, Command: "fix --rules --apply", Now: req.Now}, problem)
	if res == nil {
		return nil, err
	}
	end.Applied, end.Result, end.InUse, end.ApplyErr = true, res, inUse, err
	end.Outcomes = make([]agent.RuleOutcome, len(outcomes))
	for i, oc := range outcomes {
		end.Outcomes[i] = agent.RuleOutcome{File: oc.File, Status: oc.Status, Rules: oc.Rules, Reason: oc.Reason}
	}
	return end, nil
}
