package rewrite

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// ProcessOptions tunes Process.
type ProcessOptions struct {
	// Apply rewrites each store right after planning it (a run directory is created on the
	// first rewrite); without it Process only scans and plans.
	Apply bool
	ApplyOptions
	// Hash asks each store for its content hash (always on with Apply).
	Hash bool
	// Progress is called with bytes read (serialized).
	Progress func(n int64)
	// Planned, when not nil, restricts Apply to a reviewed plan (a plan file, or the plan a
	// person confirmed), by store path: a store is rewritten only when PlannedStore.Check
	// passes (same fingerprint, same edits); one that changed, or that is not in the plan but
	// now has something to rewrite, gets an Outcome with a *PlanChangedError (in use), one
	// planned to other edits a *PlanMismatchError. Read-only while Process runs.
	Planned map[string]*PlannedStore
	// Relocate, with Apply, says where a store is to be moved ("" : it stays; fix
	// --move-legacy: the agents' agent.Agent.Relocate). The moves are made once every store
	// was processed, in store order, for the stores that were read and not refused or failed
	// (Result.Moves; move.go).
	Relocate func(store.Ref) (to, why string)
}

// StoreResult is one store through the pipeline: its plan (or the error that kept it from
// being read) and, with Apply, what happened when it was rewritten. It is valid only during
// the emit callback: the pipeline drops it afterwards so memory stays flat.
type StoreResult struct {
	Store   store.Store
	Plan    *StorePlan // nil when ScanErr is set
	ScanErr error
	// Outcome is set when Apply was on and the plan had something to rewrite.
	Outcome *Outcome
	// Batch is set when the store had too many sites to plan at once (a store.BatchScanner
	// with more than BatchSites sites): the store then gives several results, in order. Each
	// but the last has the plan of one batch of sites (Plan.Snap holds those sites only:
	// no records, problems or identities); the last (Batch.Last) has the store's snapshot,
	// without sites, an empty plan and, with Apply, the Outcome. Counts add up over the parts.
	Batch *Batch
	// release, when set, hands the sites the result's plan points into back to their store
	// (siteReleaser) once the result was emitted.
	release func()
}

// Batch numbers the results of a store planned batch by batch (see StoreResult.Batch).
type Batch struct {
	Index int  // 0-based
	Last  bool // the store's closing result
}

// Process scans, plans and (with Apply) rewrites each store, one store at a time per worker,
// and calls emit with each result in the order of stores. At most Workers stores are scanned or
// written at once (default: the number of CPUs, at most 8), and at most 2 × Workers held in
// memory (scanned, waiting to be emitted, or being rewritten; 4 × Workers with Apply: a
// rewrite waiting for the disk lets the next store be scanned), whatever the number or total
// size of the stores; those in memory hold at most WindowSites name sites together (a store
// with more is processed alone; see storeWeights). A store that cannot be read or rewritten is reported through its
// result; Process fails only when ctx is cancelled or emit returns an error. The returned
// Result names the run (empty when nothing was rewritten). A result is valid only during its
// emit: its plan's decisions and its snapshot's sites are reused for later stores once emit
// returned (a caller keeps what it needs by copying it). With Apply the runtime has one
// processor more while Process runs (raiseProcs: commits block in fsync holding theirs).
func Process(ctx context.Context, stores []store.Store, pol naming.Policy, opt ProcessOptions, emit func(*StoreResult) error) (*Result, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = min(runtime.NumCPU(), 8)
	}
	r := newRun(opt.ApplyOptions)
	var progMu sync.Mutex
	sopt := store.ScanOptions{Hash: opt.Hash || opt.Apply}
	if opt.Progress != nil {
		sopt.Progress = func(n int64) {
			progMu.Lock()
			defer progMu.Unlock()
			opt.Progress(n)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	window := 2 * workers
	if opt.Apply {
		window = applyWindow * workers
		defer raiseProcs()()
	}
	sw := &storeWeights{}
	var rels []Relocation
	emitErr := ordered(ctx, cancel, len(stores), workers, window,
		weights{limit: WindowSites, of: func(i int) int64 { return sw.estimate(stores[i]) }},
		func(i int, part func(*StoreResult, int64), slot *runSlot) *StoreResult {
			return processOne(fileio.WithCPUSlot(ctx, slot), stores[i], pol, opt, sopt, r, part,
				func(snap *store.Snapshot, sites int, held bool) {
					w := sw.scanned(snap, sites)
					if held {
						slot.Reweigh(w)
					}
				}, slot.Lighten)
		},
		// Stores not started when ctx ends are reported as cancelled.
		func(i int) *StoreResult { return &StoreResult{Store: stores[i], ScanErr: ctx.Err()} },
		func(res *StoreResult) error {
			if res.release != nil {
				defer res.release() // the result is valid only during emit
			}
			if ctx.Err() != nil {
				return nil // interrupted: the caller reports the interruption, not each store
			}
			if opt.Apply && opt.Relocate != nil && res.ScanErr == nil && (res.Batch == nil || res.Batch.Last) &&
				(res.Outcome == nil || res.Outcome.Err == nil) {
				ref := res.Store.Ref()
				if to, why := opt.Relocate(ref); to != "" {
					rels = append(rels, Relocation{Ref: ref, To: to, Why: why})
				}
			}
			return emit(res)
		})
	var moves []MoveOutcome
	if emitErr == nil && ctx.Err() == nil && len(rels) > 0 {
		moves = r.moveAll(ctx, rels)
	}
	out, err := r.finish(context.Cause(ctx))
	out.Moves = moves
	if emitErr != nil {
		return out, emitErr
	}
	if err != nil {
		return out, err // out still names the run: stores may have been rewritten
	}
	return out, context.Cause(ctx)
}

// processOne scans, plans and rewrites one store; part hands out the leading results of a
// store planned batch by batch (batch.go), the returned result is the store's last. scanned is
// called once the store is read, before it is planned: with the snapshot of a store scanned
// whole, or of a store.BatchScanner whose sites came in one batch (its Sites holds them all), or
// with the site count and size of one planned batch by batch (Sites nil, held: false). lighten
// lowers the weight the store holds until its last result is emitted to at most w sites (never
// raises it; runSlot.Lighten): a store planned batch by batch calls it once its scan is done,
// and again as its parts are emitted, with the sites its parts still hold.
func processOne(ctx context.Context, st store.Store, pol naming.Policy, opt ProcessOptions, sopt store.ScanOptions, r *run, part func(*StoreResult, int64),
	scanned func(snap *store.Snapshot, sites int, held bool), lighten func(w int64)) *StoreResult {
	if bs, ok := store.Batches(st); ok {
		return processBatches(ctx, st, bs, pol, opt, sopt, r, part, scanned, lighten)
	}
	res := &StoreResult{Store: st}
	snap, err := st.Scan(ctx, sopt)
	if err != nil {
		res.ScanErr = err
		return res
	}
	scanned(snap, len(snap.Sites), true)
	return planAndApply(ctx, st, snap, pol, opt, r, res)
}

// WindowSites bounds the name sites of the stores Process holds in memory at once (scanned,
// planned, being rewritten or waiting to be emitted): a store costs about 1 KB of memory per
// site from its scan to its emit (its Sites, plan, edits, and the report's copy; measured on
// a session of 70,000 dotted names: about 50 MB live, 130 MB peak RSS for fix --apply
// alone), so a few dense stores do not fill the window (6 such sessions: 275 MB before). A
// store with more sites than this runs alone. A variable for tests.
var WindowSites int64 = 24_000

// storeWeights gives Process's stores their weight in sites (see weights): before a store is
// scanned, an estimate from its size in bytes and the density (sites per byte) of the stores
// scanned before in this Process (every store read to its end counts, a store.BatchScanner's
// too), starting from priorSites per priorBytes; once it holds all its sites (scanned whole, or
// a store.BatchScanner whose sites came in one batch), its site count. A store.BatchScanner
// holds at most about BatchSites sites at once (batch.go): it weighs the estimate up to
// BatchSites, corrected only when its sites came in one batch. A store whose size cannot be
// read weighs 0 (its scan reports the error). Safe for concurrent use.
//
// Until 2026-12 a store.BatchScanner never counted into the density nor was corrected: make
// bench's dense JSONL sessions (2.75 MiB, ~6,300 sites each, one batch) each weighed BatchSites
// at the prior density for the whole run, so WindowSites held 2 of them where 3 fit.
type storeWeights struct {
	sites, bytes atomic.Int64 // of the stores scanned whole so far
}

// The density a store is estimated with before any was scanned: one site per 256 bytes
// (a dense session; the bench corpus of real sessions has one per 14 KB), worth 256 KiB of
// scanned stores: it fades after a few sessions.
const (
	priorSites = 1024
	priorBytes = 256 << 10
)

// estimate is st's weight before its scan.
func (w *storeWeights) estimate(st store.Store) int64 {
	fi, err := os.Stat(st.Ref().Path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	// size × sites / bytes in floating point: the product overflows int64 for a store of
	// ~100 GiB after ~10⁸ sites (a negative estimate would count as weighing nothing)
	est := int64(min(float64(fi.Size())*float64(w.sites.Load()+priorSites)/float64(w.bytes.Load()+priorBytes), math.MaxInt64/2))
	if _, ok := store.Batches(st); ok {
		est = min(est, int64(BatchSites))
	}
	return est
}

// scanned counts a store read to its end (its snapshot, sites found in it) into the density
// and returns its weight: sites.
func (w *storeWeights) scanned(snap *store.Snapshot, sites int) int64 {
	n := int64(sites)
	w.sites.Add(n)
	w.bytes.Add(snap.State.Size)
	return n
}

// planAndApply plans the whole snapshot of st into res and, with opt.Apply, checks it against
// opt.Planned (fix --plan) and rewrites it; shared by processOne and a store whose sites fit in
// one batch (processBatches).
func planAndApply(ctx context.Context, st store.Store, snap *store.Snapshot, pol naming.Policy, opt ProcessOptions, r *run, res *StoreResult) *StoreResult {
	plan := planStore(st, snap, pol, true)
	plan.calls = nil // only a next batch's checkPairsAcross reads it: not held until the emit
	res.Plan = plan
	if sites := res.release; sites != nil {
		res.release = func() { sites(); plan.release() }
	} else {
		res.release = plan.release
	}
	if pr, ok := notWritableProblem(snap, res.Plan.notWritten); ok {
		snap.Problems = append(snap.Problems, pr)
	}
	if pr, ok := opt.Guard.guard(res.Plan, storeFacts(snap.Ref.Path)); ok {
		snap.Problems = append(snap.Problems, pr)
	}
	if opt.Apply && opt.Planned != nil {
		if err := checkPlanned(opt.Planned, res.Plan); err != nil {
			res.Outcome = &Outcome{Ref: snap.Ref, Err: err}
			return res
		}
	}
	if opt.Apply && res.Plan.Count(naming.ActRewrite) > 0 && ctx.Err() == nil {
		o := r.apply(ctx, res.Plan)
		res.Outcome = &o
		if opt.Progress == nil && opt.ApplyOptions.Progress != nil {
			opt.ApplyOptions.Progress(snap.Ref)
		}
	}
	return res
}

// checkPlanned compares a store planned now with the reviewed plan (see ProcessOptions.Planned).
func checkPlanned(planned map[string]*PlannedStore, sp *StorePlan) error {
	b := NewPlanBuilder()
	b.Add(sp)
	return checkBuilt(planned, b, sp.Snap)
}

// checkBuilt is checkPlanned for a store planned in parts (b, see PlanBuilder).
func checkBuilt(planned map[string]*PlannedStore, b *PlanBuilder, snap *store.Snapshot) error {
	ps := planned[snap.Ref.Path]
	if ps == nil {
		if n := b.names; n > 0 {
			return &PlanChangedError{Path: snap.Ref.Path, Reason: fmt.Sprintf("not in the plan: nothing to rewrite when planned, now %d names", n)}
		}
		return nil
	}
	return ps.CheckBuilt(b, snap)
}
