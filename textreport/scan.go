package textreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/agent/all"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/store"
)

// Flush writes out what w buffers (standard output before standard error is written, or a
// question asked, so a terminal shows them in order); nothing for a writer without Flush.
func Flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}

// identities lists where the agents record raw MCP identities, for scan's identity table
// ("Acme call records, Other CLI attribution fields"; agent.Help.Identities).
func identities() string {
	var out []string
	for _, a := range all.WithHelp() {
		if s := all.HelpOf(a).Identities; s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// SARIFInvocation is the SARIF invocation of a run that read its input (nil when there is no
// problem: the log is then as before): every problem (an input that could not be read, a root
// without a store) as a toolExecutionNotifications entry naming its path, location and reason
// (problem rows never carry a secret), level error/warning/note from its severity, and
// executionSuccessful false when the run failed (exit 3) or found a store in use (exit 4).
func SARIFInvocation(probs []report.ProblemRow, failed bool) *reports.SARIFInvocation {
	if len(probs) == 0 && !failed {
		return nil
	}
	inv := &reports.SARIFInvocation{Successful: !failed}
	for _, p := range probs {
		level := "note"
		switch p.Severity {
		case "error":
			level = "error"
		case "warning":
			level = "warning"
		}
		inv.Notifications = append(inv.Notifications, reports.SARIFNotification{Level: level, Message: reports.Printable(p.String()), Path: p.Path})
	}
	return inv
}

// Scan prints scan's text report of a to w, its problems to errw (Problems); above
// SummaryStores stores, or summaryRows distinct old → new and kept names, and without verbose,
// the stores and names are summarized (Summary).
func Scan(w, errw io.Writer, a *pipeline.Summary, verbose bool) error {
	rep := &a.Report
	fmt.Fprintf(w, "scanned %s (%s, %d records, %d name sites) in %s\n",
		reports.Plural(rep.Totals.Stores, "store"), report.HumanBytes(rep.Bytes), rep.Records, rep.Totals.Sites, rep.Elapsed)
	if rep.Ignored > 0 {
		what := "other files are not stores and were not read"
		if rep.Ignored == 1 {
			what = "other file is not a store and was not read"
		}
		fmt.Fprintf(w, "%d %s (--format json lists them)\n", rep.Ignored, what)
	}
	fmt.Fprintln(w)
	if err := reports.WriteText(w, report.ClassTable(rep, a.DottedLabels)); err != nil {
		return err
	}
	fmt.Fprintln(w)
	// A summary too when the name tables alone would be long (issue 23 item 11).
	if !verbose && (len(rep.Stores) > SummaryStores || len(rep.Renames)+len(rep.Kept) > summaryRows) {
		if err := Summary(w, rep, "-v"); err != nil {
			return err
		}
	} else {
		if err := reports.WriteText(w, report.StoreTable(rep.Stores)); err != nil {
			return err
		}
		if len(rep.Renames) > 0 || len(rep.Kept) > 0 {
			fmt.Fprintln(w)
			if err := reports.WriteText(w, report.RenameTable(rep.Renames, rep.Kept, 0)); err != nil {
				return err
			}
		}
	}
	if len(rep.Identities) > 0 {
		fmt.Fprintf(w, "\nraw MCP identities recorded (%s; never rewritten, used to name calls):\n", identities())
		if err := reports.WriteText(w, report.IdentityTable(rep)); err != nil {
			return err
		}
	}
	if len(rep.SettingsRules) > 0 {
		fmt.Fprintf(w, "\nsettings rules in legacy spellings (reported, never rewritten; see sessionfix audit):\n")
		if err := reports.WriteText(w, settingsTable(rep.SettingsRules)); err != nil {
			return err
		}
	}
	Problems(w, errw, rep.Problems)
	AgentInfo(w, rep)
	report.WriteRedispatchText(w, rep.Redispatch)
	fmt.Fprintln(w)
	Homes(w, rep, nil, false)
	fmt.Fprintln(w, a.SummaryLine(false))
	if l := a.KeptLine(); l != "" {
		fmt.Fprintln(w, l)
	}
	if l := report.RedispatchLine(rep.Redispatch); l != "" {
		fmt.Fprintln(w, l)
	}
	return nil
}

// AgentInfo prints what the agents' stores were planned with (their configs and
// inventories; nothing when no agent said anything), in all.InfoOrder.
func AgentInfo(w io.Writer, rep *report.ScanReport) {
	if rep.Agents.Len() > 0 {
		fmt.Fprintln(w)
	}
	for _, id := range all.InfoOrder() {
		rows := rep.Agents.Of(id)
		for _, r := range rows {
			fmt.Fprintln(w, reports.Printable(r.Text(len(rows) > 1)))
		}
	}
}

// Homes prints, for a run with --all-users, one line per home it covered (issue 23 item
// 5): the home and its user, the stores found under the agents' roots there, their names to
// rewrite (applied: rewritten; a store the apply skipped or failed to write is not counted)
// and kept, and the roots.
func Homes(w io.Writer, rep *report.ScanReport, skipped []report.SkippedRow, applied bool) {
	if len(rep.Homes) == 0 {
		return
	}
	fmt.Fprintf(w, "%s (--all-users):\n", reports.Plural(len(rep.Homes), "home"))
	verb := "to rewrite"
	if applied {
		verb = "rewritten"
	}
	notDone := map[string]bool{}
	for _, sk := range skipped {
		notDone[sk.Path] = true
	}
	for _, h := range rep.Homes {
		n := h.Rewrite
		for _, r := range rep.Stores {
			if notDone[r.Path] && report.UnderHome(r.Path, h) {
				n -= r.Rewrite
			}
		}
		line := fmt.Sprintf("  %s (%s, uid %d): %s, %d names %s, %d kept", h.Dir, h.User, h.UID, reports.Plural(h.Stores, "store"), n, verb, h.Kept)
		if h.Problems > 0 {
			line += ", " + reports.Plural(h.Problems, "problem")
		}
		fmt.Fprintln(w, reports.Printable(line+"; "+strings.Join(h.Roots, ", ")))
	}
	fmt.Fprintln(w)
}

// Problems prints the problems and warnings of a run on w, standard error (issue 8 item 7:
// the report on standard output stays machine-clean, also with --format json, which carries
// them as members too), then its notes: rows of severity info (sessionfix's own state
// directory met in a walk, say) are not problems and are not counted as such, each is a
// "note: " line (issue 23 item 11: "1 problem" was printed after every run over ~). Standard
// output (out) is flushed first, so on a terminal they appear after the tables printed so far.
func Problems(out, w io.Writer, probs []report.ProblemRow) {
	if len(probs) == 0 {
		return
	}
	Flush(out)
	var notes []report.ProblemRow
	var real []report.ProblemRow
	for _, p := range probs {
		if p.Severity == string(store.SevInfo) {
			notes = append(notes, p)
		} else {
			real = append(real, p)
		}
	}
	if len(real) > 0 {
		fmt.Fprintf(w, "%s:\n", reports.Plural(len(real), "problem"))
		for _, p := range real {
			fmt.Fprintf(w, "  %s\n", reports.Printable(p.String()))
		}
	}
	for _, p := range notes {
		fmt.Fprintf(w, "note: %s\n", reports.Printable(strings.Replace(p.String(), ": info: ", ": ", 1)))
	}
}

// SummaryStores is how many stores scan and fix list one by one: above it, text output is a
// summary (per agent and store kind, the largest stores, old → new counts) and -v or
// --format json gives every store (issue 8: 5,000 sessions printed 115,002 plan lines).
const SummaryStores = 20

// summaryRows caps each name table of the summary (old → new, kept); the JSON has them all.
const summaryRows = 50

// Summary prints the bounded summary of a large run: stores per agent and kind, the
// SummaryStores largest stores, and old → new counts and kept names (each table at most
// summaryRows rows; "-v" or --format json lists everything). how names the flag that lists
// every store ("-v").
func Summary(w io.Writer, rep *report.ScanReport, how string) error {
	fmt.Fprintln(w, "stores by agent and kind:")
	if err := reports.WriteText(w, report.KindTable(rep)); err != nil {
		return err
	}
	if len(rep.Stores) > SummaryStores {
		fmt.Fprintf(w, "\nthe %d largest of %s (%s or --format json lists every store):\n", SummaryStores, reports.Plural(len(rep.Stores), "store"), how)
	} else {
		fmt.Fprintln(w, "\nstores:")
	}
	if err := reports.WriteText(w, report.StoreTable(report.LargestStores(rep.Stores, SummaryStores))); err != nil {
		return err
	}
	if len(rep.Renames) > 0 {
		fmt.Fprintln(w, "\nold → new (names, over all stores):")
		if err := reports.WriteText(w, report.RenameTable(rep.Renames, nil, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Renames) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", reports.Plural(n, "distinct name"))
		}
	}
	if len(rep.Kept) > 0 {
		fmt.Fprintln(w, "\nkept names, and why:")
		if err := reports.WriteText(w, report.KeptTable(rep.Kept, summaryRows)); err != nil {
			return err
		}
		if n := len(rep.Kept) - summaryRows; n > 0 {
			fmt.Fprintf(w, "… and %s more (--format json lists them)\n", reports.Plural(n, "distinct name"))
		}
	}
	return nil
}

// settingsTable is the text table of legacy-spelled settings rules.
func settingsTable(rows []report.SettingsRuleRow) *reports.Table {
	t := &reports.Table{Columns: []string{"where", "key", "rule", "reason", "current name"}}
	for _, r := range rows {
		reason := r.Reason
		if r.Ignored != "" {
			reason += " (not in effect)"
		}
		current := strings.Join(r.Registered, ", ")
		if r.VarDependent {
			current = "(depends on $VAR values; not shown)"
		}
		t.Add(fmt.Sprintf("%s:%d:%d", r.File, r.Line, r.Column), fmt.Sprintf("%s[%d]", r.Key, r.Index), r.Rule, reason, current)
	}
	return t
}
