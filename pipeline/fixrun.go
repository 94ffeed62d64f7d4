package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/sessionfix/sessionfix/internal/exitcode"
	"github.com/sessionfix/sessionfix/internal/usage"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/rewrite"
	"github.com/sessionfix/sessionfix/store"
)

// FixPass is one pass of a fix run over its stores.
type FixPass int

const (
	// PassDryRun: fix without --apply; the plan is shown, nothing is written.
	PassDryRun FixPass = iota
	// PassReview: interactive fix --apply; the plan shown before the [y/N] question.
	PassReview
	// PassApply: fix --apply; the write pass.
	PassApply
)

// FixView is what a fix run shows: the command's printing. Fix calls, for each pass, Begin,
// Store for every store result in the order they stream, then End; Abort instead of End
// (and, for a run stopped before its first pass, instead of Begin) when the run stops with
// an error. A review pass that fails returns its error without Abort.
type FixView interface {
	// Begin starts pass over stores stores (the number found; a view may summarize a large
	// run). reviewed: PassApply after a PassReview the person confirmed.
	Begin(pass FixPass, stores int, reviewed bool)
	// Store shows one store's result.
	Store(r *rewrite.StoreResult) error
	// End closes pass: e.Line is the run's closing sentence (SummaryLine or AppliedLine).
	End(pass FixPass, e FixPassEnd) error
	// Abort ends the output of a run stopped by err and returns the error Fix returns
	// (e.Summary and e.Line are unset).
	Abort(err error, e FixPassEnd) error
}

// FixPassEnd is what a pass ends with: the run's summary, its closing sentence, the apply's
// result (PassApply; else nil) and the stores the apply skipped (in use) or failed to write,
// in stream order.
type FixPassEnd struct {
	Summary *Summary
	Line    string
	Result  *rewrite.Result
	Skipped []report.SkippedRow
	// Moves are the stores a dry run (or review) with Options.MoveLegacy would move
	// (Pipeline.Relocations); an apply's moves are in Result.Moves.
	Moves []rewrite.Relocation
}

// FixRequest is one fix run, its flags checked by the command.
type FixRequest struct {
	Paths   []string
	Options Options // StateDir resolved; RollBack is set here with Apply
	// Apply writes (fix --apply); Yes applies without PassReview and Confirm.
	Apply, Yes bool
	// Planned (--plan FILE, read with LoadPlan) is applied exactly; nil: the reviewed plan, or
	// (Yes) the plan made now. PlanFile is that file's name (the manifest's command).
	Planned  map[string]*rewrite.PlannedStore
	PlanFile string
	// PlanOut is --plan-out FILE: a dry run collects its plan for FixHooks.WritePlan; a FILE
	// the run reads is refused (usage error) before anything is shown.
	PlanOut    string
	Workers    int              // 0: the number of CPUs
	Now        func() time.Time // nil: time.Now
	FailOnKept bool             // --fail-on kept
	// Force is fix --force: a store whose file the user does not own, or that is read-only,
	// is rewritten all the same (said as a warning) instead of refused (rewrite.FileGuard).
	Force bool
}

// FixHooks are the command's parts of a fix run.
type FixHooks struct {
	View FixView
	// Run wraps a pass over p (the command's progress bar); nil: p.Run.
	Run func(p *Pipeline) RunFunc
	// Confirm asks whether to apply the plan PassReview showed (s: its summary; only asked
	// when it rewrites something). false: nothing is written, the run ends declined.
	Confirm func(s *Summary) (bool, error)
	// WritePlan writes the plan a dry run with PlanOut collected (after PassDryRun's End).
	WritePlan func(pc *PlanCollector) error
}

// FixEnd is how a fix run ended: its summary (of the last pass), Code its exit status
// (Summary.ExitCode, or exitcode.Declined) and Declined when the [y/N] question was answered no.
type FixEnd struct {
	Summary  *Summary
	Code     int
	Declined bool
}

// Fix runs fix: discovery, then a dry run (PassDryRun, the plan collected for --plan-out),
// or, with Apply, the plan shown and confirmed (PassReview, Confirm; skipped with Yes) and
// the write pass (PassApply). The write pass applies exactly the plan the person confirmed
// (or req.Planned): the stores are read afresh and a store that changed since it was shown
// is refused (exit 4), never planned again. With Yes and no req.Planned, the write pass
// applies what it plans. The error is the view's Abort for a run stopped by discovery or an
// apply failure, else the first error of a pass, a hook or the --plan-out check.
func Fix(ctx context.Context, env Env, req FixRequest, h FixHooks) (*FixEnd, error) {
	runOf := func(p *Pipeline) RunFunc {
		if h.Run != nil {
			return h.Run(p)
		}
		return p.Run
	}
	if req.Apply {
		req.Options.RollBack = true
	}
	p, err := New(ctx, env, req.Paths, req.Options)
	if err != nil {
		return nil, h.View.Abort(err, FixPassEnd{})
	}
	if req.PlanOut != "" && p.Reads(req.PlanOut, req.Options) {
		return nil, usage.Errorf("--plan-out %s is a file this run reads (a store, a settings file or an input): refusing to write the plan over it (nothing was changed)", req.PlanOut)
	}
	p.Summary.Report.Problems = append(p.Summary.Report.Problems, p.Settings.Notes()...)
	aopt := p.FixApplyOptions(req.Options.StateDir, req.PlanFile, req.Now, req.Workers)
	aopt.Guard = &rewrite.FileGuard{Force: req.Force}
	stores := len(p.Found.Targets)

	if !req.Apply {
		h.View.Begin(PassDryRun, stores, false)
		var pc PlanCollector
		each := h.View.Store
		if req.PlanOut != "" {
			each = pc.Wrap(each)
		}
		if _, err := runOf(p)(ctx, rewrite.ProcessOptions{ApplyOptions: aopt, Hash: req.PlanOut != ""}, each); err != nil {
			return nil, h.View.Abort(err, FixPassEnd{})
		}
		if err := h.View.End(PassDryRun, FixPassEnd{Summary: p.Summary, Line: p.Summary.SummaryLine(false), Moves: p.moves()}); err != nil {
			return nil, err
		}
		if req.PlanOut != "" {
			if err := h.WritePlan(&pc); err != nil {
				return nil, err
			}
		}
		return &FixEnd{Summary: p.Summary, Code: p.Summary.ExitCode(false, req.FailOnKept)}, nil
	}

	planned, reviewed := req.Planned, false
	if !req.Yes {
		h.View.Begin(PassReview, stores, false)
		var pc PlanCollector
		if _, err := runOf(p)(ctx, rewrite.ProcessOptions{ApplyOptions: aopt, Hash: true}, pc.Wrap(h.View.Store)); err != nil {
			return nil, err
		}
		moves := p.moves()
		if err := h.View.End(PassReview, FixPassEnd{Summary: p.Summary, Line: p.Summary.SummaryLine(false), Moves: moves}); err != nil {
			return nil, err
		}
		if p.Summary.Report.Totals.Rewrite == 0 && len(moves) == 0 {
			return &FixEnd{Summary: p.Summary, Code: p.Summary.ExitCode(false, req.FailOnKept)}, nil
		}
		ok, err := h.Confirm(p.Summary)
		if err != nil {
			return nil, err
		}
		if !ok {
			return &FixEnd{Summary: p.Summary, Code: exitcode.Declined, Declined: true}, nil
		}
		if p, err = New(ctx, env, req.Paths, req.Options); err != nil {
			return nil, err
		}
		if planned == nil {
			// The plan the person confirmed, not a new one: a store that changed since it
			// was shown is refused, as with --plan.
			planned = pc.Plan().Index()
		}
		reviewed = true
	}
	var t FixTally
	each := func(r *rewrite.StoreResult) error {
		t.Add(r)
		return h.View.Store(r)
	}
	res, err := p.ApplyPlan(ctx, aopt, planned, func() { h.View.Begin(PassApply, stores, reviewed) }, runOf(p), each)
	if err != nil {
		return nil, h.View.Abort(err, FixPassEnd{Result: res, Skipped: t.Skipped})
	}
	for _, m := range res.Moves {
		switch {
		case m.Err == nil:
		case errors.Is(m.Err, store.ErrInUse):
			p.Summary.InUse++
		default:
			p.Summary.ApplyErrs++
		}
	}
	e := FixPassEnd{Summary: p.Summary, Line: p.Summary.AppliedLine(t.Names, t.Stores, t.DBs, t.Skipped), Result: res, Skipped: t.Skipped}
	if err := h.View.End(PassApply, e); err != nil {
		return nil, err
	}
	return &FixEnd{Summary: p.Summary, Code: p.Summary.ExitCode(true, req.FailOnKept)}, nil
}

// moves are the moves a dry run or review lists: Relocations with MoveLegacy, else none.
func (p *Pipeline) moves() []rewrite.Relocation {
	if !p.MoveLegacy {
		return nil
	}
	return p.Relocations()
}

// FixTally counts what an apply pass did, from its streamed store results: Stores rewritten
// (DBs of them SQLite databases) with Names edited in them, and the Skipped rows of the
// stores it skipped (in use) or failed to write (FixStoreOf's), in stream order. Results
// without a plan (reported with the problems) and dry-run results are not counted.
type FixTally struct {
	Names, Stores, DBs int
	Skipped            []report.SkippedRow
}

// Add counts r.
func (t *FixTally) Add(r *rewrite.StoreResult) {
	if r.Plan == nil {
		return
	}
	fs, skipped := FixStoreOf(r, false, false)
	switch {
	case skipped != nil:
		t.Skipped = append(t.Skipped, *skipped)
	case fs.Outcome != nil:
		t.Stores++
		if r.Plan.Snap.Ref.Kind.Database() {
			t.DBs++
		}
		t.Names += fs.Outcome.Names
	}
}
