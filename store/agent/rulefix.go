package agent

import (
	"context"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// RuleFix is an agent's rule-file migration as fix --rules offers it (an agent's rules in an
// older release's spelling rewritten to the current one): what it is called, its flags and its
// --help section. cmd builds fix's --rules flags from it and refuses the flags that do not go
// with it; store/all lists at most one agent with a RuleFix.
type RuleFix struct {
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
	Files   []RuleFile
	// Report is the JSON document of the run (dry run: mode "dry-run", no run, no outcomes; an
	// apply: "apply", its run ID and what was done to each file), with the problems reported.
	Report func(mode, run string, outcomes []RuleOutcome, problems []string) any
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

// RuleOutcome is what an apply did to one rule file: its path, the status (rewritten, in-use,
// failed), the rules rewritten and the reason of a failure.
type RuleOutcome struct {
	File, Status string
	Rules        int
	Reason       string
}
