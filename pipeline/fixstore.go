package pipeline

import (
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// FixStoreOf is fix's report row of one streamed store result (docs/report.md "stores"): its
// decisions when showPlan (ActNone ones only when verbose) and, with --apply, its outcome
// (rewritten with the names edited and any error after the replace; in-use; failed). skipped is
// the store's SkippedRow when --apply skipped it (in use) or failed to write it, else nil.
// Cont and Open are left for the caller (the batch layout of the text output). r.Plan must be
// set.
func FixStoreOf(r *rewrite.StoreResult, showPlan, verbose bool) (fs report.FixStore, skipped *report.SkippedRow) {
	fs, skipped, _ = FixStoreRows(r, showPlan, verbose, -1)
	return fs, skipped
}

// FixStoreRows is FixStoreOf building at most limit decision rows (limit < 0: all); rows is
// how many FixStoreOf would have built. A text plan lists a few rows of each store (textreport:
// at most 50): building every row of a dense session to cut them was 291 MB of the 689 MB a
// fix --apply of make bench's dense corpus allocated.
func FixStoreRows(r *rewrite.StoreResult, showPlan, verbose bool, limit int) (fs report.FixStore, skipped *report.SkippedRow, rows int) {
	fs = report.FixStore{Path: r.Plan.Snap.Ref.Path, Kind: string(r.Plan.Snap.Ref.Kind), Profile: report.ProfileOf(r.Store)}
	if showPlan {
		for i := range r.Plan.Decisions {
			d := &r.Plan.Decisions[i]
			if d.Action == naming.ActNone && !verbose {
				continue
			}
			rows++
			if limit >= 0 && len(fs.Decisions) >= limit {
				continue
			}
			l := d.Site.Loc
			fs.Decisions = append(fs.Decisions, report.DecisionRow{Where: l.String(), Line: l.Line, Row: l.Row, Offset: l.Offset, Site: SiteLabel(*d.Site), Path: d.Site.Path,
				Old: report.SiteName(d.Site), New: d.New, Class: string(d.Class), Reasons: report.RejectReasons(d.Class, d.Site), Action: string(d.Action), Source: d.Source, Note: d.Note})
		}
	}
	oc := r.Outcome
	if oc == nil {
		return fs, nil, rows
	}
	db := r.Plan.Snap.Ref.Kind.Database()
	switch {
	case oc.Committed():
		// Rewritten and recorded; an error after the replace (a late writer carried over, a
		// directory fsync) is reported with it.
		fs.Outcome = &report.StoreOutcome{Status: "rewritten", Names: oc.Edits}
		if oc.Err != nil {
			fs.Outcome.Reason = oc.Err.Error()
		}
	case oc.InUse():
		fs.Outcome = &report.StoreOutcome{Status: "in-use", Reason: oc.Err.Error()}
		skipped = &report.SkippedRow{Path: fs.Path, InUse: true, Reason: oc.Err.Error(), DB: db}
	default:
		fs.Outcome = &report.StoreOutcome{Status: "failed", Reason: oc.Err.Error()}
		skipped = &report.SkippedRow{Path: fs.Path, Reason: oc.Err.Error(), DB: db}
	}
	return fs, skipped, rows
}

// SiteLabel is a site's kind, with its field when that says more ("message/functionCall").
func SiteLabel(s store.Site) string {
	if s.Field != "" && string(s.Kind) != s.Field {
		return string(s.Kind) + "/" + s.Field
	}
	return string(s.Kind)
}
