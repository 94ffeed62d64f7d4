// Package rulefile is the storage engine of rule files that fix --rules rewrites: a rule file is
// a file plus a list of byte-range edits (store.FileEdit: offset, old bytes, new bytes) that an
// agent's permission package computed from the bytes it read. The engine knows no agent and no
// syntax (JSON, JSONC, TOML, a shell script, YAML: the edits carry their own bytes): Scan reads
// the file the way every store is opened (internal/fileio.OpenStore: O_NOFOLLOW|O_NONBLOCK, a
// FIFO never waited on, as root no link out of its owner's reach, pinned to the file found) and
// fingerprints it; Sites checks that every edit's old bytes are where the plan says and makes
// each a name site; Apply writes the edits through the crash-safe rewrite (temp file beside it,
// fsync, rename, directory fsync; owner, mode and mtime kept; refused with store.ErrInUse when
// the file changed since Scan or is open for writing), recording the byte edits for undo;
// Restore puts the backup back (internal/fileio.RestoreFile).
//
// The rewrite machinery (rewrite.Apply: the run, its backups, journal and manifest) drives it
// like any store; undo reopens a run's rule file by its Kind (agent/all).
package rulefile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/internal/fileio"
	"github.com/sessionfix/sessionfix/store"
)

// Kind is a rule file rewritten by fix --rules, whatever its agent and syntax. It is never
// detected by a scan: only fix --rules makes one, and undo reopens it by this kind.
const Kind store.Kind = "rule-file"

// Store is one rule file.
type Store struct {
	path string
	pin  store.FileID
}

// Open returns the rule file at path (nothing is read).
func Open(path string) *Store { return &Store{path: path} }

// Ref names the store.
func (s *Store) Ref() store.Ref { return store.Ref{Path: s.path, Kind: Kind} }

// Pin makes every later open of the store find the file id names, or none (store.Pinner).
func (s *Store) Pin(id store.FileID) { s.pin = id }

// content is what a scan keeps: the bytes read (rule files are small: a settings file, a
// script), for Sites to check the planned edits against.
type content struct{ data []byte }

// Scan reads the whole file: its state (size, mode, mtime, SHA-256, the file's id) and no
// sites (Sites makes them from a plan). An error wraps fs.ErrNotExist for a missing file, or
// is a *fileio.NotTheFileError for a link, FIFO or swapped file.
func (s *Store) Scan(ctx context.Context, opt store.ScanOptions) (*store.Snapshot, error) {
	f, fi, err := fileio.OpenStore(s.path, s.pin)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.path, err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.path, err)
	}
	if opt.Progress != nil {
		opt.Progress(int64(len(data)))
	}
	sum := sha256.Sum256(data)
	snap := &store.Snapshot{Ref: s.Ref(), Records: 1, State: store.FileState{Size: int64(len(data)), Mode: fi.Mode(),
		ModTime: fi.ModTime(), SHA256: hex.EncodeToString(sum[:]), ID: fileio.IDOf(fi)}}
	store.SetState(snap, &content{data: data})
	return snap, nil
}

// Sites returns one name site per edit of a file scanned as snap, in offset order: Loc.Offset
// is the edit's offset, Raw its old bytes (empty: an insertion), Name the old bytes as text,
// Path label(i) for the i-th edit given, Kind store.SiteRule. An error (nothing is returned)
// names the first edit whose old bytes are not at its offset in what Scan read, or that
// overlaps another: the plan was made on other bytes.
func Sites(snap *store.Snapshot, edits []store.FileEdit, label func(i int) string) ([]store.Site, error) {
	c := store.StateOf[content](snap)
	if c == nil {
		return nil, fmt.Errorf("%s: not a scanned rule file", snap.Ref.Path)
	}
	order := make([]int, len(edits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return edits[order[a]].At < edits[order[b]].At })
	out := make([]store.Site, 0, len(edits))
	var end int64
	for k, i := range order {
		e := edits[i]
		stop := e.At + int64(len(e.Old))
		switch {
		case e.At < 0 || stop > int64(len(c.data)) || !bytes.Equal(c.data[e.At:stop], []byte(e.Old)):
			return nil, fmt.Errorf("%s: %w: the bytes at offset %d are not %q (the file changed since the rule was read)", snap.Ref.Path, store.ErrTokenMismatch, e.At, e.Old)
		case k > 0 && (e.At < end || e.At == end && e.Old == "" && edits[order[k-1]].Old == ""):
			return nil, fmt.Errorf("%s: the edit at offset %d overlaps the one before it", snap.Ref.Path, e.At)
		}
		end = stop
		out = append(out, store.Site{Loc: store.Loc{Line: lineOf(c.data, e.At), Offset: e.At}, Kind: store.SiteRule, Path: label(i),
			Name: e.Old, Raw: []byte(e.Old)})
	}
	return out, nil
}

// EditSites is Sites (store.FileEditor).
func (s *Store) EditSites(snap *store.Snapshot, edits []store.FileEdit, label func(i int) string) ([]store.Site, error) {
	return Sites(snap, edits, label)
}

func lineOf(data []byte, off int64) int64 { return 1 + int64(bytes.Count(data[:off], []byte("\n"))) }

// Apply writes edits (a site of Sites and its new bytes, store.Edit.New taken as bytes, not as
// a name to quote) through the crash-safe file rewrite: each site's old bytes are checked at
// its offset as the file is copied (a mismatch: an *store.InUseError wrapping
// store.ErrTokenMismatch, nothing written), every other byte is copied as it is. The change
// records the byte edits (offsets of the new content) for undo.
func (s *Store) Apply(ctx context.Context, snap *store.Snapshot, edits []store.Edit, opt store.ApplyOptions) (*store.Change, error) {
	sorted := append([]store.Edit(nil), edits...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Site.Loc.Offset < sorted[j].Site.Loc.Offset })
	sites := byteEdits(sorted)
	commit := opt.BeforeCommit
	opt.BeforeCommit = func(ch *store.Change) error {
		ch.Sites = sites
		if commit != nil {
			return commit(ch)
		}
		return nil
	}
	want := snap.State
	if s.pin.Known() {
		want.ID = s.pin
	}
	ch, err := fileio.RewriteFile(ctx, s.path, want, splice(sorted), opt)
	if ch != nil {
		ch.Ref = s.Ref()
		ch.Edits = len(sorted)
	}
	return ch, err
}

// byteEdits are the edits as a run records them (offsets in the new content); nil when a token
// is not UTF-8 (a manifest holds text: undo then restores from the backup alone).
func byteEdits(sorted []store.Edit) []store.ByteEdit {
	out := make([]store.ByteEdit, 0, len(sorted))
	var delta int64
	for _, e := range sorted {
		if !utf8.Valid(e.Site.Raw) || !utf8.ValidString(e.New) {
			return nil
		}
		out = append(out, store.ByteEdit{At: e.Site.Loc.Offset + delta, Old: string(e.Site.Raw), New: e.New})
		delta += int64(len(e.New) - len(e.Site.Raw))
	}
	return out
}

// splice copies the file with the edits (sorted, not overlapping) made, checking each one's old
// bytes.
func splice(sorted []store.Edit) fileio.Transform {
	return func(dst io.Writer, src io.Reader) error {
		data, err := io.ReadAll(src)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		out.Grow(len(data) + 64*len(sorted))
		var at int64
		for _, e := range sorted {
			off, stop := e.Site.Loc.Offset, e.Site.Loc.Offset+int64(len(e.Site.Raw))
			if off < at || stop > int64(len(data)) || !bytes.Equal(data[off:stop], e.Site.Raw) {
				return &store.InUseError{Reason: fmt.Sprintf("line %d: the bytes at offset %d are not %q any more (content changed since it was planned)", e.Site.Loc.Line, off, e.Site.Raw),
					Err: store.ErrTokenMismatch}
			}
			out.Write(data[at:off])
			out.WriteString(e.New)
			at = stop
		}
		out.Write(data[at:])
		_, err = dst.Write(out.Bytes())
		return err
	}
}

// Restore puts the backup of ch back (fileio.RestoreFile: only when the file holds what the
// run wrote, or that plus appended bytes, unless force).
func (s *Store) Restore(ctx context.Context, ch *store.Change, force bool) error {
	return fileio.RestoreFile(ctx, s.path, ch, force)
}
