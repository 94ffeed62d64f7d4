// Package rulefix is fix --rules as a library (issue 11 item 5, issue 10 item 3): it takes an
// agent room's plan of its rule files (RuleFile: the audit plug-in's migration, a naming
// decision per legacy-spelled rule), makes it a rewrite plan, and applies it through
// rewrite.Apply. It names no agent: the room plans, the command layer hands the plan over. It
// sits above the rooms and rewrite; the CLI keeps the flags, the report, the confirmation prompt and the printing.
package rulefix

import (
	"context"
	"fmt"

	"github.com/sessionfix/sessionfix/agent/all"
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
	// rules is each planned file's number of rules rewritten, by path (a rule may take
	// several edits: a policy rule's mcpName line and its toolName).
	rules map[string]int
}

// Plan makes the room's plan of the rule files a rewrite plan: one store per rule file with
// at least one rewrite, in the given order, its path in Roots.
func Plan(files []RuleFile) *Planned {
	p := &Planned{Plan: &rewrite.Plan{}, rules: map[string]int{}}
	for _, f := range files {
		p.Rewrites += f.Rewrites
		if f.Rewrites > 0 {
			p.rules[f.Store.Ref().Path] += f.Rewrites
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
		if n, ok := p.rules[oc.Ref.Path]; ok {
			row.Rules = n
		}
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

// FromEdits makes a rule file given as byte-range edits (an agent's permission package computed
// them from the bytes it read) a RuleFile of the engine's rule-file store (all.OpenRuleFile): the
// file is read again (opened as every store is) and each edit's old bytes must be at its
// offset, else an error says the file changed since its rules were read (nothing is planned for
// it). agent is the snapshot's agent (the run records it).
func FromEdits(ctx context.Context, agent store.AgentID, f RuleFileEdits) (RuleFile, error) {
	st := all.OpenRuleFile(f.Path)
	ed, ok := st.(store.FileEditor)
	if !ok {
		return RuleFile{}, fmt.Errorf("%s: the rule-file store takes no byte edits", f.Path)
	}
	snap, err := st.Scan(ctx, store.ScanOptions{Hash: true})
	if err != nil {
		return RuleFile{}, err
	}
	snap.Agent = agent
	sites, err := ed.EditSites(snap, f.Edits, func(i int) string {
		if i < len(f.Labels) {
			return f.Labels[i]
		}
		return fmt.Sprintf("edit %d", i+1)
	})
	if err != nil {
		return RuleFile{}, err
	}
	snap.Sites = sites
	rf := RuleFile{Store: st, Snap: snap, Rewrites: f.Rules}
	news := map[int64][]string{} // the new bytes of the edits at an offset, in order
	for _, e := range f.Edits {
		news[e.At] = append(news[e.At], e.New)
	}
	for i := range snap.Sites {
		s := &snap.Sites[i]
		n := news[s.Loc.Offset]
		rf.Decisions = append(rf.Decisions, naming.Decision{Site: s, Action: naming.ActRewrite, New: n[0], Source: "fix --rules"})
		news[s.Loc.Offset] = n[1:]
	}
	return rf, nil
}

// RuleFileEdits is one rule file as a path and its byte-range edits (offsets into the file as
// read), labels naming each edit's rule, and the number of rules they rewrite.
type RuleFileEdits struct {
	Path   string
	Edits  []store.FileEdit
	Labels []string
	Rules  int
}
