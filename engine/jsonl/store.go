// Package jsonl is the engine for line-oriented and single-document JSON stores, each format
// described by a Profile that an agent room declares (see agent); it knows no agent. It
// finds name sites with internal/jsonscan, in one streaming pass with flat memory whatever the
// line length, and rewrites by splicing the new name token over the
// old one: every other byte of the file stays identical.
package jsonl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/internal/freelist"
	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/internal/splice"
	"github.com/sessionfix/sessionfix/store"
)

// Store is one JSON Lines or JSON file read with a Profile.
type Store struct {
	path string
	prof *Profile
	pin  store.FileID // the file discovery found at path (store.Pinner); zero: not known
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.Writer       = (*Store)(nil)
	_ store.Restorer     = (*Store)(nil)
	_ store.BatchScanner = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.SpliceWriter = (*Store)(nil)
)

// SplicesEdits says ApplyBatches splices each edit as the copy reaches it (store.SpliceWriter):
// it reads of an edit only its offset, line, old token, Field and new name.
func (s *Store) SplicesEdits() {}

// BatchScans reports whether the store's profile lets ScanBatches hand sites out in batches
// (Profile.Batched; store.BatchOptional).
func (s *Store) BatchScans() bool { return s.prof.Batched }

// Open returns the store at path read with prof. It does not touch the file.
func Open(path string, prof *Profile) *Store { return &Store{path: path, prof: prof} }

// Ref identifies the store.
func (s *Store) Ref() store.Ref { return store.Ref{Path: s.path, Kind: s.prof.Kind} }

// Pin tells the store which file discovery found at its path (store.Pinner): Scan reads that
// file or none (fileio.OpenStore).
func (s *Store) Pin(id store.FileID) { s.pin = id }

const readBufSize = 256 << 10

// scanBufSize is Scan's read buffer: records shorter than it reach the scanner whole (the
// whole-record lexer reads them); longer ones stream through the full lexer. Half a MiB: the
// chunk and its bitmaps (a quarter of its size, jsonscan's chunkIndex) fit a core's 1 MiB
// second-level cache between the read that fills the chunk, its classification and the
// lexer's pass over it (1 MiB and its bitmaps did not).
const scanBufSize = 512 << 10

// readBufs recycles Scan's read buffers (one per worker in flight, not one per file; a free
// list, not a sync.Pool, which every garbage collection empties).
var readBufs = make(chan []byte, 8)

func getReadBuf() []byte {
	select {
	case b := <-readBufs:
		return b
	default:
		return make([]byte, scanBufSize)
	}
}

func putReadBuf(b []byte) {
	select {
	case readBufs <- b:
	default:
	}
}

// prefilterOff turns the literal prefilter and the scanner's shortcuts off (tests compare both
// ways).
var prefilterOff = false

// Scan reads the file once and returns its name sites. Invalid JSON lines are reported as
// warnings and yield no sites; invalid UTF-8 is an error that makes the file not writable; a
// name token longer than the capture limit is an error. Scan fails only when the file cannot
// be opened or read.
func (s *Store) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	return s.scan(ctx, opt, nil)
}

// batchSites is how many sites ScanBatches gathers before it hands them out (at the end of
// the record that reaches it: a record's sites are never split). A variable for tests.
var batchSites = 10_000

// ScanBatches is Scan handing the sites to fn in batches of about batchSites, at record ends
// (store.BatchScanner), when the profile is Batched; otherwise every site in one batch at the
// end. The returned snapshot has no Sites.
func (s *Store) ScanBatches(ctx context.Context, opt store.ScanOptions, fn func(*store.Snapshot, []store.Site) error) (*store.Snapshot, error) {
	if !s.prof.Batched {
		snap, err := s.scan(ctx, opt, nil)
		if err != nil {
			return nil, err
		}
		sites := snap.Sites
		snap.Sites = nil
		if len(sites) > 0 {
			if err := fn(snap, sites); err != nil {
				return nil, err
			}
		}
		return snap, nil
	}
	return s.scan(ctx, opt, fn)
}

// scan is Scan; with emit set, the sites gathered are handed to it (and dropped) at the end of
// each record that brings them to batchSites, and at the end of the file.
func (s *Store) scan(ctx context.Context, opt store.ScanOptions, emit func(*store.Snapshot, []store.Site) error) (*store.Snapshot, error) {
	f, fi, err := fileio.OpenStore(s.path, s.pin)
	if err != nil {
		if errors.Is(err, fileio.ErrNotTheFile) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	defer f.Close()
	fs := &fileScan{
		path: s.path,
		prof: s.prof,
		emit: emit,
		size: fi.Size(),
		snap: &store.Snapshot{
			Ref:   s.Ref(),
			Agent: s.prof.Agent,
			State: store.FileState{Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime(), ID: fileio.IDOf(fi)},
		},
	}
	snap := fs.snap
	fs.presize()
	defer func() {
		density.sites.Add(int64(len(snap.Sites) + fs.emitted))
		density.bytes.Add(fi.Size())
		if len(snap.Sites) == 0 {
			snap.Sites = nil // as without the guess
		}
	}()
	fs.b = &Builder{snap: snap}
	if s.prof.Stream != nil {
		fs.stream = s.prof.Stream()
	}
	sc := jsonscan.New(s.prof.Patterns, s.prof.Mode, fs.record)
	if fs.stream != nil {
		sc.SetCaptureFunc(func(c *jsonscan.Capture) { fs.stream.Capture(c, fs.b) })
	}
	sc.SetCareful(prefilterOff)
	if len(s.prof.Needles) > 0 && !prefilterOff {
		if err := sc.SetPrefilter(s.prof.Needles...); err != nil {
			return nil, fmt.Errorf("scan %s: %w", s.path, err)
		}
	}
	fp, fpText := fileio.NewFingerprint()
	var h hash.Hash // nil: no hash
	if opt.Hash {
		h = fp
	}
	if err := fs.read(ctx, f, sc, h, opt.Progress); err != nil {
		return nil, err
	}
	if err := sc.Close(); err != nil {
		return nil, err
	}
	if emit != nil {
		if fs.flush(false, 0); fs.emitErr != nil {
			return nil, fs.emitErr
		}
		snap.Sites = nil
	}
	if sc.Offset() != fi.Size() {
		// The file grew or shrank while we read it: the offsets still hold for what we read,
		// and RewriteFile will refuse it as in use.
		snap.State.Size = sc.Offset()
	}
	if opt.Hash {
		snap.State.Fingerprint = fpText(fp)
	}
	fs.problemTotals()
	return snap, nil
}

// fileScan is the state of one Store.scan: the snapshot being built and what the record
// callback counts.
type fileScan struct {
	path    string
	prof    *Profile
	snap    *store.Snapshot
	size    int64 // the file's size when opened
	b       *Builder
	stream  Streamer // nil: the profile resolves whole records
	emit    func(*store.Snapshot, []store.Site) error
	emitted int // sites handed to emit
	emitErr error
	mark    int // sites before the current record

	invalidJSON, badUTF8 int
}

// presize gives snap.Sites room for the sites of the files scanned before (density): the first
// guess, at most 4096 sites, or a batch when the sites are handed out in batches (a batch is
// what a batched scan holds anyway). With 4096, each of the dense bench corpus's sessions
// (~6,300 sites, 248 B each) grew its slice once more: a third of the bytes a scan allocated.
func (fs *fileScan) presize() {
	d := density.bytes.Load()
	if d <= 0 {
		return
	}
	limit := int64(4096)
	if fs.emit != nil {
		limit = int64(batchSites)
	}
	if est := min(fs.size*density.sites.Load()/d, limit); est > 0 {
		fs.snap.Sites = freeSites.Get(int(withRoom(est, fs.emit != nil)))
	}
}

// withRoom is the room a Sites slice is given for est sites likely: a quarter more (est is a
// guess from the density of bytes scanned), but when the sites are handed out in batches no
// more than a batch and the record that reaches it need (batchSites and a thirty-second: a
// batch is handed out at the end of the record that brings it to batchSites, and a record
// holds a few names). A batch's slice had a quarter more too: 12,500 sites, 3.1 MB, of which
// 2,500 never used; the free list keeps the largest slices, so most stores of make bench's
// dense corpus held one, and the live heap sat at the memory limit (cmd/sessionfix's), the
// collector running every few MB.
func withRoom(est int64, batched bool) int64 {
	est += est / 4
	if batched {
		est = min(est, int64(batchSites+batchSites/32))
	}
	return est
}

// flush hands the sites gathered so far to emit; more says the file goes on from byte at (the
// next batch then starts in a new slice sized for the sites the rest of the file likely holds,
// at the density of the bytes before at, with room (withRoom), at most a batch's: a batch's
// slice for a file's last thousand sites was a sixth of the bytes a scan of the dense bench
// corpus allocated).
func (fs *fileScan) flush(more bool, at int64) {
	snap := fs.snap
	if len(snap.Sites) == 0 || fs.emitErr != nil {
		return
	}
	sites := snap.Sites
	fs.emitted += len(sites)
	snap.Sites = nil
	if more {
		est := int64(len(sites))
		if at > 0 && fs.size > at {
			est = min(est, int64(fs.emitted)*(fs.size-at)/at)
		}
		snap.Sites = freeSites.Get(int(max(withRoom(est, true), 16)))
	}
	fs.emitErr = fs.emit(snap, sites)
}

// record is the scanner's record callback: it counts the record, reports its problems and
// resolves its captures into sites.
func (fs *fileScan) record(rec *jsonscan.Record) error {
	snap := fs.snap
	defer func() {
		if fs.emit != nil && len(snap.Sites) >= batchSites {
			fs.flush(true, rec.Start)
		}
		fs.mark = len(snap.Sites)
	}()
	if rec.Err != nil && fs.stream != nil {
		// Streamed sites of an invalid record are dropped.
		clear(snap.Sites[fs.mark:]) // what is cut off is zero again (freelist.List.PutUsed)
		snap.Sites = snap.Sites[:fs.mark]
		fs.stream.Reset()
	}
	if !rec.Blank {
		snap.Records++
	}
	if rec.BadUTF8 >= 0 {
		fs.badUTF8Problem(rec)
	}
	if rec.Err != nil {
		fs.invalidJSONProblem(rec)
		return nil
	}
	if fs.stream != nil {
		fs.stream.End(rec, fs.b)
		fs.stream.Reset()
	} else {
		fs.prof.Resolve(rec, fs.b)
	}
	return nil
}

// badUTF8Problem reports rec's invalid UTF-8 (the first maxProblemsPerKind records holding
// some one by one): the file is not writable.
func (fs *fileScan) badUTF8Problem(rec *jsonscan.Record) {
	snap := fs.snap
	fs.badUTF8++
	if snap.NotWritable == "" {
		snap.NotWritable = fmt.Sprintf("invalid UTF-8 at line %d", rec.Line)
	}
	if fs.badUTF8 > maxProblemsPerKind {
		return
	}
	reason := fmt.Sprintf("invalid UTF-8 at line %d, column %d (byte offset %d)", rec.Line, rec.BadUTF8-rec.Start+1, rec.BadUTF8)
	if fs.badUTF8 == 1 {
		reason += ": the file is not UTF-8 text, so it is not rewritten and every name in it is kept; " + utf8Repair
	}
	snap.Problems = append(snap.Problems, store.Problem{Loc: store.Loc{Line: rec.Line, Offset: rec.BadUTF8}, Severity: store.SevError, Reason: reason})
}

// invalidJSONProblem reports rec's invalid JSON (the first maxProblemsPerKind one by one). A
// bad line of a JSON Lines file is one record: the others are read (a torn last line is what
// an agent appending leaves), a warning. A one-document store (a profile in Document mode: a
// task, session or checkpoint kept as one JSON value) that does not parse was not read at all:
// none of its names were scanned, so the run is incomplete: an error (exit 3,
// docs/exit-codes.md), as for any store that cannot be read.
func (fs *fileScan) invalidJSONProblem(rec *jsonscan.Record) {
	fs.invalidJSON++
	if fs.invalidJSON > maxProblemsPerKind {
		return
	}
	sev, what := store.SevWarning, "line left as it is"
	if fs.prof.Mode == jsonscan.Document {
		sev, what = store.SevError, "the file could not be read, so none of its names were scanned; file left as it is (an agent may be writing it: run again once it is idle)"
	}
	fs.snap.Problems = append(fs.snap.Problems, store.Problem{Loc: store.Loc{Line: rec.Err.Line, Offset: rec.Err.Offset}, Severity: sev,
		Reason: fmt.Sprintf("invalid JSON (%s, column %d); %s", rec.Err.Msg, rec.Err.Column, what)})
}

// problemTotals adds the count of each kind of problem reported past maxProblemsPerKind.
func (fs *fileScan) problemTotals() {
	for _, n := range []struct {
		count int
		what  string
	}{{fs.invalidJSON, "invalid JSON lines"}, {fs.badUTF8, "lines with invalid UTF-8"}} {
		if n.count > maxProblemsPerKind {
			fs.snap.Problems = append(fs.snap.Problems, store.Problem{Severity: store.SevWarning,
				Reason: fmt.Sprintf("%d %s in all (the first %d are listed)", n.count, n.what, maxProblemsPerKind)})
		}
	}
}

// read feeds the whole file f to sc through one recycled buffer, whole lines at a time (the
// prefilter looks at whole records; a line longer than the buffer streams through as it is),
// hashing the bytes into fp (nil: no hash) and telling progress (nil: nobody) how many were
// read. The callback's error (an emit's) is returned as it is.
func (fs *fileScan) read(ctx context.Context, f io.Reader, sc *jsonscan.Scanner, fp hash.Hash, progress func(int64)) error {
	buf := getReadBuf()
	defer putReadBuf(buf)
	keep := 0 // bytes of an unfinished line carried to the front of buf
	var read int64
	unyielded := 0 // bytes read since the last fileio.Yield (one a read: buf is 512 KiB)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := f.Read(buf[keep:])
		// A scan never blocks (the page cache serves it): it lets goroutines waiting for a
		// processor run, a rewrite's commit among them (fileio.Yield).
		if unyielded += n; unyielded >= fileio.YieldEvery {
			unyielded = 0
			fileio.Yield()
		}
		if n > 0 && fp != nil {
			fp.Write(buf[keep : keep+n])
		}
		if n > 0 && progress != nil {
			progress(int64(n))
		}
		data := buf[:keep+n]
		cut := len(data)
		if rerr == nil && fs.prof.Mode == jsonscan.Lines {
			if j := bytes.LastIndexByte(data, '\n'); j >= 0 {
				cut = j + 1
			}
		}
		if _, err := sc.Write(data[:cut]); err != nil {
			return err
		}
		if fs.emitErr != nil {
			return fs.emitErr
		}
		read += int64(n)
		if rerr == nil {
			growSites(fs.snap, read-int64(len(data)-cut), fs.size, fs.emit != nil)
		}
		keep = copy(buf, data[cut:])
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read %s: %w", fs.path, rerr)
		}
	}
}

// freeSites is the free list of Sites slices handed back with ReleaseSites: a scan starts its
// slices (and each batch's) from it instead of allocating them.
var freeSites = freelist.List[store.Site]{Max: 4}

// ReleaseSites hands back a Sites slice of a snapshot or batch this store's scan gave out
// (Scan, ScanBatches), once nothing refers to it or to a site in it any more (no decision, no
// plan, no report row pointing into it): the next scan reuses its memory. A dense session of
// 6,300 names has 1.5 MB of sites; allocating a slice for each file and batch was three
// quarters of the bytes a scan of the dense bench corpus allocated, and the collections they
// caused a fifth of its CPU. Any other use of the slice after the call is a bug, and so is
// shortening it before: only its length is cleared (freelist.List.PutUsed).
func (s *Store) ReleaseSites(sites []store.Site) { releaseSites(sites) }

func releaseSites(sites []store.Site) { freeSites.PutUsed(sites) }

// utf8Repair says how to repair a file holding invalid UTF-8 (the problem of its first bad
// line): no JSON text may hold such a byte (RFC 8259, section 8.1), and a byte outside the ASCII range
// is never part of the JSON syntax, so dropping it leaves the line valid JSON.
const utf8Repair = "repair: while the agent is not running, drop or replace the byte " +
	"(GNU iconv drops every invalid byte: iconv -c -f UTF-8 -t UTF-8 FILE > FILE.new; compare, then mv FILE.new FILE), " +
	"then run sessionfix fix again"

// density counts the sites and bytes of the files scanned so far in this process: each Scan
// starts its Sites slice with room for the sites its size makes likely (see growSites).
var density struct{ sites, bytes atomic.Int64 }

// growSites sizes snap.Sites for the whole file from the sites found in the bytes scanned so
// far (a proportional estimate, a quarter more), when the slice would not hold that many: one
// or two allocations instead of a growing slice whose copies were most of the bytes a scan
// allocated. A wrong guess costs only memory (at most a quarter of the final slice, or an
// estimate the rest of the file does not fill) or an append.
func growSites(snap *store.Snapshot, scanned, size int64, batched bool) {
	if len(snap.Sites) == 0 || scanned <= 0 || size <= scanned {
		return
	}
	est := int64(len(snap.Sites)) * size / scanned
	if batched {
		est = min(est, int64(batchSites)) // a batch is handed out at batchSites
	}
	if est > 1<<20 {
		est = 1 << 20 // one site every few bytes of a huge file: let append take over
	}
	if int(est) > cap(snap.Sites) {
		est = withRoom(est, batched)
		snap.Sites = slices.Grow(snap.Sites, int(est)-len(snap.Sites))
	}
}

// Apply rewrites the given sites (from a Scan of this store) with fileio.RewriteFile: each old
// token is checked and replaced by the new name as a plain JSON string; nothing else changes.
// It is ApplyBatches with one batch.
func (s *Store) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (*store.Change, error) {
	// A plan's edits come in offset order: sorted only when not (a copy: edits is the caller's;
	// 256 bytes an edit, 14 MB for a session of 56,000 rewritten names).
	sorted := edits
	if !sort.SliceIsSorted(edits, func(i, j int) bool { return edits[i].Site.Loc.Offset < edits[j].Site.Loc.Offset }) {
		sorted = append([]store.Edit(nil), edits...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Site.Loc.Offset < sorted[j].Site.Loc.Offset })
	}
	done := false
	return s.ApplyBatches(ctx, snap, func() ([]store.Edit, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return sorted, nil
	}, opt)
}

// ApplyBatches is Apply with the edits read batch by batch from next until io.EOF
// (store.BatchWriter), in offset order across batches: the file is streamed through once,
// holding one batch. The change records its sites compactly (store.SiteEncoder): inline
// (Change.SiteData) up to InlineSites bytes of encoding, else in the file opt.SitesPath
// (Change.SiteFile), written as the copy goes and made durable before BeforeCommit.
func (s *Store) ApplyBatches(ctx context.Context, snap *store.Snapshot, next func() ([]store.Edit, error), opt store.ApplyOptions) (*store.Change, error) {
	if snap.NotWritable != "" {
		return nil, fmt.Errorf("rewrite %s: %w: %s", s.path, store.ErrNotWritable, snap.NotWritable)
	}
	rec := newSiteRecorder(opt.SitesPath)
	committed := false
	defer func() {
		if !committed {
			rec.discard()
		}
		rec.release()
	}()
	commit := opt.BeforeCommit
	opt.BeforeCommit = func(ch *store.Change) error {
		if err := rec.finish(ch); err != nil {
			return fmt.Errorf("record the sites of %s: %w", s.path, err)
		}
		if commit != nil {
			if err := commit(ch); err != nil {
				return err
			}
		}
		committed = true
		return nil
	}
	edits := 0
	transform := func(dst io.Writer, src io.Reader) error {
		c := splice.NewCopier(dst, src, readBufSize)
		defer c.Close()
		c.OnEdit = rec.add
		var last *store.Edit
		for {
			batch, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			for i := range batch {
				e := &batch[i]
				if last != nil && last.Site.Loc.Offset+int64(len(last.Site.Raw)) > e.Site.Loc.Offset {
					return fmt.Errorf("rewrite %s: overlapping edits at offsets %d and %d", s.path, last.Site.Loc.Offset, e.Site.Loc.Offset)
				}
				last = e
			}
			if len(batch) > 0 {
				l := batch[len(batch)-1]
				last = &l
			}
			edits += len(batch)
			if err := c.Edits(batch); err != nil {
				if me := (*splice.MismatchError)(nil); errors.As(err, &me) {
					return &store.InUseError{Reason: fmt.Sprintf("line %d: %v (content changed since it was scanned)", me.Site.Loc.Line, err), Err: err}
				}
				return err
			}
		}
		return c.Finish()
	}
	ch, err := fileio.RewriteFile(ctx, s.path, snap.State, transform, opt)
	if ch == nil {
		return nil, err
	}
	ch.Ref = s.Ref()
	ch.Edits = edits
	return ch, err
}

// InlineSites is how many bytes of encoded sites a change carries inline (Change.SiteData,
// about 2–4 bytes a name): past it they go to their own file. A variable for tests.
var InlineSites = 64 << 10

// siteRecorder keeps the compact encoding of a rewrite's byte edits: in memory up to
// InlineSites bytes, then in the file path (created then, exclusively).
type siteRecorder struct {
	path    string
	enc     *store.SiteEncoder
	mem     bytes.Buffer
	f       *os.File
	h       hash.Hash
	size    int64
	created bool
}

// recorders keeps the recorders of finished rewrites (their encoder's buffer and table, their
// memory buffer) for the next ones: a free list of a few, not a sync.Pool, which a garbage
// collection empties (fix --apply on make bench's dense corpus, held to cmd/sessionfix's
// memory limit, collects every few MB). Allocated afresh, a rewrite's recorder was ~40 KB of
// buffers (its encoder's 16 KiB, its memory buffer grown to the inline encoding).
var recorders = make(chan *siteRecorder, 4)

func newSiteRecorder(path string) *siteRecorder {
	select {
	case r := <-recorders:
		r.path = path
		r.enc.Reset(r)
		return r
	default:
	}
	r := &siteRecorder{path: path}
	r.enc = store.NewSiteEncoder(r)
	return r
}

// release gives r back for the next rewrite (recorders) once its change was recorded or
// discarded; r must not be used after. A recorder whose memory grew past the inline limit
// (InlineSites) is not kept.
func (r *siteRecorder) release() {
	if r.mem.Cap() > 2*InlineSites {
		return
	}
	r.mem.Reset()
	r.path, r.f, r.h, r.size, r.created = "", nil, nil, 0, false
	select {
	case recorders <- r:
	default:
	}
}

// Write is the encoder's output: memory, then the file.
func (r *siteRecorder) Write(p []byte) (int, error) {
	if r.f == nil && r.path != "" && r.mem.Len()+len(p) > InlineSites {
		f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, err
		}
		r.f, r.h, r.created = f, sha256.New(), true
		if _, err := r.write(r.mem.Bytes()); err != nil {
			return 0, err
		}
		r.mem = bytes.Buffer{}
	}
	if r.f == nil {
		return r.mem.Write(p)
	}
	return r.write(p)
}

func (r *siteRecorder) write(p []byte) (int, error) {
	n, err := r.f.Write(p)
	r.h.Write(p[:n])
	r.size += int64(n)
	return n, err
}

func (r *siteRecorder) add(at int64, old, new []byte) error { return r.enc.Add(at, old, new) }

// finish records the sites in ch: inline, or the file made durable (fsync, then its directory).
func (r *siteRecorder) finish(ch *store.Change) error {
	if err := r.enc.Flush(); err != nil {
		return err
	}
	ch.Sites = nil
	if r.f == nil {
		ch.SiteData = bytes.Clone(r.mem.Bytes())
		return nil
	}
	if err := fileio.Fault(fileio.FaultSync, r.path); err != nil {
		return err
	}
	if err := r.f.Sync(); err != nil {
		return err
	}
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	if err := fileio.SyncDir(filepath.Dir(r.path)); err != nil {
		return err
	}
	ch.SiteFile = &store.SiteFile{Path: r.path, Size: r.size, SHA256: hex.EncodeToString(r.h.Sum(nil)), Count: r.enc.Count()}
	return nil
}

// discard removes the file of a change that was not journaled.
func (r *siteRecorder) discard() {
	if r.f != nil {
		r.f.Close()
	}
	if r.created {
		os.Remove(r.path)
	}
}

// Sites returns the byte edits Splice(edits) makes, at offsets of its output (edits sorted
// by offset), or nil when a token is not valid UTF-8 (a manifest cannot carry it exactly).
func Sites(edits []store.Edit) []store.ByteEdit {
	out := make([]store.ByteEdit, 0, len(edits))
	var delta int64
	// The run's manifest holds these until the run ends: equal tokens share one string.
	strs := map[string]string{}
	intern := func(b []byte) string {
		if s, ok := strs[string(b)]; ok {
			return s
		}
		s := string(b)
		strs[s] = s
		return s
	}
	var tok []byte
	for _, e := range edits {
		tok = splice.Token(tok[:0], e)
		if !utf8.Valid(e.Site.Raw) || !utf8.Valid(tok) {
			return nil
		}
		out = append(out, store.ByteEdit{At: e.Site.Loc.Offset + delta, Old: intern(e.Site.Raw), New: intern(tok)})
		delta += int64(len(tok) - len(e.Site.Raw))
	}
	return out
}

// Restore puts the backup of ch back (see fileio.RestoreFile).
func (s *Store) Restore(ctx context.Context, ch *store.Change, force bool) error {
	return fileio.RestoreFile(ctx, s.path, ch, force)
}

// Splice returns a Transform that copies the source and replaces, at each edit's offset, the
// old token (checked byte for byte) by the new name written as a JSON string (splice.Copy). An
// edit of an absent member (Site.Raw empty, see store.Site) inserts `,"<Site.Field>":<new name>`
// at its offset instead. Edits must be sorted by offset and not overlap. A mismatch returns an
// *store.InUseError whose Err wraps store.ErrTokenMismatch: the content changed since it was
// scanned.
func Splice(edits []store.Edit) fileio.Transform {
	return func(dst io.Writer, src io.Reader) error {
		err := splice.Copy(dst, src, edits, readBufSize)
		if me := (*splice.MismatchError)(nil); errors.As(err, &me) {
			return &store.InUseError{Reason: fmt.Sprintf("line %d: %v (content changed since it was scanned)", me.Site.Loc.Line, err), Err: err}
		}
		return err
	}
}
