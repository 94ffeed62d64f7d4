package textreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionfix/sessionfix/agent"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// RulePlan prints fix --rules' plan to w: each legacy-spelled rule (what names what is migrated, "Acme rules"):
// where, old → new, what it matched before, what it matches after, and the flags.
func RulePlan(w io.Writer, what string, rows []agent.RuleChange, now string) {
	if len(rows) == 0 {
		fmt.Fprintf(w, "no legacy-spelled rule: every rule that names an inventory tool already uses %s's spelling\n", now)
		return
	}
	fmt.Fprintf(w, "%s in a legacy spelling (migrated to %s):\n", what, now)
	for _, r := range rows {
		arrow := r.New
		if !r.Rewrite {
			arrow = "(kept)"
		}
		fmt.Fprintf(w, "%s:%d:%d %s %s[%d]: %s %q → %s\n", reports.Printable(r.File), r.Line, r.Column, r.Scope, r.Key, r.Index,
			r.Action, reports.Printable(r.Old), reports.Printable(arrow))
		fmt.Fprintf(w, "    matched before (%s spelling): %s\n", r.WrittenFor, reports.Printable(noneIfEmpty(strings.Join(r.Before, ", "))))
		if r.New != "" {
			fmt.Fprintf(w, "    %s matches under %s: %s\n", reports.Printable(r.New), now, reports.Printable(noneIfEmpty(strings.Join(r.After, ", "))))
		}
		if len(r.Extra) > 0 {
			fmt.Fprintf(w, "    SHARED NAME: also %s\n", reports.Printable(strings.Join(r.Extra, ", ")))
		}
		if r.Note != "" {
			fmt.Fprintf(w, "    note: %s\n", reports.Printable(r.Note))
		}
		for _, ov := range r.Overrides {
			fmt.Fprintf(w, "    CONFLICT: %s\n", reports.Printable(ov))
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

// RuleOutcomes prints what fix --rules --apply did: each file not rewritten with its status and
// reason, the rules and files rewritten, and the run (res: rewrite.Result; stateDir its state
// directory) with the command that undoes it.
func RuleOutcomes(w io.Writer, rows []agent.RuleOutcome, res *rewrite.Result, stateDir string) {
	n, files := 0, 0
	for _, row := range rows {
		if row.Status == "rewritten" {
			n += row.Rules
			files++
		} else {
			fmt.Fprintf(w, "%s: %s: %s\n", reports.Printable(row.File), row.Status, reports.Printable(row.Reason))
		}
	}
	fmt.Fprintf(w, "rewrote %s in %s\n", reports.Plural(n, "rule"), reports.Plural(files, "file"))
	if res.RunID != "" {
		fmt.Fprintf(w, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
			res.RunID, res.Dir, reports.ShellQuote(stateDir), res.RunID)
	}
}
