package rewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/freelist"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// ApplyOptions tunes Apply.
type ApplyOptions struct {
	StateDir string
	Command  string
	// Roots are the paths the run was asked to fix; undo restores only stores under them (see
	// runlog.CheckRun). Empty: each rewritten store is recorded as its own root.
	Roots []string
	Now   func() time.Time
	// Workers bounds parallel rewrites (default 2: rewriting is I/O bound).
	Workers int
	// Progress is called once per store done.
	Progress func(store.Ref)
	// Profile is the --profile the stores were read with (nil: none), recorded in the manifest.
	Profile *runlog.RunProfile
	// Guard, when set (fix; its dry run too), checks each store's file before it is planned
	// for a rewrite: another user's or read-only (FileGuard). nil: no such check (scan, check).
	Guard *FileGuard
}

// Outcome is what happened to one planned store.
type Outcome struct {
	Ref    store.Ref
	Edits  int
	Change *store.Change
	Err    error
}

// InUse reports whether the store was refused because another process uses it.
func (o Outcome) InUse() bool { return errors.Is(o.Err, store.ErrInUse) }

// Result is the result of Apply.
type Result struct {
	RunID string
	Dir   string
	// Manifest is the run's manifest without its file entries (Files is nil: they are
	// streamed to manifest.json, not held in memory; runlog.ReadRun(Dir) reads them back).
	Manifest *runlog.Manifest
	// Files is how many rewritten stores the manifest records.
	Files    int
	Outcomes []Outcome
	// Moves are the moves the run made or tried (ProcessOptions.Relocate), in order.
	Moves []MoveOutcome
}

// Committed reports whether the store was rewritten (Change set): Err is then an error that
// happened after the new content was in place (a *fileio.CommittedError), or nil.
func (o Outcome) Committed() bool { return o.Change != nil }

// Apply rewrites every store of the plan that has rewrite decisions, each through its
// store.Writer, keeping a backup of each original in a new run directory
// <StateDir>/runs/<run-id>/ with a journal and, at the end, manifest.json. A store that is in
// use or fails is skipped and recorded; the others go on. Apply creates no run directory when
// the plan has nothing to rewrite (Result.RunID is then empty). The runtime has one processor
// more while it runs (raiseProcs).
func Apply(ctx context.Context, p *Plan, opt ApplyOptions) (*Result, error) {
	var work []*StorePlan
	for _, sp := range p.Stores {
		if sp.Count(naming.ActRewrite) > 0 {
			work = append(work, sp)
		}
	}
	r := newRun(opt)
	workers := opt.Workers
	if workers <= 0 {
		workers = 2
	}
	outcomes := make([]Outcome, 0, len(work))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer raiseProcs()()
	// No bound by weight: the plan's sites are all in memory already.
	_ = ordered(ctx, cancel, len(work), workers, applyWindow*workers, weights{},
		func(i int, _ func(Outcome, int64), slot *runSlot) Outcome {
			o := r.apply(fileio.WithCPUSlot(ctx, slot), work[i])
			if opt.Progress != nil {
				opt.Progress(work[i].Snap.Ref)
			}
			return o
		},
		func(i int) Outcome { return Outcome{Ref: work[i].Snap.Ref, Err: ctx.Err()} },
		func(o Outcome) error { outcomes = append(outcomes, o); return nil })
	res, err := r.finish(ctx.Err())
	res.Outcomes = outcomes
	return res, err
}

// applyWindow × workers rewrites may be in flight: workers of them writing, the others
// waiting for their fsyncs and rename (measured on a 2-core machine: 4 gave a fifth less wall
// time than 2 on the 256 MiB bench corpus, 8 no more than 4; about 1 MB of buffers each).
const applyWindow = 4

// run is one apply run as rewrite drives it: its record (runlog.Run: run directory, journal,
// manifest) and the options its stores are rewritten with.
type run struct {
	rec *runlog.Run
	opt ApplyOptions
}

func newRun(opt ApplyOptions) *run {
	return &run{opt: opt, rec: runlog.New(runlog.Options{StateDir: opt.StateDir, Command: opt.Command, Roots: opt.Roots, Now: opt.Now, Profile: opt.Profile})}
}

// apply rewrites one planned store and records the outcome in the run.
func (r *run) apply(ctx context.Context, sp *StorePlan) Outcome {
	ref := sp.Snap.Ref
	w, ok := sp.Store.(store.Writer)
	if !ok {
		return Outcome{Ref: ref, Err: r.rec.Refuse(ref, fmt.Errorf("%s: %w: the %s backend cannot rewrite", ref.Path, store.ErrNotWritable, ref.Kind))}
	}
	if sw, ok := sp.Store.(store.SpliceWriter); ok && sp.rewritesSorted() {
		// Handed out from the decisions a few hundred at a time, not copied all at once.
		ren, names := sp.renames()
		return r.rewrite(ctx, ref, ren, names,
			func(ctx context.Context, aopt store.ApplyOptions) (*store.Change, error) {
				next, done := sp.editBatches()
				defer done()
				return sw.ApplyBatches(ctx, sp.Snap, next, aopt)
			})
	}
	edits := sp.Edits()
	return r.rewrite(ctx, ref, renames(edits), NameCount(edits),
		func(ctx context.Context, aopt store.ApplyOptions) (*store.Change, error) {
			return w.Apply(ctx, sp.Snap, edits, aopt)
		})
}

// editBatch is how many edits editBatches hands out at once (64 KB of store.Edit).
const editBatch = 256

// editBatches returns the edits of sp's rewrite decisions (Edits, in the plan's order, each
// with only the fields of its site a store.SpliceWriter reads) as a store.BatchWriter reads
// them (next): editBatch at a time in one reused slice, io.EOF after
// the last; done gives the slice back (to freeEdits) once the store no longer reads it. For a
// store.SpliceWriter, which holds one batch at a time and takes batches cut anywhere: the
// edits of a dense session, ~250 bytes each, were a fifth of the bytes fix --apply allocated
// on make bench's dense corpus.
func (sp *StorePlan) editBatches() (next func() ([]store.Edit, error), done func()) {
	var buf []store.Edit
	i := 0
	next = func() ([]store.Edit, error) {
		buf = buf[:0]
		for ; i < len(sp.Decisions) && len(buf) < editBatch; i++ {
			if d := &sp.Decisions[i]; d.Action == naming.ActRewrite {
				if buf == nil {
					buf = freeEdits.Get(editBatch)
				}
				// Only what a store.SpliceWriter reads, as the spool keeps (addSeq): a copy of the
				// whole site was 248 bytes and a dozen pointers, for every name rewritten.
				s := d.Site
				buf = append(buf, store.Edit{Site: store.Site{Loc: store.Loc{Line: s.Loc.Line, Offset: s.Loc.Offset}, Raw: s.Raw, Field: s.Field}, New: d.New})
			}
		}
		if len(buf) == 0 {
			return nil, io.EOF
		}
		return buf, nil
	}
	return next, func() { freeEdits.Put(buf); buf = nil }
}

// freeEdits keeps editBatches's slices for the next stores (one per rewrite in flight).
var freeEdits = freelist.List[store.Edit]{Max: 8}

// rewritesSorted reports whether sp's rewrite decisions are in offset order (a store's
// Apply sorts them otherwise).
func (sp *StorePlan) rewritesSorted() bool {
	last := int64(-1 << 63)
	for i := range sp.Decisions {
		if d := &sp.Decisions[i]; d.Action == naming.ActRewrite {
			if d.Site.Loc.Offset < last {
				return false
			}
			last = d.Site.Loc.Offset
		}
	}
	return true
}

// renames is renames(sp.Edits()) and NameCount(sp.Edits()) without the copy.
func (sp *StorePlan) renames() ([]runlog.Rename, int) {
	var rc renameCounter
	for i := range sp.Decisions {
		if d := &sp.Decisions[i]; d.Action == naming.ActRewrite {
			rc.add(d.Site, d.New)
		}
	}
	return rc.renames(), rc.names
}

// renameCounter counts edits as runlog.FileEntry records them: each old → new pair
// (runlog.Rename) and the names changed (the sites of one Group are one name, see NameCount).
type renameCounter struct {
	counts map[[2]string]int
	groups map[string]bool
	names  int
}

func (rc *renameCounter) add(st *store.Site, new string) {
	if rc.counts == nil {
		rc.counts, rc.groups = map[[2]string]int{}, map[string]bool{}
	}
	rc.counts[[2]string{st.Name, new}]++
	if g := st.Group; g != "" {
		if rc.groups[g] {
			return
		}
		rc.groups[g] = true
	}
	rc.names++
}

// renames returns the counted pairs, sorted.
func (rc *renameCounter) renames() []runlog.Rename {
	out := make([]runlog.Rename, 0, len(rc.counts))
	for k, n := range rc.counts {
		out = append(out, runlog.Rename{Old: k[0], New: k[1], Count: n})
	}
	sortRenames(out)
	return out
}

// rewrite runs one store's rewrite through the run's record (runlog.Run.Rewrite): ren and
// names describe the edits (FileEntry.Renames, names changed). It returns once the rename is
// durable (durable), so the outcome can be reported as it is.
func (r *run) rewrite(ctx context.Context, ref store.Ref, ren []runlog.Rename, names int,
	apply func(context.Context, store.ApplyOptions) (*store.Change, error)) Outcome {
	ch, err := r.rec.Rewrite(ctx, ref, ren, names, apply)
	o := Outcome{Ref: ref, Change: ch, Err: err}
	if ch != nil {
		o.Edits = ch.Edits
	}
	return r.durable(o)
}

// durable returns o once its store's rename is durable (runlog.Run.Durable: one sync covers
// every rename made before it started, the other stores' rewritten meanwhile too); a failure
// becomes o's error (the store is rewritten: Change stays). It is called by the worker that
// rewrote the store, right after the rename, not where results are emitted: there, in store
// order, each store's directory fsync held up every later result (~0.7 ms median, 3 ms p90,
// ~250 ms a run on make bench's dense corpus, while the finished stores after it held their
// window weight), and the next directories waited for the one before.
func (r *run) durable(o Outcome) Outcome {
	if o.Change == nil {
		return o
	}
	if err := r.rec.Durable(o.Ref.Path); err != nil && o.Err == nil {
		o.Err = err
	}
	return o
}

// finish finishes the run's record (runlog.Run.Finish).
func (r *run) finish(interrupted error) (*Result, error) {
	f, err := r.rec.Finish(interrupted)
	return &Result{RunID: f.RunID, Dir: f.Dir, Manifest: f.Manifest, Files: f.Files}, err
}

func renames(edits []store.Edit) []runlog.Rename {
	counts := map[[2]string]int{}
	for _, e := range edits {
		counts[[2]string{e.Site.Name, e.New}]++
	}
	out := make([]runlog.Rename, 0, len(counts))
	for k, n := range counts {
		out = append(out, runlog.Rename{Old: k[0], New: k[1], Count: n})
	}
	sortRenames(out)
	return out
}

func sortRenames(out []runlog.Rename) {
	sort.Slice(out, func(i, j int) bool {
		return out[i].Old < out[j].Old || (out[i].Old == out[j].Old && out[i].New < out[j].New)
	})
}
