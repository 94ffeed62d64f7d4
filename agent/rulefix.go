package agent

import (
	"context"
	"encoding/json"
	"github.com/sessionfix/sessionfix/reports"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// RuleFix is an agent's rule-file migration as fix --rules offers it (an agent's rules in an
// older release's spelling rewritten to the current one): what it is called, its flags and its
// --help section. cmd builds fix's --rules flags from it and refuses the flags that do not go
// with it. Several agents may have one: fix --rules --agent ID picks it, and without --agent the
// one marked Default runs.
type RuleFix struct {
	// Default marks the migration fix --rules runs without --agent (one agent's).
	Default bool
	// What names the migration in fix's usage errors ("the Acme rule migration").
	What string
	// Rules names what it migrates, after "--rules migrates " ("Acme rules").
	Rules string
	// Usage is --rules' usage text.
	Usage string
	// Options are its own flags after --rules, in --help order (and the order fix refuses them
	// without --rules); they are string flags (Name, Usage; File: the value names a file to
	// complete).
	Options []Option
	// Uses are the agent's own scan/fix options (Agent.Options, by Name) the migration reads
	// too ("allow-shared"); every other agent's option is refused with --rules.
	Uses []string
	// Help is fix's --help section on the migration (starting with its blank lines, no final
	// newline).
	Help string
	// Plan reads the rule files (it looks at the file system) and plans the migration; a
	// usage error (internal/usage) for a bad option value, another error when nothing can be
	// planned (the inventory does not read).
	Plan func(ctx context.Context, in RuleFixInput) (*RuleFixPlan, error)
}

// RuleFixInput is what fix --rules gives the migration's Plan.
type RuleFixInput struct {
	// Env is where the agent's home and config files are ($VARS, the user's home).
	Env Env
	// Inventory is --inventory (the raw tools the rules are about; never "").
	Inventory string
	// Paths are fix's PATH arguments (copies of the agent's rule directories); Cwd the
	// current directory (the default project).
	Paths []string
	Cwd   string
	// Options are the values of the migration's Options and Uses given, by flag name.
	Options Values
	// StoredNames and Renames are the audit engine's (AuditEngine): the tool names stored in
	// the session stores under roots, and the renames the fix runs of the state directory
	// recorded, for a migration that infers the release the rules were written for from the
	// sessions (nil: not read).
	StoredNames func(ctx context.Context, roots []string) ([]string, []error)
	Renames     func() (*Renames, []error)
	// Problem reports an input that could not be used (the run goes on and ends partial);
	// Note and Warn report a note and a warning. The caller prints and records them.
	Problem func(error)
	Note    func(string)
	Warn    func(string)
}

// RuleFixPlan is a planned migration: the release the rules are migrated to (as printed),
// one Change per rule found in a legacy spelling, the rule files with their planned edits, and
// the migration's JSON report.
type RuleFixPlan struct {
	Version string
	Changes []RuleChange
	// Files are rule files the room made stores of itself (an older migration's); Edits
	// are rule files given as byte-range edits its permission package computed, which the
	// engine's rule-file store writes (engine/rulefile: no agent knowledge in storage). A plan
	// has either or both.
	Files []RuleFile
	Edits []RuleFileEdits
	// Report is the JSON document of the run (dry run: mode "dry-run", no run, no outcomes; an
	// apply: "apply", its run ID and what was done to each file), with the problems reported.
	Report func(mode, run string, outcomes []RuleOutcome, problems []string) json.Marshaler
}

// RuleChange is one legacy-spelled rule and what the migration does with it: where (file,
// 1-based line and column, scope, the member holding it and its index), Old and New (New "" when
// there is none), Rewrite (false: kept, Action says why), the spelling it was written for, the
// tools it matched before and the tools New matches now, Extra (other tools New also names, a
// shared name), a note, and the migrated rules it overrides or is overridden by.
type RuleChange struct {
	File                 string
	Line, Column         int
	Scope, Key           string
	Index                int
	Action               string
	Rewrite              bool
	Old, New, WrittenFor string
	Before, After, Extra []string
	Note                 string
	Overrides            []string
}

// RuleFile is one rule file with its planned edits (Rewrites: the rules rewritten, 0 when none).
type RuleFile struct {
	Store     store.Store
	Snap      *store.Snapshot
	Decisions []naming.Decision
	Rewrites  int
}

// RuleFileEdits is one rule file as a file plus its planned byte-range edits (offsets into the
// file as the room read it), and how many rules they rewrite.
type RuleFileEdits struct {
	Path  string
	Edits []store.FileEdit
	// Labels name each edit's rule in the run's record ("tools.exclude[1]", "rule 2 toolName");
	// parallel to Edits.
	Labels []string
	Rules  int
}

// RuleOutcome is what an apply did to one rule file: its path, the status (rewritten, in-use,
// failed), the rules rewritten and the reason of a failure.
type RuleOutcome struct {
	File, Status string
	Rules        int
	Reason       string
}

// RuleFixDoc is fix --rules --format json of an agent whose rooms have no document of their
// own: the agent, the release migrated to (version) and from
// (before), the rule files read, one row per rule the migration concerns, and for an apply
// its run and what was done to each file.
type RuleFixDoc struct {
	Agent    string           `json:"agent"`
	Version  string           `json:"version"`
	Before   string           `json:"before,omitempty"`
	Files    []string         `json:"files"`
	Rules    []RuleChangeRow  `json:"rules"`
	Mode     string           `json:"mode"` // dry-run or apply
	Run      string           `json:"run,omitempty"`
	Outcomes []RuleOutcomeRow `json:"outcomes,omitempty"`
	Errors   []string         `json:"errors"`
}

// RuleChangeRow is a RuleChange in RuleFixDoc.
type RuleChangeRow struct {
	File       string   `json:"file"`
	Line       int      `json:"line"`
	Column     int      `json:"column"`
	Scope      string   `json:"scope"`
	Key        string   `json:"key"`
	Index      int      `json:"index"`
	Action     string   `json:"action"`
	Old        string   `json:"old"`
	New        string   `json:"new,omitempty"`
	WrittenFor string   `json:"written_for"`
	Before     []string `json:"matched_before"`
	After      []string `json:"matches_after"`
	Note       string   `json:"note,omitempty"`
}

// RuleOutcomeRow is a RuleOutcome in RuleFixDoc.
type RuleOutcomeRow struct {
	File   string `json:"file"`
	Status string `json:"status"`
	Rules  int    `json:"rules"`
	Reason string `json:"reason,omitempty"`
}

// SetRuleFixReport sets p.Report to build a RuleFixDoc of p's changes (agent, the release the
// rules were written for, the files read).
func SetRuleFixReport(p *RuleFixPlan, agent, before string, files []string) {
	p.Report = func(mode, run string, outcomes []RuleOutcome, problems []string) json.Marshaler {
		doc := RuleFixDoc{Agent: agent, Version: p.Version, Before: before, Files: append([]string{}, files...), Rules: []RuleChangeRow{},
			Mode: mode, Run: run, Errors: append([]string{}, problems...)}
		for _, c := range p.Changes {
			doc.Rules = append(doc.Rules, RuleChangeRow{File: c.File, Line: c.Line, Column: c.Column, Scope: c.Scope, Key: c.Key, Index: c.Index,
				Action: c.Action, Old: c.Old, New: c.New, WrittenFor: c.WrittenFor, Before: nonNil(c.Before), After: nonNil(c.After), Note: c.Note})
		}
		for _, o := range outcomes {
			doc.Outcomes = append(doc.Outcomes, RuleOutcomeRow(o))
		}
		return reports.Document(doc)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
