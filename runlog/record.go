package runlog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
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

// Options says where and how a run is recorded.
type Options struct {
	StateDir string
	Command  string
	// Roots are the paths the run was asked to fix; undo restores only stores under them (see
	// CheckRun). Empty: each rewritten store is recorded as its own root.
	Roots []string
	Now   func() time.Time
	// Profile is the --profile the stores were read with (nil: none), recorded in the manifest.
	Profile *RunProfile
}

// Run is one apply run's record: its directory, journal and manifest are created on the first
// store that needs a rewrite (Rewrite, Refuse or Move). Safe for concurrent use.
//
// Memory stays flat whatever the number of stores: a rewritten store's FileEntry (its byte
// edits, one per name) is not kept; the run keeps where the journal's "done" line holding it
// starts (fileRef), and Finish streams the entries from the journal into manifest.json.
type Run struct {
	opt     Options
	now     func() time.Time
	mu      sync.Mutex
	dir     string
	id      string
	j       *journal
	m       *Manifest // header: Files stays nil
	files   []fileRef
	seq     int
	initErr error
	// dirs are the store directories whose fsync after a rename waits for the end of the run
	// (syncDirs): each is fsynced once, before the final manifest or a move.
	dirs fileio.DirSyncs
}

// fileRef is one rewritten store of a run: the journal line (offset, length) whose entry the
// manifest records, or the entry itself when that line could not be written (a full disk).
type fileRef struct {
	path  string
	off   int64
	n     int
	entry *FileEntry
}

// New returns the record of a run not started yet (nothing is created until a store needs it).
func New(opt Options) *Run {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	return &Run{opt: opt, now: now}
}

// start creates the run directory once.
func (r *Run) start() error {
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
	r.m = &Manifest{Version: ManifestVersion, RunID: r.id, Created: created.UTC(), Command: r.opt.Command, Roots: absPaths(r.opt.Roots), State: StateApplying, Profile: r.opt.Profile}
	r.initErr = writeManifest(r.dir, r.m)
	return r.initErr
}

// begin starts the run on its first store and numbers the store (its backup's prefix).
func (r *Run) begin() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.start()
	r.seq++
	return r.seq, err
}

// Refuse records a planned store that is not rewritten at all (err says why: its backend cannot
// write): the run is started and the store listed as skipped. It returns err, or the error that
// kept the run from starting (the store is then not recorded).
func (r *Run) Refuse(ref store.Ref, err error) error {
	if _, serr := r.begin(); serr != nil {
		return serr
	}
	r.record(ref, nil, err, fileRef{})
	return err
}

// Rewrite runs and records one store's rewrite: apply rewrites it, given the backup path, the
// sites file path and the hook that journals the change ("commit", fsynced) before the new
// content replaces the old; ren and names describe the edits (FileEntry.Renames, names
// changed). The outcome is journaled ("done", or "abort" with why) and recorded in the
// manifest (a rewritten store's entry, or the store as skipped). It returns the change (nil
// when the store was not rewritten) and apply's error: with a change, an error that happened
// after the new content was in place (a *fileio.CommittedError). When the run cannot start,
// apply is not called and that error is returned.
func (r *Run) Rewrite(ctx context.Context, ref store.Ref, ren []Rename, names int,
	apply func(context.Context, store.ApplyOptions) (*store.Change, error)) (*store.Change, error) {
	seq, err := r.begin()
	if err != nil {
		return nil, err
	}
	ch, fr, err := r.rewrite(ctx, ref, ren, names, seq, apply)
	r.record(ref, ch, err, fr)
	return ch, err
}

// record adds one store's outcome to the manifest: a rewritten store (ch set) to its files, its
// warnings and a late error to its notes; another to its skipped stores.
func (r *Run) record(ref store.Ref, ch *store.Change, err error, fr fileRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch == nil {
		r.m.Skipped = append(r.m.Skipped, Skipped{Ref: ref, Reason: err.Error(), InUse: errors.Is(err, store.ErrInUse)})
		return
	}
	r.files = append(r.files, fr)
	if len(r.opt.Roots) == 0 {
		// No roots given (a library caller): each rewritten store is its own root, so undo
		// still has a bound to check paths against.
		r.m.Roots = append(r.m.Roots, absPaths([]string{ref.Path})...)
	}
	for _, w := range ch.Warnings {
		r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: %s", ref.Path, w))
	}
	if err != nil {
		r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: rewritten, then: %s", ref.Path, err))
	}
}

// rewrite runs one store's rewrite (apply, with the backup path and the journal hook it is
// given) and journals it. The fileRef it returns for a rewritten store names the journal's
// "done" line.
func (r *Run) rewrite(ctx context.Context, ref store.Ref, ren []Rename, names, seq int,
	apply func(context.Context, store.ApplyOptions) (*store.Change, error)) (*store.Change, fileRef, error) {
	dir, j := r.dir, r.j
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
	ch, err := apply(fileio.WithDirSyncs(fileio.WithTempRecorder(ctx, j.recordTemp), &r.dirs), aopt)
	var ce *fileio.CommittedError
	if err != nil && (ch == nil || !errors.As(err, &ce)) {
		_ = j.append(journalEntry{Event: "abort", Path: ref.Path, Reason: err.Error()})
		return nil, fileRef{}, err
	}
	// Rewritten (err, if any, happened after the new content was in place): recorded.
	ch.Ref = ref
	ch.Edits = names
	entry.Change = *ch
	done := journalEntry{Event: "done", Path: ref.Path, Entry: entry}
	if err != nil {
		done.Reason = err.Error()
	}
	fr := fileRef{path: ref.Path}
	var jerr error
	if fr.off, fr.n, jerr = j.appendLazy(done); jerr != nil {
		// The manifest must still record it: kept in memory (rare: a full disk).
		fr.entry = entry
	}
	return ch, fr, err
}

// Finished is what a finished run recorded.
type Finished struct {
	RunID string // "" when no run directory is left (nothing was rewritten)
	Dir   string
	// Manifest is the run's manifest without its file entries (Files is nil: they are
	// streamed to manifest.json, not held in memory; ReadRun(Dir) reads them back).
	Manifest *Manifest
	// Files is how many rewritten stores the manifest records.
	Files int
}

// Finish writes the final manifest (files sorted by path) and closes the journal;
// interrupted (the context's error, or nil) marks a run that stopped before every planned
// store was handled. A run that left nothing to undo (every store refused or failed before
// its rewrite) is removed. What the run recorded is returned even when the manifest cannot be
// written (a full disk): the stores are rewritten all the same, and the journal (fsynced
// before each replace) is what undo then reads.
func (r *Run) Finish(interrupted error) (Finished, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		return Finished{}, r.initErr
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
			return Finished{Manifest: r.m}, nil
		}
	}
	res := Finished{RunID: r.id, Dir: r.dir, Manifest: r.m, Files: len(r.files)}
	dirErr := r.syncDirsLocked()
	if err := r.writeFinalManifest(); err != nil {
		return res, fmt.Errorf("%w (the journal %s records every rewrite: undo reads it)", err, filepath.Join(r.dir, journalName))
	}
	return res, dirErr
}

// Durable returns once the rename of the rewritten store path is durable (its directory
// fsynced, or its file system synced: fileio.DirSyncs, shared with the other stores renamed
// meanwhile), to be called before the store is reported rewritten. An error means the store
// holds its new bytes but a power loss may undo the rename: it is noted in the manifest
// ("rewritten, then: …") and returned as a *fileio.CommittedError, as a rewrite's own error
// after its rename is.
func (r *Run) Durable(path string) error {
	err := r.dirs.Durable(path)
	if err == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ce := &fileio.CommittedError{Err: err}
	if r.m != nil {
		r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: rewritten, then: %s", path, ce))
	}
	return ce
}

// syncDirs makes the renames of the run's rewrites so far durable (fileio.DirSyncs.Sync).
func (r *Run) syncDirs() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.syncDirsLocked()
}

// syncDirsLocked is syncDirs with r.mu held. A store whose directory could not be made durable
// (and that Durable did not report) is noted in the manifest and the first such error returned.
func (r *Run) syncDirsLocked() error {
	failed := r.dirs.Sync()
	if len(failed) == 0 {
		return nil
	}
	paths := make([]string, 0, len(failed))
	for p := range failed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if r.m != nil {
			r.m.ToolNotes = append(r.m.ToolNotes, fmt.Sprintf("%s: rewritten, then: %s", p, &fileio.CommittedError{Err: failed[p]}))
		}
	}
	return fmt.Errorf("%s: %w", paths[0], &fileio.CommittedError{Err: failed[paths[0]]})
}

func sanitizeBase(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s)
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
