package runlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/sessionfix/sessionfix/internal/fileio"
)

// Undo and the run listing read a run entry by entry, so their memory does not grow with the
// corpus: a file entry's Sites (one byte edit per rewritten name: what grows) are not kept.
// ReadRun decodes manifest.json (or the journal) one entry at a time, checking the seal over
// the bytes as they stream past, and keeps each entry "light": every field but Sites, plus
// where its full JSON is (entrySrc) and the SHA-256 of those bytes as they were checked.
// Undo reads each entry back when it restores that store (Manifest.Entry), and refuses an
// entry whose bytes changed since ReadRun checked them; the manifest undo writes is streamed
// from the same source (streamManifest).

// entrySrc says where the full JSON of a light FileEntry is, in its run directory.
type entrySrc struct {
	file    string   // manifestName or journalName
	off     int64    // byte offset of the entry's JSON value (manifest) or line (journal)
	n       int      // its length in bytes (a journal line without its newline)
	sum     [32]byte // SHA-256 of those n bytes when ReadRun checked them
	journal bool     // a journal line: the entry is its "entry" member
}

// errManifestSyntax marks a manifest.json that does not decode as a manifest (ReadRun then
// recovers the run from its journal, as for a missing one).
var errManifestSyntax = errors.New("manifest does not decode")

// sealHasher hashes what is read through it, the 64 checksum digits that follow
// manifestSealPrefix hashed as zeros (the seal of trust.go).
type sealHasher struct {
	r   io.Reader
	h   hash.Hash
	pos int64
}

func (s *sealHasher) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	b := p[:n]
	lo, hi := int64(len(manifestSealPrefix)), int64(len(manifestSealPrefix)+64)
	if s.pos < hi && s.pos+int64(n) > lo {
		b = bytes.Clone(b)
		for i := range b {
			if q := s.pos + int64(i); q >= lo && q < hi {
				b[i] = '0'
			}
		}
	}
	s.h.Write(b)
	s.pos += int64(n)
	return n, err
}

// readManifest reads manifest.json of the run directory dir, its file entries light (see
// above). Errors: the open error for a missing or unreadable file, an error wrapping
// errManifestSyntax for one that does not decode (encoding/json's rules: members matched
// case-insensitively, the last of a repeated member wins, nothing but white space after the
// object), an *UntrustedError when its seal does not match or its version is later than
// ManifestVersion (verifySeal).
func readManifest(dir, run string) (*Manifest, error) {
	f, err := os.Open(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, len(manifestSealPrefix)+64)
	hn, _ := io.ReadFull(f, head)
	head = head[:hn]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	sh := &sealHasher{r: bufio.NewReaderSize(f, 64<<10), h: sha256.New()}
	dec := json.NewDecoder(sh)
	syntax := func(err error) error { return fmt.Errorf("%w: %v", errManifestSyntax, err) }
	m := &Manifest{}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if tok != nil { // a "null" document decodes to the zero manifest, as json.Unmarshal does
		if tok != json.Delim('{') {
			return nil, syntax(fmt.Errorf("not a JSON object"))
		}
		var header bytes.Buffer
		header.WriteByte('{')
		var files []FileEntry
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, syntax(err)
			}
			key, _ := kt.(string)
			if strings.EqualFold(key, "files") {
				if files, err = readEntries(dec); err != nil {
					return nil, syntax(err)
				}
				continue
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, syntax(err)
			}
			if header.Len() > 1 {
				header.WriteByte(',')
			}
			kb, _ := json.Marshal(key)
			header.Write(kb)
			header.WriteByte(':')
			header.Write(raw)
		}
		if _, err := dec.Token(); err != nil {
			return nil, syntax(err)
		}
		header.WriteByte('}')
		if err := json.Unmarshal(header.Bytes(), m); err != nil {
			return nil, syntax(err)
		}
		m.Files = files
	}
	// Nothing but white space may follow; every byte goes through the hash.
	rest := bufio.NewReader(io.MultiReader(dec.Buffered(), sh))
	for {
		c, err := rest.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, syntax(fmt.Errorf("invalid character %q after top-level value", c))
		}
	}
	sealed := bytes.HasPrefix(head, manifestSealPrefix) && len(head) == len(manifestSealPrefix)+64
	ok := sealed && hex.EncodeToString(sh.h.Sum(nil)) == string(head[len(manifestSealPrefix):])
	if err := verifySeal(run, sealed, ok, m); err != nil {
		return nil, err
	}
	m.dir = dir
	return m, nil
}

// readEntries decodes the value of the manifest's "files" member (null or an array of
// entries) one entry at a time, each kept light.
func readEntries(dec *json.Decoder) ([]FileEntry, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("files: not an array")
	}
	files := []FileEntry{}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var e FileEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		e.Sites, e.SiteData = nil, nil
		e.src = &entrySrc{file: manifestName, off: dec.InputOffset() - int64(len(raw)), n: len(raw), sum: sha256.Sum256(raw)}
		files = append(files, e)
	}
	_, err = dec.Token()
	return files, err
}

// Entry returns the i-th file entry of m whole (with its Sites): m.Files[i] itself when it
// was built in memory, else read back from the run file ReadRun read it from. The error wraps
// ErrUntrustedRun when those bytes are no longer the ones ReadRun checked.
func (m *Manifest) Entry(i int) (*FileEntry, error) {
	er := entryReader{dir: m.dir, run: m.RunID}
	defer er.close()
	return er.full(&m.Files[i])
}

// entryReader reads full entries back for light ones, keeping the run files it opened open.
type entryReader struct {
	dir, run string
	open     map[string]*os.File
	buf      []byte
}

func (r *entryReader) full(f *FileEntry) (*FileEntry, error) {
	s := f.src
	if s == nil {
		return f, nil
	}
	fd := r.open[s.file]
	if fd == nil {
		var err error
		if fd, err = os.Open(filepath.Join(r.dir, s.file)); err != nil {
			return nil, fmt.Errorf("read entry of %s: %w", f.Ref.Path, err)
		}
		if r.open == nil {
			r.open = map[string]*os.File{}
		}
		r.open[s.file] = fd
	}
	if cap(r.buf) < s.n {
		r.buf = make([]byte, s.n)
	}
	b := r.buf[:s.n]
	if _, err := fd.ReadAt(b, s.off); err != nil || sha256.Sum256(b) != s.sum {
		return nil, fmt.Errorf("%w %s: %s, entry of store %q at byte %d: it changed after undo checked it (edited or damaged); not restored",
			ErrUntrustedRun, r.run, s.file, f.Ref.Path, s.off)
	}
	var e FileEntry
	if s.journal {
		var je journalEntry
		if err := json.Unmarshal(b, &je); err != nil || je.Entry == nil {
			return nil, fmt.Errorf("read entry of %s from %s at byte %d: not an entry", f.Ref.Path, s.file, s.off)
		}
		e = *je.Entry
	} else if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("read entry of %s from %s at byte %d: %w", f.Ref.Path, s.file, s.off, err)
	}
	e.Restored = f.Restored
	return &e, nil
}

func (r *entryReader) close() {
	for _, fd := range r.open {
		fd.Close()
	}
}

// writeManifestFrom replaces manifest.json of the run directory dir durably with m, streaming
// its entries (read back whole through er, in order); m's light entries then point at the new
// file.
func writeManifestFrom(dir string, m *Manifest, er *entryReader) error {
	path := filepath.Join(dir, manifestName)
	if err := faultWrite(path); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	srcs := make([]*entrySrc, len(m.Files))
	k := 0
	next := func() (*FileEntry, []byte, error) {
		f := &m.Files[k]
		k++
		e, err := er.full(f)
		if err != nil {
			// Changed since ReadRun checked it (the restore of that store was refused for
			// it): recorded as ReadRun checked it, without the sites it can no longer vouch
			// for (undo then restores that store only from its backup, not in place).
			c := *f
			c.src = nil
			return &c, nil, nil
		}
		return e, nil, nil
	}
	at := func(i int, off int64, b []byte) {
		if m.Files[i].src != nil {
			srcs[i] = &entrySrc{file: manifestName, off: off, n: len(b), sum: sha256.Sum256(b)}
		}
	}
	err := replaceStateFile(path, func(pf *renameio.PendingFile) error {
		sum, err := streamManifest(pf, m, len(m.Files), next, at)
		if err != nil {
			return err
		}
		_, err = pf.WriteAt(sum, int64(len(manifestSealPrefix)))
		return err
	})
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	for i, s := range srcs {
		if s != nil {
			m.Files[i].src = s
		}
	}
	m.Version = ManifestVersion
	return nil
}

// faultWrite asks the fault seam about writing path.
func faultWrite(path string) error { return fileio.Fault(fileio.FaultWrite, path) }

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
