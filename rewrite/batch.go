package rewrite

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/runlog"
	"github.com/sessionfix/sessionfix/store"
)

// BatchSites is how many sites of a store.BatchScanner are held and planned at once: a store
// with more is planned batch by batch and gives several results (StoreResult.Batch), so
// memory does not grow with it. A variable for tests. A held site costs ~0.4 KB with its
// row label, call id and token (engine/sqlite): at 50,000 the first batches of a large
// database made a live heap of ~39 MB and a scan's peak RSS ~90 MiB (100k-part bench
// database); at 10,000 the live heap stays under ~13 MB and the peak ~35 MiB.
var BatchSites = 10_000

// processBatches is processOne for a store.BatchScanner. Up to BatchSites sites it is
// processOne (one result, the same plan). Past that, each batch the store hands out is
// planned on its own and given to part; with Apply, the rewrite edits go to a spool file (a
// temp file, unlinked at once: newSpool) and the store's BatchWriter applies them from it after the
// scan, in one transaction. What is checked across sites is then checked within a batch: object
// keys (checkKeyClashes) in different batches are not compared, and a call and its response
// (checkPairs) only when they are in one batch or the response's batch follows the call's
// (checkPairsAcross).
//
// scanned is processOne's: called once the store was read to its end, before its last
// planning. lighten is processOne's too: once a store.SpliceWriter planned in parts was read
// to its end (nothing more to plan: its last batch is no longer kept for checkPairsAcross), its
// weight is lowered to the sites of its parts not yet emitted, and lowered again as they are
// emitted, so that its rewrite from the spool and the wait for its fsyncs hold no weight for
// sites given back (make bench's dense corpus: 35 sessions of two parts each held BatchSites,
// 10,000 of WindowSites' 24,000, through their rewrite and commit).
func processBatches(ctx context.Context, st store.Store, bs store.BatchScanner, pol naming.Policy, opt ProcessOptions, sopt store.ScanOptions, r *run, part func(*StoreResult, int64),
	scanned func(snap *store.Snapshot, sites int, held bool), lighten func(w int64)) *StoreResult {
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
	var prev *StorePlan // the batch planned last: a response's call may be in it (checkPairsAcross)
	rel, _ := st.(siteReleaser)
	var prevHold *heldSites // prev's sites, given back once prev is replaced and emitted
	defer func() { prevHold.done() }()
	facts := storeFacts(st.Ref().Path)
	_, splices := st.(store.SpliceWriter) // the spool keeps what its ApplyBatches reads

	var held partsHeld         // the sites of the parts handed out and not yet emitted (lighten)
	var guarded *store.Problem // the guard's problem, reported with the store's last result
	notWritten := 0            // rewrites held because the store must not be written: notWritableProblem, with the last result
	out := func(head *store.Snapshot, sites []store.Site) {
		snap := &store.Snapshot{Ref: head.Ref, Agent: head.Agent, NotWritable: head.NotWritable, Sites: sites}
		plan := planStore(st, snap, pol, true)
		notWritten += plan.notWritten
		if pr, ok := opt.Guard.guard(plan, facts); ok && guarded == nil {
			guarded = &pr
		}
		checkPairsAcross(prev, plan)
		if prev != nil {
			prev.calls = nil // compared with its next batch: not held until its emit (before prevHold.done: a release writes it too)
		}
		hold := &heldSites{sites: sites, rel: rel, plan: plan}
		hold.refs.Store(2) // prev, and the result until it was emitted
		prevHold.done()
		prev, prevHold = plan, hold
		if pb != nil {
			pb.Add(plan)
		}
		if opt.Apply && spErr == nil {
			if sp == nil {
				sp, spErr = newSpool(splices)
			}
			if spErr == nil {
				spErr = sp.addPlan(plan)
			}
		}
		n := int64(len(sites))
		held.add(n)
		part(&StoreResult{Store: st, Plan: plan, Batch: &Batch{Index: parts}, release: func() { hold.done(); held.emitted(n) }}, n)
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
		all := slices.Concat(heldBatches...)
		if rel != nil {
			for _, b := range heldBatches {
				rel.ReleaseSites(b) // copied: nothing points into them
			}
		}
		return all
	}
	total := 0 // sites handed out
	snap, err := bs.ScanBatches(ctx, sopt, func(head *store.Snapshot, sites []store.Site) error {
		total += len(sites)
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
		scanned(snap, len(snap.Sites), true)
		if sites := snap.Sites; rel != nil && sites != nil {
			res.release = func() { rel.ReleaseSites(sites) }
		}
		return planAndApply(ctx, st, snap, pol, opt, r, res)
	}
	scanned(snap, total, false)
	prevHold.done() // planned: no batch is compared with it any more
	prevHold = nil
	if splices {
		// Its rewrite reads the spool back a few hundred edits at a time (editBatch): it
		// holds no batch of sites. Another BatchWriter's reads a whole batch at once
		// (spool.reader): it keeps its weight.
		held.scanned(lighten)
	}
	if guarded != nil {
		snap.Problems = append(snap.Problems, *guarded)
	}
	if pr, ok := notWritableProblem(snap, notWritten); ok {
		snap.Problems = append(snap.Problems, pr)
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
		o = r.rewrite(ctx, snap.Ref, sp.renames(), sp.rc.names,
			func(ctx context.Context, aopt store.ApplyOptions) (*store.Change, error) {
				next, err := sp.reader()
				if err != nil {
					return nil, err
				}
				return w.ApplyBatches(ctx, snap, next, aopt)
			})
	}
	res.Outcome = &o
	if opt.Progress == nil && opt.ApplyOptions.Progress != nil {
		opt.ApplyOptions.Progress(snap.Ref)
	}
	return res
}

// partsHeld counts the sites of a store's parts handed out and not yet emitted (processBatches)
// and, once the store was read to its end (scanned), lowers the store's weight to them each
// time they change (lighten: never raises it). A part's sites are given back when it was
// emitted and the store's scan is done, so the count is what the store holds from then on.
type partsHeld struct {
	mu      sync.Mutex
	sites   int64
	lighten func(int64) // set by scanned
}

func (h *partsHeld) add(n int64) {
	h.mu.Lock()
	h.sites += n
	h.mu.Unlock()
}

// emitted is called (by the emitting goroutine) once a part of n sites was emitted.
func (h *partsHeld) emitted(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sites -= n
	if h.lighten != nil {
		h.lighten(h.sites)
	}
}

// scanned lowers the weight to the parts not yet emitted now and from then on.
func (h *partsHeld) scanned(lighten func(int64)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lighten = lighten
	lighten(h.sites)
}

// siteReleaser is a store whose scan's Sites slices can be handed back for reuse once nothing
// points into them any more (engine/jsonl: (*Store).ReleaseSites).
type siteReleaser interface {
	ReleaseSites([]store.Site)
}

// heldSites is one batch's sites and plan with the holders that still point into them (its
// plan as processBatches's prev, its result until emitted): the last done gives them back, the
// sites to their store when it takes them (rel not nil), the plan's decisions to
// freeDecisions.
type heldSites struct {
	sites []store.Site
	rel   siteReleaser
	plan  *StorePlan
	refs  atomic.Int32
}

// done drops one holder; h may be nil (nothing to give back).
func (h *heldSites) done() {
	if h != nil && h.refs.Add(-1) == 0 {
		if h.rel != nil {
			h.rel.ReleaseSites(h.sites)
		}
		h.plan.release()
	}
}

// spool keeps the rewrite edits of a store planned batch by batch on disk (one record per
// batch, appendEdits's encoding: every field of each store.Edit, or for a store.SpliceWriter
// only the fields it reads), with the counts the run records (renames, names changed).
type spool struct {
	f      *os.File
	named  bool // the file still has its name in the temp directory (remove unlinks it)
	closed bool
	w      *bufio.Writer // from spoolWriters, given back by close
	r      *bufio.Reader // the reader's, from spoolReaders (nil until reader), given back by close
	d      *editDecoder  // the last reader's
	edits  int
	rc     renameCounter
	// splice: the edits are for a store.SpliceWriter: only the fields it reads are kept, and
	// the batches read back share one slice (it holds one batch at a time).
	splice bool
}

// newSpool creates the spool in the temp directory and unlinks it at once where the system lets
// an open file lose its name (not Windows): a run killed at any instant leaves no spool behind
// (one of a 10M-part database is ~330 MB), and its pages go when it is closed, without ever being
// written to the disk if the kernel had not yet.
func newSpool(splice bool) (*spool, error) {
	f, err := os.CreateTemp("", "sessionfix-plan-*.spool")
	if err != nil {
		return nil, err
	}
	named := os.Remove(f.Name()) != nil
	w := getSpoolBuf(spoolWriters, func() *bufio.Writer { return bufio.NewWriterSize(nil, spoolBuf) })
	w.Reset(f)
	return &spool{f: f, named: named, w: w, splice: splice}, nil
}

// spoolBuf is the size of a spool's write and read buffers. spoolWriters and spoolReaders
// keep them for the next spools: a store planned in parts makes one spool, and make bench's
// dense corpus has 35 such sessions of 10,000–12,000 sites; with their encoding and decoding
// buffers they were ~40 % of the bytes fix --apply allocated on it (each spool allocated
// ~2 MB).
//
// They are free lists of spoolsKept buffers, not sync.Pools: a garbage collection empties a
// sync.Pool (in two), and under cmd/sessionfix's memory limit fix --apply on that corpus
// collects every few MB: a spool after one allocated its two buffers again (6 MB a run).
const spoolBuf = 256 << 10

const spoolsKept = 2

var (
	spoolWriters = make(chan *bufio.Writer, spoolsKept)
	spoolReaders = make(chan *bufio.Reader, spoolsKept)
)

// getSpoolBuf takes a buffer from the free list free, or makes one.
func getSpoolBuf[T any](free chan T, fresh func() T) T {
	select {
	case b := <-free:
		return b
	default:
		return fresh()
	}
}

// putSpoolBuf gives b back to the free list free (dropped when it is full).
func putSpoolBuf[T any](free chan T, b T) {
	select {
	case free <- b:
	default:
	}
}

// addPlan spools the edits of sp's rewrite decisions (sp.Edits(), without the copy).
func (s *spool) addPlan(sp *StorePlan) error {
	return s.addSeq(func(yield func(*store.Site, string)) {
		for i := range sp.Decisions {
			if d := &sp.Decisions[i]; d.Action == naming.ActRewrite {
				yield(d.Site, d.New)
			}
		}
	})
}

// add spools one batch of edits (addSeq).
func (s *spool) add(edits []store.Edit) error {
	return s.addSeq(func(yield func(*store.Site, string)) {
		for i := range edits {
			yield(&edits[i].Site, edits[i].New)
		}
	})
}

// addSeq spools one batch, the edits seq yields (each site and its new name; called twice),
// and counts them (groups never span batches: a record is never split). A store.SpliceWriter's
// spool keeps of each site only what the store reads (Loc.Offset, Loc.Line, Raw, Field): a
// dense session's paths and names were most of its bytes.
func (s *spool) addSeq(seq func(yield func(*store.Site, string))) error {
	n, raw := 0, 0
	seq(func(st *store.Site, _ string) { n, raw = n+1, raw+len(st.Raw) })
	if n == 0 {
		return nil
	}
	// Each piece is encoded into the writer's free buffer (AvailableBuffer), not into a
	// buffer of the whole batch that is then copied.
	_, err := s.w.Write(appendBatchHead(s.w.AvailableBuffer(), n, raw))
	first, prevRow := true, ""
	seq(func(st *store.Site, new string) {
		s.rc.add(st, new)
		if s.splice {
			lean := store.Site{Loc: store.Loc{Line: st.Loc.Line, Offset: st.Loc.Offset}, Raw: st.Raw, Field: st.Field}
			st = &lean
		}
		if err == nil {
			_, err = s.w.Write(appendEdit(s.w.AvailableBuffer(), st, new, !first && st.Loc.Row == prevRow))
		}
		first, prevRow = false, st.Loc.Row
	})
	s.edits += n
	return err
}

// renames is FileEntry.Renames of the spooled edits.
func (s *spool) renames() []runlog.Rename { return s.rc.renames() }

// reader flushes the spool and returns a function reading it back batch by batch (io.EOF at
// the end): each batch as it was added, field for field.
func (s *spool) reader() (func() ([]store.Edit, error), error) {
	if s.closed {
		return nil, fmt.Errorf("read the plan back from %s: %w", s.f.Name(), os.ErrClosed)
	}
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("keep the plan on disk: %w", err) // as an add that failed says
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read the plan back: %w", err)
	}
	if s.r == nil {
		s.r = getSpoolBuf(spoolReaders, func() *bufio.Reader { return bufio.NewReaderSize(nil, spoolBuf) })
	}
	s.r.Reset(s.f)
	if s.d != nil {
		s.d.release()
	}
	d := &editDecoder{r: s.r, reuse: s.splice}
	s.d = d
	return func() ([]store.Edit, error) {
		if s.closed {
			return nil, io.EOF
		}
		edits, err := d.batch()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// Read to its end: closed now, so an unlinked spool's pages are freed before the
				// store's check and commit, which need the page cache for the database.
				s.close()
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read the plan back from %s: %w", s.f.Name(), err)
		}
		return edits, nil
	}, nil
}

// close closes the spool's file and gives its buffers back (to spoolWriters, spoolReaders).
func (s *spool) close() {
	if !s.closed {
		s.closed = true
		s.f.Close()
		s.w.Reset(nil)
		putSpoolBuf(spoolWriters, s.w)
		s.w = nil
		if s.d != nil {
			s.d.release()
		}
		if s.r != nil {
			s.r.Reset(nil)
			putSpoolBuf(spoolReaders, s.r)
			s.r = nil
		}
	}
}

// remove closes the spool and removes its file if it still has a name.
func (s *spool) remove() {
	s.close()
	if s.named {
		os.Remove(s.f.Name())
	}
}

// The spool's encoding of a batch: uvarint edit count, uvarint byte length of the Raw tokens
// of the batch, then per edit a uvarint of flags (the spool* bits: which optional fields
// follow, Key, ReadOnly, and whether Loc.Row is the previous edit's), then Loc.Row (unless the
// same), varint Offset, varint Line and RowID (when flagged), varint RowVersion and RowSum (when flagged), Kind, Path, Name and New, Units
// (uvarint count, uvarint units), Raw, CallID, Server, Group, Field and Scope (when flagged).
// A string or byte slice is a uvarint length and its bytes. It replaces encoding/gob, whose
// reflection over every field was 2.5% of the CPU of fix --apply on the 100k-part SQLite
// bench database; nil and empty Units and Raw stay apart (gob made both nil).
const (
	spoolLine = 1 << iota
	spoolRowID
	spoolUnits
	spoolRaw
	spoolKey
	spoolCallID
	spoolServer
	spoolGroup
	spoolField
	spoolScope
	spoolReadOnly
	spoolSameRow
	spoolRowVersion // Loc.RowVersion and Loc.RowSum (a database row's state when read)
)

func appendEdits(b []byte, edits []store.Edit) []byte {
	raw := 0
	for i := range edits {
		raw += len(edits[i].Site.Raw)
	}
	b = appendBatchHead(b, len(edits), raw)
	for i := range edits {
		b = appendEdit(b, &edits[i].Site, edits[i].New, i > 0 && edits[i].Site.Loc.Row == edits[i-1].Site.Loc.Row)
	}
	return b
}

// appendBatchHead appends the head of a batch of n edits whose Raw tokens are raw bytes.
func appendBatchHead(b []byte, n, raw int) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(n)), uint64(raw))
}

// appendEdit appends one edit of a batch: st and its new name; sameRow says st's Loc.Row is the
// edit's before it.
func appendEdit(b []byte, st *store.Site, new string, sameRow bool) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	var fl uint64
	set := func(bit uint64, on bool) {
		if on {
			fl |= bit
		}
	}
	set(spoolLine, st.Loc.Line != 0)
	set(spoolRowID, st.Loc.RowID != 0)
	set(spoolUnits, st.Units != nil)
	set(spoolRaw, st.Raw != nil)
	set(spoolKey, st.Key)
	set(spoolCallID, st.CallID != "")
	set(spoolServer, st.Server != "")
	set(spoolGroup, st.Group != "")
	set(spoolField, st.Field != "")
	set(spoolScope, st.Scope != "")
	set(spoolReadOnly, st.ReadOnly)
	set(spoolSameRow, sameRow)
	set(spoolRowVersion, st.Loc.RowVersion != 0 || st.Loc.RowSum != 0)
	b = binary.AppendUvarint(b, fl)
	if fl&spoolSameRow == 0 {
		b = str(b, st.Loc.Row)
	}
	b = binary.AppendVarint(b, st.Loc.Offset)
	if fl&spoolLine != 0 {
		b = binary.AppendVarint(b, st.Loc.Line)
	}
	if fl&spoolRowID != 0 {
		b = binary.AppendVarint(b, st.Loc.RowID)
	}
	if fl&spoolRowVersion != 0 {
		b = binary.AppendVarint(b, st.Loc.RowVersion)
		b = binary.AppendVarint(b, st.Loc.RowSum)
	}
	b = str(b, string(st.Kind))
	b = str(b, st.Path)
	b = str(b, st.Name)
	b = str(b, new)
	if fl&spoolUnits != 0 {
		b = binary.AppendUvarint(b, uint64(len(st.Units)))
		for _, u := range st.Units {
			b = binary.AppendUvarint(b, uint64(u))
		}
	}
	if fl&spoolRaw != 0 {
		b = append(binary.AppendUvarint(b, uint64(len(st.Raw))), st.Raw...)
	}
	for _, f := range []struct {
		bit uint64
		s   string
	}{{spoolCallID, st.CallID}, {spoolServer, st.Server}, {spoolGroup, st.Group}, {spoolField, st.Field}, {spoolScope, st.Scope}} {
		if fl&f.bit != 0 {
			b = str(b, f.s)
		}
	}
	return b
}

// editDecoder reads the batches appendEdits wrote. The strings that repeat across edits
// (kind, path, old and new name) are interned, at most spoolInterned of them at a time.
type editDecoder struct {
	r      *bufio.Reader
	intern map[string]string
	buf    []byte
	// reuse: for a reader that holds one batch at a time and takes batches cut anywhere
	// (store.SpliceWriter): each batch is read spoolChunk edits at a time, into the slices of
	// the chunk before (edits, from freeEdits; raw), so a batch of 10,000 edits needs 64 KB,
	// not 2.6 MB.
	reuse bool
	edits []store.Edit
	raw   []byte
	// left and rawLeft are what the batch being read still holds: edits, and bytes of Raw
	// tokens; prevRow is the Loc.Row of its last edit read.
	left, rawLeft uint64
	prevRow       string
}

// spoolChunk is how many edits editDecoder.batch reads back at once with reuse.
const spoolChunk = editBatch

const spoolInterned = 4096

// batch reads the next batch (with reuse: the next spoolChunk edits or fewer, a batch read in
// chunks): io.EOF when none is left, io.ErrUnexpectedEOF when the spool ends inside one. The
// Raw tokens of a batch share one new allocation (with reuse: of a chunk, the one before's).
func (d *editDecoder) batch() ([]store.Edit, error) {
	cut := func(err error) error {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	first := d.left == 0 // the chunk starts a batch
	if first {
		n, err := binary.ReadUvarint(d.r)
		if err != nil {
			return nil, err // io.EOF before a batch: the end
		}
		rawLen, err := binary.ReadUvarint(d.r)
		if err != nil {
			return nil, cut(err)
		}
		const limit = 1 << 40
		if n > limit || rawLen > limit {
			return nil, fmt.Errorf("a batch of %d edits, %d bytes of tokens: not a spool", n, rawLen)
		}
		d.left, d.rawLeft, d.prevRow = n, rawLen, ""
	}
	var raw []byte
	var edits []store.Edit
	if d.reuse {
		if d.edits == nil {
			d.edits = freeEdits.Get(spoolChunk)
		}
		k := min(d.left, uint64(cap(d.edits)))
		raw, edits = d.raw[:0], d.edits[:k]
		clear(edits)
	} else {
		raw = make([]byte, 0, d.rawLeft)
		edits = make([]store.Edit, d.left)
	}
	d.left -= uint64(len(edits))
	for i := range edits {
		e := &edits[i]
		st := &e.Site
		fl, err := binary.ReadUvarint(d.r)
		if err != nil {
			return nil, cut(err)
		}
		if fl&spoolSameRow != 0 {
			if first && i == 0 {
				return nil, fmt.Errorf("edit 1 of a batch has no row before it: not a spool")
			}
			st.Loc.Row = d.prevRow
		} else if st.Loc.Row, err = d.str(false); err != nil {
			return nil, cut(err)
		}
		d.prevRow = st.Loc.Row
		if st.Loc.Offset, err = binary.ReadVarint(d.r); err != nil {
			return nil, cut(err)
		}
		if fl&spoolLine != 0 {
			if st.Loc.Line, err = binary.ReadVarint(d.r); err != nil {
				return nil, cut(err)
			}
		}
		if fl&spoolRowID != 0 {
			if st.Loc.RowID, err = binary.ReadVarint(d.r); err != nil {
				return nil, cut(err)
			}
		}
		if fl&spoolRowVersion != 0 {
			if st.Loc.RowVersion, err = binary.ReadVarint(d.r); err != nil {
				return nil, cut(err)
			}
			if st.Loc.RowSum, err = binary.ReadVarint(d.r); err != nil {
				return nil, cut(err)
			}
		}
		var kind string
		for _, p := range []*string{&kind, &st.Path, &st.Name, &e.New} {
			if *p, err = d.str(true); err != nil {
				return nil, cut(err)
			}
		}
		st.Kind = store.SiteKind(kind)
		if fl&spoolUnits != 0 {
			k, err := binary.ReadUvarint(d.r)
			if err != nil {
				return nil, cut(err)
			}
			if k > 1<<40 {
				return nil, fmt.Errorf("%d UTF-16 units: not a spool", k)
			}
			st.Units = make([]uint16, k)
			for j := range st.Units {
				u, err := binary.ReadUvarint(d.r)
				if err != nil {
					return nil, cut(err)
				}
				st.Units[j] = uint16(u)
			}
		}
		if fl&spoolRaw != 0 {
			k, err := binary.ReadUvarint(d.r)
			if err != nil {
				return nil, cut(err)
			}
			if k > d.rawLeft {
				return nil, fmt.Errorf("a token of %d bytes past the batch's %d left: not a spool", k, d.rawLeft)
			}
			d.rawLeft -= k
			at := len(raw)
			// With reuse the chunk's tokens grow raw as they come (the batch's length bounds
			// them, not the chunk's); a token read before a growth keeps its array.
			raw = slices.Grow(raw, int(k))[:at+int(k)]
			if _, err := io.ReadFull(d.r, raw[at:]); err != nil {
				return nil, cut(err)
			}
			st.Raw = raw[at : at+int(k) : at+int(k)]
		}
		st.Key = fl&spoolKey != 0
		st.ReadOnly = fl&spoolReadOnly != 0
		for _, f := range []struct {
			bit uint64
			p   *string
		}{{spoolCallID, &st.CallID}, {spoolServer, &st.Server}, {spoolGroup, &st.Group}, {spoolField, &st.Field}, {spoolScope, &st.Scope}} {
			if fl&f.bit != 0 {
				if *f.p, err = d.str(false); err != nil {
					return nil, cut(err)
				}
			}
		}
	}
	if d.reuse {
		d.raw = raw
	}
	return edits, nil
}

// release gives the decoder's chunk back (to freeEdits) once nothing reads it.
func (d *editDecoder) release() {
	if d.edits != nil {
		freeEdits.Put(d.edits)
		d.edits, d.raw = nil, nil
	}
}

// str reads one string; interned, a string read before is the same string.
func (d *editDecoder) str(interned bool) (string, error) {
	k, err := binary.ReadUvarint(d.r)
	if err != nil {
		return "", err
	}
	if k > 1<<30 {
		return "", fmt.Errorf("a string of %d bytes: not a spool", k)
	}
	if k == 0 {
		return "", nil
	}
	if cap(d.buf) < int(k) {
		d.buf = make([]byte, k)
	}
	b := d.buf[:k]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return "", err
	}
	if !interned {
		return string(b), nil
	}
	if s, ok := d.intern[string(b)]; ok {
		return s, nil
	}
	if d.intern == nil || len(d.intern) >= spoolInterned {
		d.intern = make(map[string]string)
	}
	s := string(b)
	d.intern[s] = s
	return s, nil
}
