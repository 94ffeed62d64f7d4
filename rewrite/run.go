package rewrite

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/naming"
	"github.com/sessionfix/sessionfix/store"
)

// Run states recorded in a manifest.
const (
	StateApplying        = "applying"         // the run was interrupted (journal only)
	StateApplied         = "applied"          // every planned store was rewritten
	StatePartial         = "partial"          // some stores were skipped or failed, or the run was killed (ListRuns)
	StateNothing         = "nothing-to-do"    // no store needed a change
	StateUndone          = "undone"           // every change was restored
	StatePartiallyUndone = "partially-undone" // undo refused some stores
)

// Manifest is manifest.json of a run directory: everything undo needs.
type Manifest struct {
	// Checksum is "sha256:" and the hex SHA-256 of the file with these 64 digits as zeros
	// (version 2; see trust.go). It is the first member so it sits at a fixed offset.
	Checksum  string      `json:"checksum,omitempty"`
	Version   int         `json:"version"`
	RunID     string      `json:"run_id"`
	Created   time.Time   `json:"created"`
	Command   string      `json:"command,omitempty"`
	Roots     []string    `json:"roots,omitempty"`
	State     string      `json:"state"`
	UndoneAt  *time.Time  `json:"undone_at,omitempty"`
	Files     []FileEntry `json:"files"`
	Skipped   []Skipped   `json:"skipped,omitempty"`
	ToolNotes []string    `json:"notes,omitempty"`
	// Profile is the --profile the run's SQLite stores were read with (nil: none), so undo
	// reopens them with it (issue 23 item 6). Sealed with the rest of the manifest.
	Profile *RunProfile `json:"profile,omitempty"`
	// Moves are the stores the run moved (fix --apply --move-legacy; move.go), in the order
	// made; absent when none.
	Moves []MoveEntry `json:"moves,omitempty"`

	dir string // the run directory ReadRun read (where light entries are read back from)
	// unreadable is why manifest.json could not be read when ReadRun recovered the files from
	// the journal ("" when it was read).
	unreadable string
}

// RunProfile is a user SQLite profile (--profile FILE) as a run recorded it: the path it was
// read from (absolute; for messages only) and the file's JSON document as read.
type RunProfile struct {
	Source   string          `json:"source"`
	Document json.RawMessage `json:"document"`
}

// FileEntry records one rewritten store.
type FileEntry struct {
	store.Change
	Renames []Rename `json:"renames"`
	// Restored is set once undo put the backup back.
	Restored bool `json:"restored,omitempty"`

	// src is set on an entry ReadRun read without its Sites (readrun.go): where it is whole.
	src *entrySrc
}

// Rename counts one old → new name in a store.
type Rename struct {
	Old   string `json:"old"`
	New   string `json:"new"`
	Count int    `json:"count"`
}

// Skipped records a planned store that was not rewritten, with why.
type Skipped struct {
	Ref    store.Ref `json:"store"`
	Reason string    `json:"reason"`
	InUse  bool      `json:"in_use,omitempty"`
}

// journalEntry is one line of journal.jsonl, appended (and fsynced) around each replace so an
// interrupted run can still be undone, and around each temp file so the next run can remove
// what a killed one left.
type journalEntry struct {
	// Sum seals the line like Manifest.Checksum (first member, see trust.go).
	Sum string `json:"sum,omitempty"`
	// "commit" (about to replace), "done", "abort"; "move", "moved", "move-abort" (a store
	// moved, move.go); fileio.TempCreating, TempForeign, TempGone (Path is the temp file,
	// Store the file it is for).
	Event string     `json:"event"`
	Entry *FileEntry `json:"entry,omitempty"`
	// Move is the move of a "move" (from and to) or "moved" (the whole entry) line.
	Move   *MoveEntry `json:"move,omitempty"`
	Path   string     `json:"path,omitempty"`
	Store  string     `json:"store,omitempty"`
	Reason string     `json:"reason,omitempty"`
}

const (
	manifestName = "manifest.json"
	journalName  = "journal.jsonl"
	backupsDir   = "backups"
	runsDir      = "runs"
)

// DefaultStateDir is ${XDG_STATE_HOME:-~/.local/state}/sessionfix.
func DefaultStateDir(getenv func(string) string, home string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "sessionfix")
	}
	return filepath.Join(home, ".local", "state", "sessionfix")
}

// NewRunID returns a sortable run id: UTC time to the second plus 4 random hex digits.
func NewRunID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ApplyOptions tunes Apply.
type ApplyOptions struct {
	StateDir string
	Command  string
	// Roots are the paths the run was asked to fix; undo restores only stores under them (see
	// CheckRun). Empty: each rewritten store is recorded as its own root.
	Roots []string
	Now   func() time.Time
	// Workers bounds parallel rewrites (default 2: rewriting is I/O bound).
	Workers int
	// Progress is called once per store done.
	Progress func(store.Ref)
	// Profile is the --profile the stores were read with (nil: none), recorded in the manifest.
	Profile *RunProfile
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
	// streamed to manifest.json, not held in memory; ReadRun(Dir) reads them back).
	Manifest *Manifest
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
// the plan has nothing to rewrite (Result.RunID is then empty).
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
	// No bound by weight: the plan's sites are all in memory already.
	_ = ordered(ctx, cancel, len(work), workers, applyWindow*workers, weights{},
		func(i int, _ func(Outcome), slot *runSlot) Outcome {
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

// run is one apply run: its directory, journal and manifest are created on the first store
// that needs a rewrite. Safe for concurrent use.
//
// Memory stays flat whatever the number of stores: a rewritten store's FileEntry (its byte
// edits, one per name) is not kept; the run keeps where the journal's "done" line holding it
// starts (fileRef), and finish streams the entries from the journal into manifest.json.
type run struct {
	opt     ApplyOptions
	now     func() time.Time
	mu      sync.Mutex
	dir     string
	id      string
	j       *journal
	m       *Manifest // header: Files stays nil
	files   []fileRef
	seq     int
	initErr error
}

// fileRef is one rewritten store of a run: the journal line (offset, length) whose entry the
// manifest records, or the entry itself when that line could not be written (a full disk).
type fileRef struct {
	path  string
	off   int64
	n     int
	entry *FileEntry
}

func newRun(opt ApplyOptions) *run {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	return &run{opt: opt, now: now}
}

// start creates the run directory once.
func (r *run) start() error {
	if r.m != nil || r.initErr != nil {
		return r.initErr
	}
	created := r.now()
	r.id = NewRunID(created)
	r.dir = filepath.Join(r.opt.StateDir, runsDir, r.id)
	// The run directory is fsynced by the first manifest write (the journal's and backups/'s
	// entries); mkdirDurable makes the run directory's own entry (and any parent it creates)
	// durable.
	if err := mkdirDurable(filepath.Join(r.dir, backupsDir), 0o700); err != nil {
		r.initErr = fmt.Errorf("create run directory: %w", err)
		return r.initErr
	}
	j, err := openJournal(filepath.Join(r.dir, journalName))
	if err != nil {
		r.initErr = err
		return err
	}
	r.j = j
	r.m = &Manifest{Version: manifestVersion, RunID: r.id, Created: created.UTC(), Command: r.opt.Command, Roots: absPaths(r.opt.Roots), State: StateApplying, Profile: r.opt.Profile}
	r.initErr = writeManifest(r.dir, r.m)
	return r.initErr
}

// apply rewrites one planned store and records the outcome in the manifest.
func (r *run) apply(ctx context.Context, sp *StorePlan) Outcome {
	return r.applyWith(sp.Snap.Ref, func(seq int) (Outcome, fileRef) {
		return applyOne(ctx, sp, seq, r.dir, r.j, r.opt)
	})
}

// applyWith starts the run on its first rewrite and records what apply (one store) did.
func (r *run) applyWith(ref store.Ref, apply func(seq int) (Outcome, fileRef)) Outcome {
	r.mu.Lock()
	err := r.start()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	if err != nil {
		return Outcome{Ref: ref, Err: err}
	}
	o, ref2 := apply(seq)
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.Change == nil {
		r.m.Skipped = append(r.m.Skipped, Skipped{Ref: o.Ref, Reason: o.Err.Error(), InUse: o.InUse()})
		return o
	}
	r.files = append(r.files, ref2)
	if len(r.opt.Roots) == 0 {
		// No roots given (a library caller): each rewritten store is its own root, so undo
		// still has a bound to check paths against.
		r.m.Roots = append(r.m.Roots, absPaths([]string{o.Ref.Path})...)
	}
	for _, w := range o.Change.Warnings {
		r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: %s", o.Ref.Path, w))
	}
	if o.Err != nil {
		r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: rewritten, then: %s", o.Ref.Path, o.Err))
	}
	return o
}

// finish writes the final manifest (files sorted by path) and closes the journal;
// interrupted (the context's error, or nil) marks a run that stopped before every planned
// store was handled. The Result is returned even when the manifest cannot be written (a full
// disk): the stores are rewritten all the same, and the journal (fsynced before each
// replace) is what undo then reads.
func (r *run) finish(interrupted error) (*Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		return &Result{}, r.initErr
	}
	defer r.j.close()
	sort.SliceStable(r.files, func(i, j int) bool { return r.files[i].path < r.files[j].path })
	sort.Slice(r.m.Skipped, func(i, j int) bool { return r.m.Skipped[i].Ref.Path < r.m.Skipped[j].Ref.Path })
	r.m.State = StateApplied
	if len(r.m.Skipped) > 0 {
		r.m.State = StatePartial
	}
	if interrupted != nil {
		r.m.State = StatePartial
		r.m.ToolNotes = append(r.m.ToolNotes, "interrupted ("+interrupted.Error()+"): stores after those listed were not rewritten")
	}
	if len(r.files) == 0 && len(r.m.Moves) == 0 && nothingJournaled(filepath.Join(r.dir, journalName)) {
		// Every store was refused or failed before its rewrite (a SQLite store in use, exit 4):
		// there is nothing to undo, so no run is left for `runs` to list (issue 9, finding 11).
		r.j.close()
		if err := os.RemoveAll(r.dir); err == nil {
			return &Result{Manifest: r.m}, nil
		}
	}
	res := &Result{RunID: r.id, Dir: r.dir, Manifest: r.m, Files: len(r.files)}
	if err := r.writeFinalManifest(); err != nil {
		return res, fmt.Errorf("%w (the journal %s records every rewrite: undo reads it)", err, filepath.Join(r.dir, journalName))
	}
	return res, nil
}

func applyOne(ctx context.Context, sp *StorePlan, seq int, dir string, j *journal, opt ApplyOptions) (Outcome, fileRef) {
	w, ok := sp.Store.(store.Writer)
	if !ok {
		ref := sp.Snap.Ref
		return Outcome{Ref: ref, Err: fmt.Errorf("%s: %w: the %s backend cannot rewrite", ref.Path, store.ErrNotWritable, ref.Kind)}, fileRef{}
	}
	edits := sp.Edits()
	return applyEdits(ctx, sp.Snap.Ref, renames(edits), NameCount(edits), seq, dir, j, opt,
		func(ctx context.Context, aopt store.ApplyOptions) (*store.Change, error) {
			return w.Apply(ctx, sp.Snap, edits, aopt)
		})
}

// applyEdits runs one store's rewrite (apply, with the backup path and the journal hook it
// is given) and journals it: ren and names describe the edits (FileEntry.Renames, names
// changed). The fileRef it returns for a rewritten store names the journal's "done" line.
func applyEdits(ctx context.Context, ref store.Ref, ren []Rename, names, seq int, dir string, j *journal, opt ApplyOptions,
	apply func(context.Context, store.ApplyOptions) (*store.Change, error)) (Outcome, fileRef) {
	o := Outcome{Ref: ref}
	entry := &FileEntry{Renames: ren}
	bk := filepath.Join(dir, backupsDir, fmt.Sprintf("%04d-%s", seq, sanitizeBase(filepath.Base(ref.Path))))
	aopt := store.ApplyOptions{
		RunID:      filepath.Base(dir),
		BackupPath: bk,
		SitesPath:  bk + ".sites",
		BeforeCommit: func(ch *store.Change) error {
			ch.Ref = ref
			ch.Edits = names
			entry.Change = *ch
			return j.append(journalEntry{Event: "commit", Entry: entry})
		},
	}
	ch, err := apply(fileio.WithTempRecorder(ctx, j.recordTemp), aopt)
	var ce *fileio.CommittedError
	if err != nil && (ch == nil || !errors.As(err, &ce)) {
		o.Err = err
		_ = j.append(journalEntry{Event: "abort", Path: ref.Path, Reason: err.Error()})
		return o, fileRef{}
	}
	// Rewritten (err, if any, happened after the new content was in place): recorded.
	ch.Ref = ref
	ch.Edits = names
	entry.Change = *ch
	o.Change, o.Edits, o.Err = ch, ch.Edits, err
	done := journalEntry{Event: "done", Path: ref.Path, Entry: entry}
	if err != nil {
		done.Reason = err.Error()
	}
	fr := fileRef{path: ref.Path}
	if fr.off, fr.n, err = j.appendLazy(done); err != nil {
		// The manifest must still record it: kept in memory (rare: a full disk).
		fr.entry = entry
	}
	return o, fr
}

func renames(edits []store.Edit) []Rename {
	counts := map[[2]string]int{}
	for _, e := range edits {
		counts[[2]string{e.Site.Name, e.New}]++
	}
	out := make([]Rename, 0, len(counts))
	for k, n := range counts {
		out = append(out, Rename{Old: k[0], New: k[1], Count: n})
	}
	sortRenames(out)
	return out
}

func sortRenames(out []Rename) {
	sort.Slice(out, func(i, j int) bool {
		return out[i].Old < out[j].Old || (out[i].Old == out[j].Old && out[i].New < out[j].New)
	})
}

func sanitizeBase(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

// journal is an append-only, fsynced JSONL file, locked (flock) while a run or an undo uses
// it: CleanLeftovers leaves the temp files of a locked journal alone.
//
// Lines are written under mu; the fsync that makes a line durable runs outside it (group
// commit): one fsync covers every line written before it started, so concurrent rewrites
// that each need their line durable share fsyncs, and none waits for another's fsync while
// writing. A failed fsync fails every later one (what it should have made durable is not
// known to be).
type journal struct {
	mu   sync.Mutex
	f    *os.File
	lock *flock.Flock
	end  int64 // bytes written (mu)

	smu    sync.Mutex // one fsync at a time
	synced int64      // bytes known durable (smu)
	serr   error      // the first fsync error (smu)
}

// ErrRunInUse means another sessionfix process holds the run's journal lock: a fix --apply
// still writing the run, or another undo of it.
var ErrRunInUse = errors.New("another sessionfix process is using this run")

// CheckRunFree returns ErrRunInUse (wrapped, naming the journal) when another process holds the
// lock of the run in dir; it takes the lock and lets it go at once (UndoRun takes it for the
// whole undo), so an undo can refuse before it asks anything.
func CheckRunFree(dir string) error {
	path := filepath.Join(dir, journalName)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil // no journal (yet): nobody holds it, and none is created here
	}
	lk := flock.New(path)
	ok, err := lk.TryLock()
	if err == nil && !ok {
		err = ErrRunInUse
	}
	if err != nil {
		return fmt.Errorf("lock journal %s: %w", path, err)
	}
	return lk.Unlock()
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	lk := flock.New(path)
	if ok, err := lk.TryLock(); err != nil || !ok {
		f.Close()
		if err == nil {
			err = ErrRunInUse
		}
		return nil, fmt.Errorf("lock journal %s: %w", path, err)
	}
	if err := cutTornTail(path); err != nil {
		f.Close()
		_ = lk.Unlock()
		return nil, fmt.Errorf("repair journal %s: %w", path, err)
	}
	return &journal{f: f, lock: lk}, nil
}

// cutTornTail removes a last line without its newline from the journal at path: the torn
// write of a killed run (a SIGKILL can cut a large write short), which readers skip as long as
// it stays last. Appending after it would make it a damaged line in the middle.
func cutTornTail(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	end := fi.Size()
	var buf [64 << 10]byte
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if pos+int64(i)+1 == end {
				return nil // ends with a newline: nothing torn
			}
			return f.Truncate(pos + int64(i) + 1)
		}
	}
	return f.Truncate(0) // one torn line only
}

func (j *journal) append(e journalEntry) error {
	_, _, err := j.write(e, true)
	return err
}

// appendLazy appends e without waiting for it to be durable (the next fsync of the journal
// makes it so), returning where the line starts in the journal and its length. For lines a
// crash may lose: a "done" line (the "commit" line before it, fsynced before the replace,
// records the change for undo).
func (j *journal) appendLazy(e journalEntry) (off int64, n int, err error) { return j.write(e, false) }

// write appends e, and fsyncs the journal when sync is set; it returns the line's offset and
// length (with its newline).
func (j *journal) write(e journalEntry, sync bool) (int64, int, error) {
	b, err := marshalJournalLine(e)
	if err != nil {
		return 0, 0, err
	}
	off, err := j.writeLine(b)
	if err != nil || !sync {
		return off, len(b), err
	}
	return off, len(b), j.syncTo(off + int64(len(b)))
}

// writeLine appends the line b and returns its offset.
func (j *journal) writeLine(b []byte) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := fileio.Fault(fileio.FaultWrite, j.f.Name()); err != nil {
		return 0, fmt.Errorf("write journal: %w", err)
	}
	// A short write (a full disk) must not leave half a line that the next line would run
	// into: the journal is cut back to where the line began.
	fi, err := j.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("write journal: %w", err)
	}
	if n, err := j.f.Write(b); err != nil {
		if n > 0 {
			_ = j.f.Truncate(fi.Size())
		}
		return 0, fmt.Errorf("write journal: %w", err)
	}
	j.end = fi.Size() + int64(len(b))
	return fi.Size(), nil
}

// syncTo returns once the first end bytes of the journal are durable: at once when an fsync
// that started after they were written has completed, else after one more fsync.
func (j *journal) syncTo(end int64) error {
	j.smu.Lock()
	defer j.smu.Unlock()
	if j.serr != nil {
		return j.serr
	}
	if j.synced >= end {
		return nil
	}
	j.mu.Lock()
	upto := j.end // everything written so far: this fsync covers it
	j.mu.Unlock()
	if err := fileio.Fault(fileio.FaultSync, j.f.Name()); err != nil {
		j.serr = fmt.Errorf("sync journal: %w", err)
		return j.serr
	}
	if err := j.f.Sync(); err != nil {
		j.serr = fmt.Errorf("sync journal: %w", err)
		return j.serr
	}
	j.synced = upto
	return nil
}

// recordTemp is the fileio.TempRecorder of a run: each temp file event is a journal line. An
// announcement (and a foreign name) is fsynced before the file is created; a planned one
// (fileio.TempPlanned, journaled as an announcement) is made durable by the fsync of the
// announcement that follows it; a "gone" line is not fsynced (lost in a crash, it only makes
// the next cleanup look for a file that is not there).
func (j *journal) recordTemp(event, tmp, target string) error {
	sync := true
	switch event {
	case fileio.TempGone:
		sync = false
	case fileio.TempPlanned:
		event, sync = fileio.TempCreating, false
	}
	_, _, err := j.write(journalEntry{Event: event, Path: tmp, Store: target}, sync)
	return err
}

func (j *journal) close() {
	j.f.Close()
	_ = j.lock.Unlock()
}

// absPaths returns the paths made absolute and clean (a run records where its stores may be, so
// undo can check them from any working directory); a path that cannot be made absolute is kept.
func absPaths(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if store.IsReference(p) {
			out[i] = store.Redact(p) // a database's reference: a name, not a file
			continue
		}
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		out[i] = p
	}
	return out
}

// writeManifest replaces manifest.json in dir durably (replaceStateFile); its temp file is a
// sibling (".manifest.json<digits>", never in $TMPDIR), which CleanLeftovers removes after a
// crash.
func writeManifest(dir string, m *Manifest) error {
	b, err := marshalManifest(m)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, manifestName)
	if err := fileio.Fault(fileio.FaultWrite, path); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	if err := replaceStateFile(path, func(pf *renameio.PendingFile) error {
		_, err := pf.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// ReadRun loads the manifest of a run directory. For a run interrupted before its manifest was
// final, or whose manifest is missing or damaged, the files are recovered from the journal
// (every "commit" not followed by "abort"); the manifest's other fields are then best effort.
// A manifest or a journal line whose checksum does not match (see trust.go) refuses the run
// with an *UntrustedError, also when the manifest is final (the journal is checked anyway).
func ReadRun(dir string) (*Manifest, error) {
	run := filepath.Base(dir)
	m, err := readManifest(dir, run)
	if errors.Is(err, ErrUntrustedRun) {
		return nil, err
	}
	if err != nil {
		files, jerr := recoverJournal(filepath.Join(dir, journalName), run, false)
		if jerr != nil {
			return nil, fmt.Errorf("read run %s: manifest: %v; journal: %w", filepath.Base(dir), err, jerr)
		}
		m = &Manifest{Version: 1, RunID: filepath.Base(dir), State: StateApplying, Files: files, dir: dir, unreadable: err.Error(),
			ToolNotes: []string{"manifest.json unreadable (" + err.Error() + "): files recovered from journal.jsonl"},
			Moves:     recoverMoves(filepath.Join(dir, journalName))}
		if fi, serr := os.Stat(dir); serr == nil {
			m.Created = fi.ModTime().UTC()
		}
		return m, nil
	}
	files, err := recoverJournal(filepath.Join(dir, journalName), run, m.Version >= sealedVersion)
	if m.State == StateApplying {
		if err != nil {
			return nil, err
		}
		m.Files = files
		m.Moves = recoverMoves(filepath.Join(dir, journalName))
	} else if errors.Is(err, ErrUntrustedRun) {
		return nil, err
	}
	return m, nil
}

// recoverJournal returns the files the journal at path records (every "commit" or "done" not
// followed by "abort"). Each complete line must be sealed when sealed is set or when any line
// is, and its checksum must match; a last line without its newline that does not decode is
// the torn write of an interrupted run and is left out. The entries are light (readrun.go):
// without their Sites, read back from their line when undo restores the store.
func recoverJournal(path, run string, sealed bool) ([]FileEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	pending := map[string]*FileEntry{}
	var order []string
	r := bufio.NewReader(f)
	var off int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		lineOff := off
		off += int64(len(line))
		if len(line) > 0 {
			torn := line[len(line)-1] != '\n'
			body := bytes.TrimSuffix(line, []byte("\n"))
			isSealed, ok := checkSeal(body, journalSealPrefix)
			var e journalEntry
			derr := json.Unmarshal(body, &e)
			switch {
			case torn && (derr != nil || !ok):
				// the torn last write of a killed run: it recorded nothing yet
				derr = errTorn
			case isSealed && !ok:
				return nil, &UntrustedError{Run: run, Where: fmt.Sprintf("%s line %d", journalName, n), Reason: "its checksum does not match its content (edited or damaged)"}
			case !isSealed && sealed:
				return nil, &UntrustedError{Run: run, Where: fmt.Sprintf("%s line %d", journalName, n), Reason: "the line carries no checksum (edited or damaged)"}
			case derr != nil:
				return nil, &UntrustedError{Run: run, Where: fmt.Sprintf("%s line %d", journalName, n), Reason: "not a journal entry: " + derr.Error()}
			}
			if isSealed {
				sealed = true
			}
			if derr == nil {
				switch e.Event {
				case "commit", "done":
					if e.Entry != nil {
						p := e.Entry.Ref.Path
						if _, ok := pending[p]; !ok {
							order = append(order, p)
						}
						e.Entry.Sites, e.Entry.SiteData = nil, nil
						e.Entry.src = &entrySrc{file: journalName, off: lineOff, n: len(body), sum: sha256.Sum256(body), journal: true}
						pending[p] = e.Entry
					}
				case "abort":
					delete(pending, e.Path)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read journal: %w", err)
		}
	}
	var out []FileEntry
	for _, p := range order {
		if e, ok := pending[p]; ok {
			out = append(out, *e)
		}
	}
	return out, nil
}

// RunInfo is one run in a listing.
type RunInfo struct {
	ID       string    `json:"run_id"`
	Dir      string    `json:"dir"`
	Created  time.Time `json:"created"`
	State    string    `json:"state"`
	Files    int       `json:"files"`
	Names    int       `json:"names"`
	Skipped  int       `json:"skipped"`
	Command  string    `json:"command,omitempty"`
	ReadErr  string    `json:"error,omitempty"`
	Restored int       `json:"restored"`
	// Moves counts the stores the run moved (Manifest.Moves), MovesUndone those moved back.
	Moves       int `json:"moves,omitempty"`
	MovesUndone int `json:"moves_undone,omitempty"`
	// Untrusted is set when ReadErr is an *UntrustedError (a sealed manifest or journal that
	// fails its checksum: edited or damaged), so the run did record changes.
	Untrusted bool `json:"-"`
}

// ListRuns returns the runs under stateDir, oldest first. A run whose manifest cannot be read
// is listed with ReadErr set.
func ListRuns(stateDir string) ([]RunInfo, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, runsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(stateDir, runsDir, e.Name())
		ri := RunInfo{ID: e.Name(), Dir: dir}
		m, err := ReadRun(dir)
		if err != nil {
			ri.ReadErr, ri.Untrusted = err.Error(), errors.Is(err, ErrUntrustedRun)
			out = append(out, ri)
			continue
		}
		ri.Created, ri.State, ri.Command, ri.Skipped = m.Created, m.State, m.Command, len(m.Skipped)
		ri.Files = len(m.Files)
		if m.State == StateApplying && !runLive(dir) {
			// Killed before its manifest was final (no process holds its journal): what the
			// journal recorded is listed, and undone, like any partial run.
			ri.State = StatePartial
		}
		for _, f := range m.Files {
			ri.Names += f.Edits
			if f.Restored {
				ri.Restored++
			}
		}
		ri.Moves = len(m.Moves)
		for _, mv := range m.Moves {
			if mv.Restored {
				ri.MovesUndone++
			}
		}
		out = append(out, ri)
	}
	// Oldest first by creation time (to the nanosecond; ids only carry the second), then id.
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// nothingJournaled reports whether the journal at path records no change ("commit" or "done")
// and no temp file still to clean up: the run it belongs to left nothing behind.
func nothingJournaled(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	open, moving := map[string]bool{}, map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e journalEntry
		if json.Unmarshal(line, &e) != nil {
			return false
		}
		switch e.Event {
		case "abort":
		case "move":
			moving[e.Path] = true
		case "move-abort":
			delete(moving, e.Path)
		case fileio.TempCreating:
			open[e.Path] = true
		case fileio.TempForeign, fileio.TempGone:
			delete(open, e.Path)
		default:
			return false
		}
	}
	return len(open) == 0 && len(moving) == 0
}

// errTorn marks the torn last line of a journal.
var errTorn = errors.New("torn journal line")

// runLive reports whether a process (a fix or undo of this run) holds the run's journal lock.
func runLive(dir string) bool {
	jpath := filepath.Join(dir, journalName)
	if _, err := os.Stat(jpath); err != nil {
		return false
	}
	lk := flock.New(jpath)
	ok, err := lk.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = lk.Unlock()
		return false
	}
	return true
}

// ErrNoRun means no run matches the request.
var ErrNoRun = errors.New("no such run")

// ErrNothingToUndo means FindRun's newest-run search found no run with changes left to undo
// (none was recorded, or every one was undone): not a failure, like "nothing to change".
var ErrNothingToUndo = errors.New("nothing to undo")

// FindRun resolves a run id (or unique prefix), or with last the newest run that still has
// changes to undo. With last, a refused run (RunInfo.Untrusted: its sealed manifest or journal
// was edited or damaged) newer than that one, by id, is an error naming it: it recorded
// changes, so "nothing to undo", or undoing an older run instead, would hide them (review5).
func FindRun(stateDir, id string, last bool) (string, error) {
	runs, err := ListRuns(stateDir)
	if err != nil {
		return "", err
	}
	if last {
		found := -1
		for i := len(runs) - 1; i >= 0; i-- {
			r := runs[i]
			if r.ReadErr == "" && r.Files+r.Moves > 0 && r.State != StateUndone {
				found = i
				break
			}
		}
		var refused *RunInfo
		for i := range runs {
			r := &runs[i]
			if r.Untrusted && (found < 0 || r.ID > runs[found].ID) && (refused == nil || r.ID > refused.ID) {
				refused = r
			}
		}
		switch {
		case refused != nil:
			return "", fmt.Errorf("the newest run %s cannot be read (%s); undo --last does not pass over it (sessionfix runs lists the runs)", refused.ID, refused.ReadErr)
		case found >= 0:
			return runs[found].Dir, nil
		}
		return "", fmt.Errorf("%w: no run in %s has changes left to undo", ErrNothingToUndo, stateDir)
	}
	var match []RunInfo
	for _, r := range runs {
		if r.ID == id {
			return r.Dir, nil
		}
		if strings.HasPrefix(r.ID, id) {
			match = append(match, r)
		}
	}
	switch len(match) {
	case 1:
		return match[0].Dir, nil
	case 0:
		return "", fmt.Errorf("%w: %q in %s", ErrNoRun, id, stateDir)
	default:
		return "", fmt.Errorf("%w: %q is ambiguous (%d runs)", ErrNoRun, id, len(match))
	}
}

// UndoOutcome is what undo did to one store.
type UndoOutcome struct {
	Ref   store.Ref
	Names int
	// Move is set when the outcome is a move undone (Ref is the store at its old path, where
	// it was moved back to).
	Move *MoveEntry
	Err  error
	// Already is set when the store already held its original content.
	Already bool
	// Kept is where a forced restore (--force, over a store that changed since the run) kept
	// the store's content from before the undo (fileio.WithKeptRecorder); "" otherwise.
	Kept string
	// Notes are what the store said about how it was restored (fileio.WithNoteRecorder: a
	// database put back row by row, not byte for byte, and why).
	Notes []string
}

// Opener reopens a recorded store for undo (agent/all.Open).
type Opener func(store.Ref) (store.Store, error)

// Undo restores every file of the run in dir from its backup, newest change first, through the
// store's Restorer: byte for byte, with the original mode and mtime. A store that changed since
// the run (its content is not the run's "after" content) is refused unless force is set; the
// others are still restored. The manifest records what was restored. A run that fails its
// checksums (ReadRun) or CheckRun is refused as a whole (an *UntrustedError): nothing is
// restored, --force or not.
func Undo(ctx context.Context, dir string, open Opener, force bool, now func() time.Time) ([]UndoOutcome, *Manifest, error) {
	m, err := ReadRun(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckRun(dir, m); err != nil {
		return nil, m, err
	}
	return UndoRun(ctx, dir, m, open, force, now)
}

// UndoRun is Undo for a manifest the caller already read with ReadRun and checked with
// CheckRun (undo shows what it will restore before it asks), so the run is read once; m is
// updated and written back as Undo does.
func UndoRun(ctx context.Context, dir string, m *Manifest, open Opener, force bool, now func() time.Time) ([]UndoOutcome, *Manifest, error) {
	// The run's journal records undo's temp files too (see CleanLeftovers).
	j, err := openJournal(filepath.Join(dir, journalName))
	if err != nil {
		return nil, nil, err
	}
	defer j.close()
	ctx = fileio.WithTempRecorder(ctx, j.recordTemp)
	if m.dir == "" {
		m.dir = dir
	}
	er := &entryReader{dir: m.dir, run: m.RunID}
	defer er.close()
	var out []UndoOutcome
	// Moves first (newest first): a store moved and rewritten gets its bytes back at its old
	// path.
	for _, u := range undoMoves(ctx, m, force) {
		mv := u.Entry
		out = append(out, UndoOutcome{Ref: store.Ref{Path: mv.From, Kind: mv.Kind}, Move: &mv, Err: u.Err, Already: u.Already})
	}
	for i := len(m.Files) - 1; i >= 0; i-- {
		f := &m.Files[i]
		o := UndoOutcome{Ref: f.Ref, Names: f.Edits}
		if f.Restored {
			o.Already = true
			out = append(out, o)
			continue
		}
		full, err := er.full(f) // with its Sites
		var st store.Store
		if err == nil {
			st, err = open(f.Ref)
		}
		if err == nil {
			r, ok := st.(store.Restorer)
			if !ok {
				err = fmt.Errorf("%s: the %s backend cannot restore", f.Ref.Path, f.Ref.Kind)
			} else {
				rctx := fileio.WithKeptRecorder(ctx, func(kept string) { o.Kept = kept })
				rctx = fileio.WithNoteRecorder(rctx, func(n string) { o.Notes = append(o.Notes, n) })
				err = r.Restore(rctx, &full.Change, force)
			}
		}
		var ce *fileio.CommittedError
		if err == nil || errors.As(err, &ce) {
			// Restored (a CommittedError: the edits were reversed, with a late append
			// carried over).
			f.Restored = true
		}
		o.Err = err
		out = append(out, o)
	}
	restored := 0
	for _, f := range m.Files {
		if f.Restored {
			restored++
		}
	}
	for _, mv := range m.Moves {
		if mv.Restored {
			restored++
		}
	}
	if restored == len(m.Files)+len(m.Moves) {
		m.State = StateUndone
		t := now().UTC()
		m.UndoneAt = &t
	} else if restored > 0 {
		m.State = StatePartiallyUndone
	}
	if err := writeManifestFrom(dir, m, er); err != nil {
		return out, m, err
	}
	return out, m, nil
}

// Leftover is a temp file a killed run or undo left, removed by CleanLeftovers.
type Leftover struct {
	Path  string `json:"path"`
	RunID string `json:"run_id"`
	// Store is the file the temp was for ("" for a manifest temp).
	Store string `json:"store,omitempty"`
	// Err is set when the file could not be removed.
	Err error `json:"-"`
}

// CleanLeftovers removes the temp files of runs (and undos) under stateDir that were killed:
// a file is removed only when it is provably sessionfix's own, that is
//
//   - a store's temp (".<name><digits>" beside it) that the run's journal announced
//     (fileio.TempCreating) and never marked gone, or
//   - a manifest temp (".manifest.json<digits>") inside the run's own directory;
//
// and it is a regular file, the run's journal is not locked by a live sessionfix process, and
// the store is not locked either. It returns what it removed (or failed to remove). Temp files
// of versions that did not journal them are left to scan's warning.
func CleanLeftovers(stateDir string) ([]Leftover, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, runsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []Leftover
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(stateDir, runsDir, e.Name())
		out = append(out, cleanRun(dir, e.Name())...)
	}
	return out, nil
}

func cleanRun(dir, id string) []Leftover {
	jpath := filepath.Join(dir, journalName)
	if _, err := os.Stat(jpath); err != nil {
		return nil
	}
	if writableByOthers(dir) != "" {
		return nil // its journal could name any file to remove (undo says why)
	}
	lk := flock.New(jpath)
	if ok, err := lk.TryLock(); err != nil || !ok {
		return nil // a live run or undo (or no journal)
	}
	defer lk.Unlock()
	var out []Leftover
	remove := func(l Leftover) {
		fi, err := os.Lstat(l.Path)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		if err := os.Remove(l.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.Err = err
		}
		out = append(out, l)
	}
	// Manifest temps of this run.
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if fileio.IsTempName(e.Name(), manifestName) {
				remove(Leftover{Path: filepath.Join(dir, e.Name()), RunID: id})
			}
		}
	}
	// Store temps the journal announced and never saw gone.
	jf, err := os.Open(jpath)
	if err != nil {
		return out
	}
	open := map[string]string{}
	var order []string
	jr := bufio.NewReader(jf) // line by line: the journal holds every entry (grows with the run)
	for {
		line, rerr := jr.ReadBytes('\n')
		if rerr != nil && len(line) == 0 {
			break
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		var je journalEntry
		if sealed, ok := checkSeal(line, journalSealPrefix); sealed && !ok {
			continue // an edited line names no file to remove
		}
		if json.Unmarshal(line, &je) != nil {
			continue
		}
		switch je.Event {
		case fileio.TempCreating:
			if _, ok := open[je.Path]; !ok {
				order = append(order, je.Path)
			}
			open[je.Path] = je.Store
		case fileio.TempForeign, fileio.TempGone:
			delete(open, je.Path)
		}
	}
	jf.Close()
	var gone []journalEntry
	locked := map[string]bool{} // store → locked by another process
	for _, tmp := range order {
		target, ok := open[tmp]
		if !ok || target == "" || filepath.Dir(tmp) != filepath.Dir(target) || !fileio.IsTempName(filepath.Base(tmp), filepath.Base(target)) {
			continue
		}
		if _, err := os.Lstat(tmp); err != nil {
			gone = append(gone, journalEntry{Event: fileio.TempGone, Path: tmp, Store: target, Reason: "not found by cleanup"})
			continue
		}
		// A store another process locks (a sessionfix run using its own journal) keeps its temp.
		// Each store is locked once (a second flock of ours would fail against the first).
		busy, seen := locked[target]
		if !seen {
			slk := flock.New(target)
			ok, err := slk.TryLock()
			busy = err == nil && !ok
			locked[target] = busy
			if ok {
				defer slk.Unlock()
			}
		}
		if busy {
			continue
		}
		n := len(out)
		remove(Leftover{Path: tmp, RunID: id, Store: target})
		if len(out) > n && out[n].Err == nil {
			gone = append(gone, journalEntry{Event: fileio.TempGone, Path: tmp, Store: target, Reason: "removed by cleanup"})
		}
	}
	if len(gone) > 0 {
		if err := cutTornTail(jpath); err != nil {
			return out
		}
		if f, err := os.OpenFile(jpath, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			var buf []byte
			for _, g := range gone {
				if b, err := marshalJournalLine(g); err == nil {
					buf = append(buf, b...)
				}
			}
			if fi, err := f.Stat(); err == nil {
				if n, err := f.Write(buf); err != nil && n > 0 {
					_ = f.Truncate(fi.Size()) // no half line (a full disk)
				}
			}
			_ = f.Sync()
			f.Close()
		}
	}
	return out
}
