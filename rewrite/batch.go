package rewrite

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// BatchSites is how many sites of a store.BatchScanner are held and planned at once: a store
// with more is planned batch by batch and gives several results (StoreResult.Batch), so
// memory does not grow with it. A variable for tests. A held site costs ~0.4 KB with its
// row label, call id and token (store/sqlite): at 50,000 the first batches of a large
// database made a live heap of ~39 MB and a scan's peak RSS ~90 MiB (100k-part bench
// database); at 10,000 the live heap stays under ~13 MB and the peak ~35 MiB.
var BatchSites = 10_000

// processBatches is processOne for a store.BatchScanner. Up to BatchSites sites it is
// processOne (one result, the same plan). Past that, each batch the store hands out is
// planned on its own and given to part; with Apply, the rewrite edits go to a spool file (a
// temp file, removed afterwards) and the store's BatchWriter applies them from it after the
// scan, in one transaction. What is checked across sites is then checked within a batch: a
// call and its response (checkPairs) and object keys (checkKeyClashes) in different batches
// are not compared.
func processBatches(ctx context.Context, st store.Store, bs store.BatchScanner, pol naming.Policy, opt ProcessOptions, sopt store.ScanOptions, r *run, part func(*StoreResult)) *StoreResult {
	res := &StoreResult{Store: st}
	var (
		parts int
		sp    *spool
		spErr error
	)
	defer func() {
		if sp != nil {
			sp.remove()
		}
	}()
	var pb *PlanBuilder // with opt.Planned: the parts, checked against the plan at the end
	if opt.Apply && opt.Planned != nil {
		pb = NewPlanBuilder()
	}
	out := func(head *store.Snapshot, sites []store.Site) {
		snap := &store.Snapshot{Ref: head.Ref, Agent: head.Agent, NotWritable: head.NotWritable, Sites: sites}
		plan := PlanStore(st, snap, pol)
		if pb != nil {
			pb.Add(plan)
		}
		if opt.Apply && spErr == nil {
			if sp == nil {
				sp, spErr = newSpool()
			}
			if spErr == nil {
				spErr = sp.add(plan.Edits())
			}
		}
		part(&StoreResult{Store: st, Plan: plan, Batch: &Batch{Index: parts}})
		parts++
	}
	// The batches are the store's to give (store.BatchScanner): held and planned as they are,
	// and joined (one copy) only when the first of them are planned together.
	var heldBatches [][]store.Site
	nHeld := 0
	join := func() []store.Site {
		if len(heldBatches) == 1 {
			return heldBatches[0]
		}
		all := make([]store.Site, 0, nHeld)
		for _, b := range heldBatches {
			all = append(all, b...)
		}
		return all
	}
	snap, err := bs.ScanBatches(ctx, sopt, func(head *store.Snapshot, sites []store.Site) error {
		if parts == 0 && nHeld+len(sites) <= BatchSites {
			heldBatches = append(heldBatches, sites)
			nHeld += len(sites)
			return nil
		}
		if heldBatches != nil {
			out(head, join())
			heldBatches, nHeld = nil, 0
		}
		out(head, sites)
		return nil
	})
	if err != nil {
		res.ScanErr = err
		if parts > 0 {
			res.Batch = &Batch{Index: parts, Last: true}
		}
		return res
	}
	if parts == 0 {
		if heldBatches != nil {
			snap.Sites = join()
		}
		return planAndApply(ctx, st, snap, pol, opt, r, res)
	}
	res.Plan = &StorePlan{Store: st, Snap: snap}
	res.Batch = &Batch{Index: parts, Last: true}
	if pb != nil && ctx.Err() == nil {
		if err := checkBuilt(opt.Planned, pb, snap); err != nil {
			res.Outcome = &Outcome{Ref: snap.Ref, Err: err}
			return res
		}
	}
	if !opt.Apply || ctx.Err() != nil || (sp == nil && spErr == nil) || (sp != nil && sp.edits == 0) {
		return res
	}
	var o Outcome
	w, ok := st.(store.BatchWriter)
	switch {
	case spErr != nil:
		o = Outcome{Ref: snap.Ref, Err: fmt.Errorf("%s: keep the plan on disk: %w", snap.Ref.Path, spErr)}
	case !ok:
		o = Outcome{Ref: snap.Ref, Err: fmt.Errorf("%s: %w: the %s backend cannot rewrite in batches", snap.Ref.Path, store.ErrNotWritable, snap.Ref.Kind)}
	default:
		o = r.applyWith(snap.Ref, func(seq int) (Outcome, fileRef) {
			return applyEdits(ctx, snap.Ref, sp.renames(), sp.names, seq, r.dir, r.j, r.opt,
				func(ctx context.Context, aopt store.ApplyOptions) (*store.Change, error) {
					next, err := sp.reader()
					if err != nil {
						return nil, err
					}
					return w.ApplyBatches(ctx, snap, next, aopt)
				})
		})
	}
	res.Outcome = &o
	if opt.Progress == nil && opt.ApplyOptions.Progress != nil {
		opt.ApplyOptions.Progress(snap.Ref)
	}
	return res
}

// spool keeps the rewrite edits of a store planned batch by batch on disk (gob, one value
// per batch), with the counts the run records (renames, names changed).
type spool struct {
	f      *os.File
	w      *bufio.Writer
	enc    *gob.Encoder
	edits  int
	names  int
	counts map[[2]string]int
	groups map[string]bool
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "sessionfix-plan-*.gob")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	return &spool{f: f, w: w, enc: gob.NewEncoder(w), counts: map[[2]string]int{}, groups: map[string]bool{}}, nil
}

func (s *spool) add(edits []store.Edit) error {
	if len(edits) == 0 {
		return nil
	}
	for _, e := range edits {
		s.counts[[2]string{e.Site.Name, e.New}]++
		if g := e.Site.Group; g != "" {
			if s.groups[g] {
				continue
			}
			s.groups[g] = true // groups never span batches: a record is never split
		}
		s.names++
	}
	s.edits += len(edits)
	return s.enc.Encode(edits)
}

// renames is FileEntry.Renames of the spooled edits.
func (s *spool) renames() []Rename {
	out := make([]Rename, 0, len(s.counts))
	for k, n := range s.counts {
		out = append(out, Rename{Old: k[0], New: k[1], Count: n})
	}
	sortRenames(out)
	return out
}

// reader flushes the spool and returns a function reading it back batch by batch (io.EOF at
// the end).
func (s *spool) reader() (func() ([]store.Edit, error), error) {
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	dec := gob.NewDecoder(bufio.NewReaderSize(s.f, 256<<10))
	return func() ([]store.Edit, error) {
		var edits []store.Edit
		if err := dec.Decode(&edits); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read the plan back from %s: %w", s.f.Name(), err)
		}
		return edits, nil
	}, nil
}

func (s *spool) remove() {
	s.f.Close()
	os.Remove(s.f.Name())
}
