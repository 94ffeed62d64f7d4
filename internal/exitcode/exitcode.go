// Package exitcode is the one table of sessionfix's exit statuses: each code, what it means as
// every command's help says it (EXIT STATUS), and which command can return it. The CLI maps
// errors to these codes, the libraries (pipeline) return them for a run's outcome, each
// command's --help lists its own (Help), and docs/exit-codes.md's table is generated from the
// same table (Table; cmd/sessionfix's TestExitCodeDocs checks it). A leaf below every package
// that returns an exit status (internal/layering TestExitCodesInOnePlace).
package exitcode

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The exit statuses. A scheduled job can tell them apart: 0 clean, 5 a policy finding, 3 input
// it could not read.
const (
	OK    = 0
	Error = 1
	Usage = 2
	// Partial: some stores or inputs could not be read or written (each is listed), or
	// --apply failed to rewrite one.
	Partial = 3
	// InUse: a store is in use by another process (changed while read, locked, or appended to
	// while rewritten); nothing was changed in it, or what it appended meanwhile was carried
	// over (fix says which).
	InUse = 4
	// Finding: a --fail-on condition was met (audit: a lost, refused or gained pair; fix/scan
	// --fail-on kept: names a provider rejects were kept; check: a rejected name). The run
	// itself succeeded.
	Finding = 5
	// Declined: the user answered no at the [y/N] prompt; nothing was changed. Not 1 (Error):
	// a script or wrapper must be able to tell "the user said no" from a failure.
	Declined = 6
	// Interrupted and Terminated follow the shell convention 128+signal number: SIGINT
	// (Ctrl-C) is 2, SIGTERM 15. Whatever was applied before is recorded for undo.
	Interrupted = 130
	Terminated  = 143
	// BrokenPipe: standard output was closed (| head went away): 128 + SIGPIPE (13), the run
	// ends as grep's does.
	BrokenPipe = 141
)

// Meaning is the EXIT STATUS line of each code; Finding's holds one %s: what the command's
// --fail-on matches. Interrupted's line also names Terminated and BrokenPipe.
var Meaning = map[int]string{
	OK:          "success (also when there is nothing to change or undo)",
	Error:       "error: nothing could be done (a bad config, inventory or state directory, an unknown run), or the results could not be written to standard output",
	Usage:       "usage error (a bad flag, value or argument); nothing was done",
	Partial:     "partial: some stores or inputs could not be read or rewritten (each is listed); wins over 5",
	InUse:       "refused: a store is in use by another process (changed while being read, or locked)",
	Finding:     "finding: a --fail-on condition matched (%s)",
	Declined:    "declined: the answer at the [y/N] prompt was no; nothing was changed",
	Interrupted: "interrupted (Ctrl-C, SIGINT); 143 terminated (SIGTERM); 141 standard output closed (| head went away); what was rewritten is recorded for undo",
}

// Command is what one command can return: Codes (its help shows exactly these, in this order)
// and, when it has a --fail-on, what a Finding of it is.
type Command struct {
	Finding string
	Codes   []int
}

// Commands lists, per command name, the exit codes it can return. Every command can be
// interrupted: the CLI maps a cancelled context to 130/143 whatever it returned.
var Commands = map[string]Command{
	"scan":  {"--fail-on kept: a name a provider rejects was kept", []int{OK, Error, Usage, Partial, InUse, Finding, Interrupted}},
	"fix":   {"--fail-on kept: a name a provider rejects was kept", []int{OK, Error, Usage, Partial, InUse, Finding, Declined, Interrupted}},
	"undo":  {"", []int{OK, Error, Usage, Partial, InUse, Declined, Interrupted}},
	"runs":  {"", []int{OK, Error, Usage, Interrupted}},
	"names": {"", []int{OK, Error, Usage, Partial, Interrupted}},
	"audit": {"--fail-on lost,refused,gained: such a pair was found", []int{OK, Error, Usage, Partial, Finding, Interrupted}},
	"check": {"a name some --provider rejects was found (in history or the inventory)", []int{OK, Error, Usage, Partial, InUse, Finding, Interrupted}},
}

// App is what the application's own help lists (every code a command returns).
var App = Command{"audit --fail-on: a lost, refused or gained pair; scan, fix --fail-on kept: a rejected name was kept",
	[]int{OK, Error, Usage, Partial, InUse, Finding, Declined, Interrupted}}

// Help is the EXIT STATUS block of a command's help: the codes c can return, one line each
// ("   %-3d  meaning"), Finding's with c.Finding.
func Help(c Command) string {
	var b strings.Builder
	b.WriteString("EXIT STATUS:")
	for _, code := range c.Codes {
		m := Meaning[code]
		if code == Finding {
			m = fmt.Sprintf(m, c.Finding)
		}
		fmt.Fprintf(&b, "\n   %-3d  %s", code, m)
	}
	return b.String()
}

// Table is docs/exit-codes.md's Markdown table of every code: its meaning as the help says it
// (Finding's with what each command's --fail-on matches) and the commands that can return it,
// linked to their pages (docs/commands/, one per command); inline is how a meaning is put in a cell (code
// spans for flags). It starts and ends with an empty line.
func Table(inline func(string) string) string {
	var codes []int
	for c := range Meaning {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var cmds []string
	for c := range Commands {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	var b strings.Builder
	b.WriteString("\n| code | meaning | returned by |\n| --- | --- | --- |\n")
	for _, code := range codes {
		m := Meaning[code]
		var by, what []string
		for _, c := range cmds {
			if x := Commands[c]; slices.Contains(x.Codes, code) {
				by = append(by, "["+c+"](commands/"+c+".md)")
				what = append(what, c+": "+x.Finding)
			}
		}
		if code == Finding {
			m = fmt.Sprintf(m, strings.Join(what, "; "))
		}
		lead := fmt.Sprint(code)
		if code == Interrupted {
			lead = fmt.Sprintf("%d, %d, %d", Interrupted, Terminated, BrokenPipe)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", lead, inline(m), strings.Join(by, ", "))
	}
	return b.String() + "\n"
}

// Status is an error that ends a command with Code and says nothing more (the library already
// said what it found: a finding on standard error, a partial run's problems); With makes one.
type Status struct{ Code int }

func (s *Status) Error() string { return "" }

// With is a *Status of code.
func With(code int) error { return &Status{Code: code} }
