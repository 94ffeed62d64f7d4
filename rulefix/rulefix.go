// Package rulefix is fix --rules as a library (issue 11 item 5, issue 10 item 3): it scans
// Claude Code rule files, turns the room's planned rule migrations (claude.PlanRuleFile, the
// Claude Code audit plug-in) into rewrite decisions, and applies them through rewrite.Apply. It
// sits above the room and rewrite (a room may not import rewrite, pipeline may not import
// audit); the CLI keeps the flags, the confirmation prompt and the printing.
package rulefix

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sessionfix/sessionfix/inventory"
	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/permission"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
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

// Plan scans every source's rule file and plans the migration of its legacy-spelled rules to
// now's spelling for the inventory tools. Paths are made absolute and resolved through
// symbolic links (runs record absolute, clean paths; a linked rule file is rewritten at its
// target, the link kept). A missing file that was not given explicitly is skipped; any other
// file that cannot be read, and every problem of a read file (file:line:column: reason), goes
// to problem and the run continues.
func Plan(ctx context.Context, srcs []claude.ClaudeSource, tools []mcpname.ClaudeTool, now permission.ClaudeRelease, allowShared bool, problem func(error)) *Planned {
	p := &Planned{
		Report: &claude.FixRulesReport{ClaudeVersion: now.String(), Mode: "dry-run", Files: []string{}, Rules: []claude.RuleRow{}, Errors: []string{}},
		Plan:   &rewrite.Plan{},
	}
	var migrated []claude.ClaudeMigratedRule // parallel to Report.Rules
	for _, s := range srcs {
		if abs, err := filepath.Abs(s.Path); err == nil {
			s.Path = abs
		}
		if real, err := filepath.EvalSymlinks(s.Path); err == nil {
			s.Path = real
		}
		st := claude.OpenRules(s.Path, s.Scope)
		snap, err := st.Scan(ctx, store.ScanOptions{Hash: true})
		switch {
		case errors.Is(err, fs.ErrNotExist) && !s.Explicit:
			continue
		case err != nil:
			problem(err)
			continue
		}
		for _, pr := range snap.Problems {
			if strings.HasPrefix(pr.Reason, s.Path) { // already names file:line:column
				problem(errors.New(pr.Reason))
			} else {
				problem(fmt.Errorf("%s: %s", s.Path, pr.Reason))
			}
		}
		rs := claude.RuleSnapshotOf(snap)
		p.Report.Files = append(p.Report.Files, s.Path)
		sp := &rewrite.StorePlan{Store: st, Snap: snap}
		for _, rp := range claude.PlanRuleFile(rs.Rules, s.Scope, tools, now, allowShared) {
			d := rewrite.Decision{Site: &snap.Sites[rp.Rule], Class: claude.ClassClaudeLegacyRule, Source: "written for " + rp.Row.WrittenFor,
				Note: rp.Migrated.Note, Action: rewrite.ActKeep}
			if rp.Rewrite() {
				d.Action, d.New = rewrite.ActRewrite, rp.Row.New
				p.Rewrites++
			}
			sp.Decisions = append(sp.Decisions, d)
			p.Report.Rules = append(p.Report.Rules, rp.Row)
			migrated = append(migrated, rp.Migrated)
		}
		if sp.Count(rewrite.ActRewrite) > 0 {
			p.Plan.Stores = append(p.Plan.Stores, sp)
			p.Roots = append(p.Roots, s.Path)
		}
	}
	claude.NoteOverrides(p.Report.Rules, migrated, now)
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

// InventoryTools loads the inventory file at path (inventory.Load) and lists its raw tools,
// server by server in key order, as the rule migration takes them.
func InventoryTools(path string) ([]mcpname.ClaudeTool, error) {
	inv, err := inventory.Load(path)
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
