// Package rulefix is fix --rules as a library (issue 11 item 5, issue 10 item 3): it takes the
// Claude Code room's plan of its rule files (claude.PlanRuleFiles, the audit plug-in's
// migration: a naming decision per legacy-spelled rule), makes it a rewrite plan, and applies
// it through rewrite.Apply. It
// sits above the room and rewrite (a room may not import rewrite, pipeline may not import
// audit); the CLI keeps the flags, the confirmation prompt and the printing.
package rulefix

import (
	"context"

	"github.com/sessionfix/sessionfix/mcpinventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store/claude"
)

// Planned is a fix --rules plan: Report (mode "dry-run", Files and Rules filled, CONFLICT
// notes set by claude.NoteOverrides), Plan (one store per rule file with at least one rewrite),
// Roots (those files' paths, for the run's manifest) and Rewrites (the number of rules to be
// rewritten).
type Planned struct {
	Report   *claude.FixRulesReport
	Plan     *rewrite.Plan
	Roots    []string
	Rewrites int
}

// Plan is the room's plan of the rule files (claude.PlanRuleFiles: absolute, link-resolved
// paths; a missing file not given explicitly skipped; problems to problem) as a rewrite plan:
// one store per rule file with at least one rewrite, its path in Roots.
func Plan(ctx context.Context, srcs []claude.ClaudeSource, tools []mcpname.ClaudeTool, now permission.ClaudeRelease, allowShared bool, problem func(error)) *Planned {
	rep, files := claude.PlanRuleFiles(ctx, srcs, tools, now, allowShared, problem)
	p := &Planned{Report: rep, Plan: &rewrite.Plan{}}
	for _, f := range files {
		p.Rewrites += f.Rewrites
		if f.Rewrites > 0 {
			p.Plan.Stores = append(p.Plan.Stores, &rewrite.StorePlan{Store: f.Store, Snap: f.Snap, Decisions: f.Decisions})
			p.Roots = append(p.Roots, f.Store.Ref().Path)
		}
	}
	return p
}

// Apply rewrites the planned rules (rewrite.Apply with p.Roots; opts.Roots is replaced) and
// records the run in p.Report: Mode "apply", Run, and one outcome row per file (status
// rewritten, in-use or failed, with the reason). A file that failed for another reason than
// being in use goes to problem. inUse says a file was refused because its store is in use
// (the CLI's exit 4). err is rewrite.Apply's error; res is nil only when nothing ran.
func Apply(ctx context.Context, p *Planned, opts rewrite.ApplyOptions, problem func(error)) (res *rewrite.Result, inUse bool, err error) {
	opts.Roots = p.Roots
	res, err = rewrite.Apply(ctx, p.Plan, opts)
	if err != nil && res == nil {
		return nil, false, err
	}
	p.Report.Mode, p.Report.Run = "apply", res.RunID
	for _, oc := range res.Outcomes {
		row := claude.RuleOutRow{File: oc.Ref.Path, Status: "rewritten", Rules: oc.Edits}
		switch {
		case oc.InUse() && !oc.Committed():
			row.Status, row.Reason, inUse = "in-use", oc.Err.Error(), true
		case oc.Err != nil && !oc.Committed():
			row.Status, row.Reason = "failed", oc.Err.Error()
			problem(oc.Err)
		case oc.Err != nil:
			row.Reason = oc.Err.Error()
		}
		p.Report.Outcomes = append(p.Report.Outcomes, row)
	}
	return res, inUse, err
}

// InventoryTools loads the inventory file at path (mcpinventory.Load) and lists its raw tools,
// server by server in key order, as the rule migration takes them.
func InventoryTools(path string) ([]mcpname.ClaudeTool, error) {
	inv, err := mcpinventory.Load(path)
	if err != nil {
		return nil, err
	}
	var tools []mcpname.ClaudeTool
	for _, k := range inv.Keys() {
		for _, t := range inv.Servers[k].Tools {
			tools = append(tools, mcpname.ClaudeTool{Server: k, Tool: t.Name})
		}
	}
	return tools, nil
}
