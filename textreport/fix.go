package textreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// FixOptions are the flags of fix its output follows: --format ("table" or "json"), -v, -q,
// --apply and the state directory (named in the undo command of an aborted run).
type FixOptions struct {
	Format                string
	Verbose, Quiet, Apply bool
	StateDir              string
}

// NewFixOutput is the output of one pass of a fix run: the report to out, what was skipped or
// failed to err; showPlan: each store's plan is listed; summary: a large run in text
// (SummaryMode).
func NewFixOutput(out, err io.Writer, opts FixOptions, showPlan, summary bool) *FixOutput {
	return &FixOutput{out: out, err: err, opts: opts, showPlan: showPlan, summary: summary}
}

// SummaryMode reports whether a fix run over n stores prints a summary instead of each plan.
func SummaryMode(opts FixOptions, n int) bool {
	return opts.Format == "table" && !opts.Verbose && n > SummaryStores
}

// FixOutput prints fix results as they stream in: the plan of each store (table or one JSON
// object per store) and, with --apply, what happened to it.
type FixOutput struct {
	out, err io.Writer
	opts     FixOptions
	showPlan bool
	// summary: a large run in text (SummaryMode): the plans of the first SummaryStores stores
	// with something to list (planStores counts them) are held in plans and printed at the
	// end only when no more came (overflow false); writeSummary follows either way.
	summary   bool
	plans     []string
	overflow  bool
	jsonStart bool
	began     bool
	// Skipped: the stores --apply skipped or failed to write (pipeline.FixTally's), for the
	// JSON tail.
	Skipped []report.SkippedRow
	// partOpen: the plan of a store given in parts was printed without its closing blank line.
	partOpen bool
	// Moves: the stores --move-legacy would move (dry run) or moved (apply).
	Moves []report.MoveRow
	// The text plan's size (issue 23 item 11: one 200 MiB session printed 165,301 lines):
	// rows is how many plan rows were listed, curPath, curRows and curCut the store being
	// listed and its rows listed and left out (a store given in parts counts as one); cutRows
	// and cutStores what was left out in all (planStoreRows, planRows).
	rows, curRows, curCut int
	planStores            int // stores with a plan so far
	curPath               string
	cutRows, cutStores    int
}

// A text plan lists at most planStoreRows rows of one store and planRows rows in all (without
// -v): a store's rows beyond are counted in one line under its table, the stores after the
// last row in the closing summary (fixSummary), so the output of a run grows with what
// it has to say, not with the size of the stores.
const (
	planStoreRows = 50
	planRows      = 200
)

// budget cuts fs's rows to what planStoreRows and planRows leave (every row with -v or in
// JSON), counting what it cut: curCut of the current store (all its parts), cutRows and
// cutStores of the run.
func (o *FixOutput) budget(fs report.FixStore, rows int) report.FixStore {
	if o.opts.Verbose || o.opts.Format == "json" {
		return fs
	}
	if fs.Path != o.curPath || !fs.Cont {
		o.curPath, o.curRows, o.curCut = fs.Path, 0, 0
	}
	room := max(0, min(planStoreRows-o.curRows, planRows-o.rows))
	if rows <= room {
		o.rows += rows
		o.curRows += rows
		return fs
	}
	more := rows - room
	fs.Decisions = fs.Decisions[:min(room, len(fs.Decisions))]
	o.rows += room
	o.curRows += room
	if o.curCut == 0 {
		o.cutStores++
	}
	o.curCut += more
	o.cutRows += more
	return fs
}

func (o *FixOutput) Store(r *rewrite.StoreResult) error {
	last := r.Batch == nil || r.Batch.Last
	// closeOpen ends a store whose parts were printed without their closing blank line, with
	// the count of its rows left out (cutTail).
	closeOpen := func() error {
		if !last || !o.partOpen {
			return nil
		}
		o.partOpen = false
		if o.curCut > 0 {
			fmt.Fprintf(o.out, "  %s\n", cutTail(o.curCut))
		}
		_, err := fmt.Fprintln(o.out)
		return err
	}
	if r.Plan == nil {
		return closeOpen() // reported with the problems
	}
	// The rows budget will list (all with -v or in JSON): only those are built, the rest
	// counted (rows).
	cont := r.Batch != nil && r.Batch.Index > 0
	limit := -1
	if !o.opts.Verbose && o.opts.Format != "json" {
		cur := o.curRows
		if r.Plan.Snap.Ref.Path != o.curPath || !cont {
			cur = 0
		}
		limit = max(0, min(planStoreRows-cur, planRows-o.rows))
	}
	fs, _, rows := pipeline.FixStoreRows(r, o.showPlan, o.opts.Verbose, limit)
	fs.Cont, fs.Open = cont, r.Batch != nil && !r.Batch.Last && !o.summary
	if rows == 0 && fs.Outcome == nil {
		return closeOpen()
	}
	if o.opts.Format == "json" {
		b, err := MarshalJSON(fs)
		if err != nil {
			return err
		}
		sep := ",\n"
		if !o.jsonStart {
			sep = ""
			o.jsonStart = true
		}
		_, err = fmt.Fprintf(o.out, "%s%s", sep, b)
		o.skippedLine(fs)
		return err
	}
	if rows > 0 {
		fs = o.budget(fs, rows)
		tail := ""
		if last && o.curCut > 0 {
			tail = cutTail(o.curCut)
		}
		if !fs.Cont {
			o.planStores++
		}
		switch {
		case o.overflow:
		case o.summary && o.planStores > SummaryStores:
			o.overflow, o.plans = true, nil
		case len(fs.Decisions) == 0:
			// Past the rows a plan lists: counted under the store and in the closing summary.
			if err := closeOpen(); err != nil {
				return err
			}
		case !o.summary:
			if err := storePlan(o.out, fs, tail); err != nil {
				return err
			}
			o.partOpen = fs.Open
		default:
			var b strings.Builder
			if err := storePlan(&b, fs, tail); err != nil {
				return err
			}
			o.plans = append(o.plans, b.String())
		}
	} else if err := closeOpen(); err != nil {
		return err
	}
	o.skippedLine(fs)
	return nil
}

// cutTail is the line under a store's plan that counts its rows not listed.
func cutTail(n int) string {
	return fmt.Sprintf("… and %s of this store not listed (-v lists every name, --format json has them)", reports.Plural(n, "more name site"))
}

// writeHeld prints the plans a summary-mode run held back, when they were few enough
// (fixSummary says so otherwise).
func (o *FixOutput) writeHeld() {
	for _, p := range o.plans {
		fmt.Fprint(o.out, p)
	}
}

// skippedLine reports a store --apply skipped (in use) or failed to write, on standard error
// with every format (issue 8 item 7); JSON also has it in "skipped" and the store's outcome.
func (o *FixOutput) skippedLine(fs report.FixStore) {
	if fs.Outcome == nil {
		return
	}
	if fs.Outcome.Status == "rewritten" {
		if fs.Outcome.Reason != "" {
			Flush(o.out)
			fmt.Fprintf(o.err, "%s: rewritten, but: %s\n", reports.Printable(fs.Path), reports.Printable(report.TrimPathPrefix(fs.Path, fs.Outcome.Reason)))
		}
		return
	}
	label := "failed"
	if fs.Outcome.Status == "in-use" {
		label = "in use, skipped"
	}
	Flush(o.out)
	fmt.Fprintf(o.err, "%s: %s: %s\n", reports.Printable(fs.Path), label, reports.Printable(report.TrimPathPrefix(fs.Path, fs.Outcome.Reason)))
}

// Begin opens the JSON document.
func (o *FixOutput) Begin(mode string) {
	o.jsonStart = false
	o.began = true
	if o.opts.Format == "json" {
		fmt.Fprintf(o.out, "{\"mode\":%q,\"stores\":[\n", mode)
	}
}

func (o *FixOutput) End(a *pipeline.Summary, summary string, res *rewrite.Result) error {
	if o.opts.Format == "json" {
		t := report.FixTail{Summary: summary, Kept: a.KeptLine(), Totals: a.Report.Totals, Skipped: o.Skipped, Problems: a.Report.Problems, Agents: a.Report.Agents, Homes: a.Report.Homes,
			Redispatch: a.Report.Redispatch, RedispatchNote: report.RedispatchLine(a.Report.Redispatch), Moves: o.Moves}
		if t.Skipped == nil {
			t.Skipped = []report.SkippedRow{}
		}
		if res != nil {
			t.RunID, t.RunDir = res.RunID, res.Dir
		}
		b, err := MarshalJSON(t)
		if err != nil {
			return err
		}
		// Splice the tail's members into the open document.
		_, err = fmt.Fprintf(o.out, "\n],%s\n", b[1:])
		Problems(o.out, o.err, a.Report.Problems)
		return err
	}
	switch {
	case o.summary:
		o.writeHeld()
		fixSummary(o.out, a, o.opts.Quiet || !o.overflow)
	case o.cutRows > 0:
		// A plan too long to list: what was left out, then the summary.
		fmt.Fprintf(o.out, "%s of %s not listed (at most %d a store and %d in all; -v lists every one, --format json has them)\n\n",
			reports.Plural(o.cutRows, "name site"), reports.Plural(o.cutStores, "store"), planStoreRows, planRows)
		fixSummary(o.out, a, true)
	}
	Problems(o.out, o.err, a.Report.Problems)
	AgentInfo(o.out, &a.Report)
	report.WriteRedispatchText(o.out, a.Report.Redispatch)
	Homes(o.out, &a.Report, o.Skipped, res != nil)
	fmt.Fprintln(o.out, summary)
	for _, m := range o.Moves {
		switch {
		case res == nil:
			fmt.Fprintf(o.out, "would move %s -> %s (%s)\n", reports.Printable(m.From), reports.Printable(m.To), m.Why)
		case m.Moved:
			fmt.Fprintf(o.out, "moved %s -> %s\n", reports.Printable(m.From), reports.Printable(m.To))
			if m.Error != "" {
				Flush(o.out)
				fmt.Fprintf(o.err, "%s: moved to %s, then: %s\n", reports.Printable(m.From), reports.Printable(m.To), reports.Printable(m.Error))
			}
		default:
			Flush(o.out)
			fmt.Fprintf(o.err, "%s: not moved to %s: %s\n", reports.Printable(m.From), reports.Printable(m.To), reports.Printable(m.Error))
		}
	}
	if l := a.KeptLine(); l != "" {
		fmt.Fprintln(o.out, l)
	}
	if l := report.RedispatchLine(a.Report.Redispatch); l != "" {
		fmt.Fprintln(o.out, l)
	}
	return nil
}

// fixSummary is the bounded summary fix prints after (or, when more than SummaryStores
// stores had a plan, instead of) the per-store plans of a run over more than SummaryStores
// stores; -v prints every plan, --format json has it. held: the plans were printed, so no
// line says they were left out.
func fixSummary(w io.Writer, a *pipeline.Summary, held bool) {
	if !held {
		fmt.Fprintf(w, "%s: the plan of each store is not listed (-v lists it, --format json has it)\n\n", reports.Plural(len(a.Report.Stores), "store"))
	}
	_ = Summary(w, &a.Report, "-v")
	fmt.Fprintln(w)
}

// abort ends the output of a run stopped by err (an interrupt, an unusable state directory):
// the JSON document is closed with an "error" member, and what a run already rewrote is named
// so it can be undone.
func (o *FixOutput) Abort(err error, res *rewrite.Result) error {
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted")
	}
	hint := ""
	if res != nil && res.RunID != "" && res.Manifest != nil {
		hint = fmt.Sprintf("; %s already rewritten in run %s (undo with: sessionfix undo --state-dir %s %s)",
			reports.Plural(res.Files, "file"), res.RunID, reports.ShellQuote(o.opts.StateDir), res.RunID)
	}
	if o.opts.Format == "json" {
		if !o.began {
			mode := "apply"
			if !o.opts.Apply {
				mode = "dry-run"
			}
			fmt.Fprintf(o.out, "{\"mode\":%q,\"stores\":[", mode)
		}
		skipped := o.Skipped
		if skipped == nil {
			skipped = []report.SkippedRow{}
		}
		tail := map[string]any{"error": err.Error() + hint, "skipped": skipped}
		if res != nil {
			tail["run_id"], tail["run_dir"] = res.RunID, res.Dir
		}
		b, merr := MarshalJSON(tail)
		if merr == nil {
			fmt.Fprintf(o.out, "\n],%s\n", b[1:])
		}
	}
	return fmt.Errorf("%w%s", err, hint)
}

// MarshalJSON is v as compact JSON without HTML escapes (and no final newline).
func MarshalJSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// storePlan prints one store's plan, then tail (what of it is not listed) when not empty.
func storePlan(w io.Writer, fs report.FixStore, tail string) error {
	if !fs.Cont {
		fmt.Fprintf(w, "%s (%s)\n", reports.Printable(fs.Path), report.KindLabel(fs.Kind, fs.Profile))
	}
	t := &reports.Table{Columns: []string{whereHeader(fs.Decisions), "site", "old", "new", "class"}}
	notes := map[string]bool{}
	var noteOrder []string
	for _, d := range fs.Decisions {
		newName := d.New
		switch d.Action {
		case string(naming.ActKeep):
			newName = "(kept)"
		case string(naming.ActNone):
			newName = "(unchanged)"
		}
		t.Add(d.Where, d.Site, d.Old.String(), newName, report.ReasonLabel(d.Class, d.Reasons))
		if d.Note != "" {
			k := d.Old.String() + ": " + d.Note
			if !notes[k] {
				notes[k] = true
				noteOrder = append(noteOrder, k)
			}
		}
	}
	var b strings.Builder
	if err := reports.WriteText(&b, t); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if fs.Cont && len(lines) > 1 {
		lines = lines[1:] // the column heading was printed with the first part
	}
	for _, line := range lines {
		fmt.Fprintf(w, "  %s\n", line)
	}
	for _, n := range noteOrder {
		fmt.Fprintf(w, "  note: %s\n", reports.Printable(n))
	}
	if tail != "" {
		fmt.Fprintf(w, "  %s\n", tail)
	}
	if fs.Open {
		return nil
	}
	_, err := fmt.Fprintln(w)
	return err
}

// whereHeader names the location column of a plan by what it holds: "line" (line numbers),
// "row" (database rows), "offset" (@byte offsets of a whole-file JSON store), or a
// combination such as "line/row".
func whereHeader(ds []report.DecisionRow) string {
	var line, row, off bool
	for _, d := range ds {
		switch {
		case d.Row != "":
			row = true
		case d.Line > 0:
			line = true
		default:
			off = true
		}
	}
	var parts []string
	for _, p := range []struct {
		on bool
		s  string
	}{{line, "line"}, {row, "row"}, {off, "offset"}} {
		if p.on {
			parts = append(parts, p.s)
		}
	}
	if len(parts) == 0 {
		return "where"
	}
	return strings.Join(parts, "/")
}
