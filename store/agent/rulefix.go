package agent

// RuleFix is an agent's rule-file migration as fix --rules offers it (Claude Code's: rules in an
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
}
