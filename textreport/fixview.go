package textreport

import (
	"fmt"
	"io"

	"github.com/sessionfix/sessionfix/pipeline/report"

	"github.com/sessionfix/sessionfix/pipeline"
	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/rewrite"
)

// FixView prints a fix run (pipeline.FixView): the plan of each store and, with --apply, what
// happened to it, through a FixOutput per pass, to Out (standard output) and Err.
type FixView struct {
	Out, Err io.Writer
	Opts     FixOptions
	// PlanOut is --plan-out ("" without): a dry run that writes a plan says nothing of --apply.
	PlanOut string
	// Report is --report's, filled by the final pass (nil without the flag); WriteReport
	// writes it at the end of that pass, or when the run stops early (stopped: why).
	Report      *pipeline.FixReport
	WriteReport func(e pipeline.FixPassEnd, stopped error) error
	// out is the dry-run or apply pass's output, nil before it began; review the interactive
	// plan display's.
	out, review *FixOutput
}

// Begin starts pass over stores stores (reviewed: the plan was shown before the question).
func (v *FixView) Begin(pass pipeline.FixPass, stores int, reviewed bool) {
	opts := v.Opts
	large := SummaryMode(opts, stores)
	switch pass {
	case pipeline.PassReview:
		// Interactive: the whole plan is shown before the question (as a dry run).
		fmt.Fprintln(v.Out, "planned changes:")
		tableOpts := opts
		tableOpts.Format = "table" // a person reads this before answering
		v.review = NewFixOutput(v.Out, v.Err, tableOpts, !opts.Quiet, large)
	case pipeline.PassDryRun:
		v.out = NewFixOutput(v.Out, v.Err, opts, !opts.Quiet, large)
		v.out.Begin("dry-run")
	default:
		// After a review the plan or summary was just shown.
		v.out = NewFixOutput(v.Out, v.Err, opts, !opts.Quiet && !reviewed, large && !reviewed)
		v.out.Begin("apply")
	}
}

// Store prints one store's result (and adds it to the report of the final pass).
func (v *FixView) Store(r *rewrite.StoreResult) error {
	if v.out == nil {
		return v.review.Store(r)
	}
	if v.Report != nil {
		v.Report.Add(r)
	}
	return v.out.Store(r)
}

// End ends pass: the text end of the run (held plans, summary, problems, closing lines), the
// report file, and what to do next (apply, undo).
func (v *FixView) End(pass pipeline.FixPass, e pipeline.FixPassEnd) error {
	if pass == pipeline.PassReview {
		// The text end of a run (held plans, summary, problems, closing lines), as a dry run.
		v.review.Moves = report.MoveRows(e.Moves, nil)
		return v.review.End(e.Summary, e.Line, nil)
	}
	v.out.Skipped = e.Skipped
	v.out.Moves = report.MoveRows(e.Moves, e.Result)
	if err := v.out.End(e.Summary, e.Line, e.Result); err != nil {
		return err
	}
	if err := v.writeReport(e, nil); err != nil {
		return err
	}
	res := e.Result
	switch {
	case v.Opts.Format != "table":
	case pass == pipeline.PassDryRun:
		switch {
		case v.PlanOut == "" && e.Summary.Report.Totals.Rewrite > 0:
			fmt.Fprintln(v.Out, "dry-run: nothing was changed; run with --apply --yes to rewrite")
		case v.PlanOut == "" && len(e.Moves) > 0:
			fmt.Fprintln(v.Out, "dry-run: nothing was changed; run with --apply --yes --move-legacy to move")
		}
	case res.RunID != "" && (res.Files > 0 || len(res.Moves) > 0):
		fmt.Fprintf(v.Out, "run %s; backups and manifest in %s; undo with: sessionfix undo --state-dir %s %s\n",
			res.RunID, res.Dir, reports.ShellQuote(v.Opts.StateDir), res.RunID)
		for _, n := range res.Manifest.ToolNotes {
			fmt.Fprintf(v.Out, "note: %s\n", n)
		}
	}
	return nil
}

// Abort ends a run stopped by err (FixOutput.Abort), the report file written first.
func (v *FixView) Abort(err error, e pipeline.FixPassEnd) error {
	out := v.out
	if out == nil {
		out = NewFixOutput(v.Out, v.Err, v.Opts, false, false)
	}
	out.Skipped = e.Skipped
	if rerr := v.writeReport(e, err); rerr != nil {
		fmt.Fprintf(v.Err, "sessionfix: %v\n", rerr)
	}
	return out.Abort(err, e.Result)
}

// writeReport calls WriteReport once a pass began or the run stopped (nothing without
// --report).
func (v *FixView) writeReport(e pipeline.FixPassEnd, stopped error) error {
	if v.Report == nil || (v.out == nil && stopped == nil) {
		return nil
	}
	return v.WriteReport(e, stopped)
}
