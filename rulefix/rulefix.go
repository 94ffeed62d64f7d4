// Package rulefix is fix --rules as a library (issue 11 item 5, issue 10 item 3): it takes an
// agent room's plan of its rule files (RuleFile: the audit plug-in's migration, a naming
// decision per legacy-spelled rule), makes it a rewrite plan, and applies it through
// rewrite.Apply. It names no agent: the room plans, the command layer hands the plan over. It
// sits above the rooms and rewrite; the CLI keeps the flags, the report, the confirmation prompt and the printing.
package rulefix

import (
	"context"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// RuleFile is one rule file's plan as a room gives it: the file as a store, the snapshot the
// decisions were made on, one naming decision per rule (at the rule's token) and how many of
// them are rewrites.
type RuleFile struct {
	Store     store.Store
	Snap      *store.Snapshot
	Decisions []naming.Decision
	Rewrites  int
}

// Planned is a fix --rules plan: Plan (one store per rule file with at least one rewrite),
// Roots (those files' paths, for the run's manifest) and Rewrites (the number of rules to be
// rewritten).
type Planned struct {
	Plan     *rewrite.Plan
	Roots    []string
	Rewrites int
}

// Plan makes the room's plan of the rule files a rewrite plan: one store per rule file with
// at least one rewrite, in the given order, its path in Roots.
func Plan(files []RuleFile) *Planned {
	p := &Planned{Plan: &rewrite.Plan{}}
	for _, f := range files {
		p.Rewrites += f.Rewrites
		if f.Rewrites > 0 {
			p.Plan.Stores = append(p.Plan.Stores, &rewrite.StorePlan{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions})
			p.Roots = append(p.Roots, f.Store.Ref().Path)
		}
	}
	return p
}

// Outcome is what applying did to one rule file: Status rewritten, in-use or failed, Rules the
// number of rules rewritten, Reason the error when there was one.
type Outcome struct {
	File   string
	Status string
	Rules  int
	Reason string
}

// Apply rewrites the planned rules (rewrite.Apply with p.Roots; opts.Roots is replaced) and
// returns one outcome per file in the run's order. A file that failed for another reason than
// being in use goes to problem. inUse says a file was refused because its store is in use
// (the CLI's exit 4). err is rewrite.Apply's error; res is nil only when nothing ran.
func Apply(ctx context.Context, p *Planned, opts rewrite.ApplyOptions, problem func(error)) (res *rewrite.Result, outcomes []Outcome, inUse bool, err error) {
	opts.Roots = p.Roots
	res, err = rewrite.Apply(ctx, p.Plan, opts)
	if err != nil && res == nil {
		return nil, nil, false, err
	}
	for _, oc := range res.Outcomes {
		row := Outcome{File: oc.Ref.Path, Status: "rewritten", Rules: oc.Edits}
		switch {
		case oc.InUse() && !oc.Committed():
			row.Status, row.Reason, inUse = "in-use", oc.Err.Error(), true
		case oc.Err != nil && !oc.Committed():
			row.Status, row.Reason = "failed", oc.Err.Error()
			problem(oc.Err)
		case oc.Err != nil:
			row.Reason = oc.Err.Error()
		}
		outcomes = append(outcomes, row)
	}
	return res, outcomes, inUse, err
}
