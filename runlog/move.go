package runlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// A run may move stores as well as rewrite them (fix --apply --move-legacy): a store an agent's
// newest release no longer opens where it lies (agent.Agent.Relocate: a flat transcript
// where a directory is expected) is renamed to where that release opens the same bytes. A move is a record kind
// of its own beside the rewritten files, never a change of a file's bytes:
//
//   - journal: a "move" line (sealed, fsynced) before the move names from and to; a
//     "move-dir" line (fsynced) before each directory the move makes names it; a "moved"
//     line after it holds the whole MoveEntry; a "move-abort" line says the move did not
//     happen;
//   - manifest: "moves" (Manifest.Moves), the moves made, in the order made;
//   - undo: moves are reversed first (newest first), then the files restored, so a store that
//     was both rewritten and moved gets its bytes back at its old path.

// MoveEntry records one store a run moved (Manifest.Moves).
type MoveEntry struct {
	fileio.Move
	// Kind is the store's kind (the file is the same store at its new path).
	Kind store.Kind `json:"kind"`
	// Why is the agent's reason, for the plan and the run's listing.
	Why string `json:"why,omitempty"`
	// Restored is set once undo moved it back.
	Restored bool `json:"restored,omitempty"`
}

// Move moves the store ref to the path to, for the reason why, and records it (after the
// run's rewrites: fix --apply --move-legacy): the move is journaled ("move" then "moved" or
// "move-abort") and, when made, recorded in the manifest; a move that fails leaves the store
// where it was, is listed as skipped and its error returned. A move made whose last step
// failed (a directory fsync after the old name was removed) or that the journal could not
// record is recorded all the same and its error returned as a *fileio.MovedError. The entry
// returned is what was recorded (its Made: the directories the move created).
func (r *Run) Move(ctx context.Context, ref store.Ref, to, why string) (MoveEntry, error) {
	e := MoveEntry{Move: fileio.Move{From: ref.Path, To: to}, Kind: ref.Kind, Why: why}
	r.mu.Lock()
	err := r.start()
	r.mu.Unlock()
	if err == nil {
		// The store's rewrite (if any) durable at its path before it is linked elsewhere.
		err = r.syncDirs()
	}
	if err == nil {
		err = r.widenRootsFor(ref.Path, to)
	}
	if err == nil {
		err = r.j.append(journalEntry{Event: "move", Path: ref.Path, Move: &e})
	}
	if err == nil {
		var m fileio.Move
		// Each directory the move makes journaled first: a run killed before the "moved" line
		// still tells undo which directories are the move's (recoverMoves).
		mctx := fileio.WithMadeDirRecorder(ctx, func(d string) error {
			return r.j.append(journalEntry{Event: "move-dir", Path: ref.Path, Dir: d})
		})
		m, err = fileio.MoveFile(mctx, ref.Path, to)
		e.Move = m
	}
	var moved *fileio.MovedError
	if err != nil && !errors.As(err, &moved) {
		if r.j != nil {
			_ = r.j.append(journalEntry{Event: "move-abort", Path: ref.Path, Reason: err.Error()})
		}
		r.mu.Lock()
		if r.m != nil {
			r.m.Skipped = append(r.m.Skipped, Skipped{Ref: ref, Reason: "not moved to " + to + ": " + err.Error(), InUse: errors.Is(err, store.ErrInUse)})
		}
		r.mu.Unlock()
		return e, err
	}
	// Moved (err, if any, a *fileio.MovedError: the move is made all the same): recorded.
	if jerr := r.j.append(journalEntry{Event: "moved", Path: ref.Path, Move: &e}); jerr != nil {
		err = &fileio.MovedError{Err: fmt.Errorf("the journal could not record it: %w", jerr)}
	}
	r.mu.Lock()
	r.m.Moves = append(r.m.Moves, e)
	if len(r.opt.Roots) == 0 {
		r.m.Roots = append(r.m.Roots, absPaths([]string{filepath.Dir(e.From)})...)
	}
	r.mu.Unlock()
	return e, err
}

// widenRootsFor adds the store's directory to the run's roots, on disk before the move, when
// the run was given the store file itself (fix --move-legacy --apply FILE, or a plan's files as
// roots) and the move's target lies beside it, outside those roots: without it undo refuses
// the whole run ("outside the run's roots"), the rewrite included. Only the directory holding
// a file the operator named is added, and only when it holds the target.
func (r *Run) widenRootsFor(path, to string) error {
	if len(r.opt.Roots) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	roots, err := absRoots(r.m.Roots)
	if err != nil {
		return err
	}
	from, to := filepath.Clean(path), filepath.Clean(to)
	if _, ok := underRoot(to, roots); ok {
		return nil
	}
	dir := filepath.Dir(from)
	if _, ok := underRoot(dir, roots); ok {
		return nil // the directory is a root's descendant already; the target is elsewhere
	}
	if _, ok := underRoot(to, []string{dir}); !ok {
		return nil // CheckRun names it at undo
	}
	isRoot := false
	for _, root := range roots {
		if root == from {
			isRoot = true
		}
	}
	if !isRoot {
		return nil
	}
	r.m.Roots = append(r.m.Roots, absPaths([]string{dir})...)
	return writeManifest(r.dir, r.m)
}

// checkMoves checks the moves of a manifest as CheckRun checks its files: absolute, clean
// paths under the run's roots, no symbolic link on the way from the root.
func checkMoves(m *Manifest, roots []string) error {
	for i := range m.Moves {
		mv := &m.Moves[i]
		if mv.Restored {
			continue
		}
		for _, p := range append([]string{mv.From, mv.To}, mv.Made...) {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p || hasDotDot(p) {
				return &UntrustedError{Run: m.RunID, Where: fmt.Sprintf("manifest move %d", i+1), Reason: fmt.Sprintf("the path %q is not absolute and clean", p)}
			}
			root, ok := underRoot(p, roots)
			if !ok {
				return &UntrustedError{Run: m.RunID, Where: fmt.Sprintf("manifest move %d", i+1), Reason: fmt.Sprintf("the path %q is outside the run's roots (%s)", p, strings.Join(m.Roots, ", "))}
			}
			if link := symlinkBelow(root, p); link != "" {
				return &UntrustedError{Run: m.RunID, Where: fmt.Sprintf("manifest move %d", i+1), Reason: link + " is a symlink (a run never moves through one)"}
			}
		}
		if filepath.Dir(mv.From) == filepath.Dir(mv.To) && filepath.Base(mv.From) == filepath.Base(mv.To) {
			return &UntrustedError{Run: m.RunID, Where: fmt.Sprintf("manifest move %d", i+1), Reason: "from and to are the same path"}
		}
	}
	return nil
}

// UndoMove is what undo did to one move.
type UndoMove struct {
	Entry MoveEntry
	Err   error
	// Already is set when the move had been undone before.
	Already bool
}

// undoMoves moves the run's moved stores back, newest first (fileio.UnmoveFile), marking each
// one undone in m.
func undoMoves(ctx context.Context, m *Manifest, force bool) []UndoMove {
	var out []UndoMove
	for i := len(m.Moves) - 1; i >= 0; i-- {
		mv := &m.Moves[i]
		if mv.Restored {
			out = append(out, UndoMove{Entry: *mv, Already: true})
			continue
		}
		err := fileio.UnmoveFile(ctx, mv.Move, force)
		if err == nil {
			mv.Restored = true
		}
		out = append(out, UndoMove{Entry: *mv, Err: err})
	}
	return out
}

// recoverMoves returns the moves the journal at path records: a "moved" line's entry, or, for
// a "move" line with neither "moved" nor "move-abort" after it (a run killed during the move),
// the entry it names (from and to: undo then finds the file under either name) with the
// directories its "move-dir" lines announced as Made (undo removes them when empty). The
// journal's seals are ReadRun's to check (recoverJournal).
func recoverMoves(path string) []MoveEntry {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []MoveEntry
	at := map[string]int{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e journalEntry
		if len(line) == 0 || json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e.Event {
		case "move", "moved":
			if e.Move == nil {
				continue
			}
			if i, ok := at[e.Path]; ok && out[i].From != "" {
				out[i] = *e.Move
				continue
			}
			at[e.Path] = len(out)
			out = append(out, *e.Move)
		case "move-dir":
			if i, ok := at[e.Path]; ok && e.Dir != "" && !slices.Contains(out[i].Made, e.Dir) {
				out[i].Made = append(slices.Clip(out[i].Made), e.Dir)
			}
		case "move-abort":
			if i, ok := at[e.Path]; ok {
				out[i] = MoveEntry{}
				delete(at, e.Path)
			}
		}
	}
	kept := out[:0]
	for _, m := range out {
		if m.From != "" {
			kept = append(kept, m)
		}
	}
	return kept
}
