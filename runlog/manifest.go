package runlog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/renameio/v2"
)

// The final manifest of an apply run is streamed: its file entries are not held in memory
// (one per rewritten store, each with a byte edit per name: they grow with the corpus) but
// read back, one at a time in path order, from the journal's "done" lines (run.files says
// where each starts) and written out as they come; the seal (trust.go) is computed over the
// bytes as written, its 64 zero digits then patched in at their fixed offset. The bytes are
// those marshalManifest gives for the same manifest with Files filled in.

// filesMember is how marshalManifest writes an empty "files" member of the top-level object
// (a string value cannot hold the newline, so this is the member, not a string's content).
var filesMember = []byte("\n  \"files\": [")

// streamManifest writes the manifest m (its Files ignored) with the n entries next returns
// as its files, indented as marshalManifest does, the checksum left as 64 zeros; it returns
// the seal for those bytes (the hex digits to put in place of the zeros, at byte offset
// len(manifestSealPrefix)). at, when set, is told where each entry k's bytes b are in dst (byte
// offset off).
//
// next gives each entry either decoded (e) or as the compact JSON json.Marshal gives for it
// (raw, e nil: a journal line's "entry" member as written), which is indented as it is:
// json.MarshalIndent is json.Marshal then json.Indent, so both give the same bytes, and the
// journal's entries are not decoded and re-encoded one by one at the end of a run.
func streamManifest(dst io.Writer, m *Manifest, n int, next func() (e *FileEntry, raw []byte, err error), at func(k int, off int64, b []byte)) ([]byte, error) {
	var ind bytes.Buffer
	return streamIndented(dst, m, n, func() ([]byte, error) {
		e, raw, err := next()
		if err != nil {
			return nil, err
		}
		if e != nil {
			return json.MarshalIndent(e, "    ", "  ")
		}
		ind.Reset()
		if err := json.Indent(&ind, raw, "    ", "  "); err != nil {
			return nil, err
		}
		return ind.Bytes(), nil
	}, at)
}

// streamIndented is streamManifest with next giving each entry already indented (prefix
// "    ", indent "  "); b may be reused by next once the following entry is asked for.
func streamIndented(dst io.Writer, m *Manifest, n int, next func() (b []byte, err error), at func(k int, off int64, b []byte)) ([]byte, error) {
	c := *m
	c.Version = ManifestVersion
	c.Checksum = sealPlaceholder
	c.Files = []FileEntry{}
	head, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	head = append(head, '\n')
	if !bytes.HasPrefix(head, manifestSealPrefix) {
		return nil, fmt.Errorf("manifest: checksum is not the first member")
	}
	i := bytes.Index(head, filesMember)
	if i < 0 {
		return nil, fmt.Errorf("manifest: no files member")
	}
	i += len(filesMember) // head[i] is the closing ']'
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(dst, h), 64<<10)
	w.Write(head[:i])
	pos := int64(i)
	for k := range n {
		b, err := next()
		if err != nil {
			return nil, err
		}
		if k > 0 {
			w.WriteByte(',')
			pos++
		}
		w.WriteString("\n    ")
		pos += 5
		if at != nil {
			at(k, pos, b)
		}
		w.Write(b)
		pos += int64(len(b))
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.Write(head[i:])
	if err := w.Flush(); err != nil {
		return nil, err
	}
	sum := make([]byte, 64)
	hex.Encode(sum, h.Sum(nil))
	return sum, nil
}

// writeFinalManifest replaces manifest.json of the run with r.m and the entries of r.files
// (sorted by path), read back from the journal; like writeManifest it is replaced durably
// (replaceStateFile), its temp file a sibling (".manifest.json<digits>"). The entries are read
// and indented by two goroutines ahead of the one writing them (finalEntries): this step runs
// after every store is done, alone, and was a tenth of an apply's wall time (1 GiB corpus, 2
// cores, one idle).
func (r *Run) writeFinalManifest() error {
	path := filepath.Join(r.dir, manifestName)
	if err := faultWrite(path); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	jr, err := os.Open(filepath.Join(r.dir, journalName))
	if err != nil {
		return fmt.Errorf("write manifest: read journal: %w", err)
	}
	defer jr.Close()
	entries := finalEntries(jr, r.files, 2)
	defer entries.stop()
	err = replaceStateFile(path, func(pf *renameio.PendingFile) error {
		sum, err := streamIndented(pf, r.m, len(r.files), entries.next, nil)
		if err != nil {
			return err
		}
		_, err = pf.WriteAt(sum, int64(len(manifestSealPrefix)))
		return err
	})
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	r.m.Version = ManifestVersion
	return nil
}

// doneEntry returns the "entry" member of line, a journal "done" line of the store path as
// marshalJournalLine writes it — {"sum":"sha256:<64 hex>","event":"done","entry":{…},
// "path":<path>[,"reason":…]} — or an error when line is not that. The entry's own first member
// must be its store's path. The bytes are checked, not decoded: the entry is taken as written
// (json.Marshal's, see streamManifest), and json.Indent, which reads it next, refuses anything
// that is not JSON.
func doneEntry(line []byte, path string) ([]byte, error) {
	const head = `","event":"done","entry":`
	line = bytes.TrimSuffix(line, []byte("\n"))
	start := len(journalSealPrefix) + 64 + len(head)
	qp, err := json.Marshal(path)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndex(line, append([]byte(`,"path":`), qp...))
	if len(line) < start || !bytes.HasPrefix(line, journalSealPrefix) || string(line[start-len(head):start]) != head ||
		end < start || line[len(line)-1] != '}' {
		return nil, errNotDone
	}
	e := line[start:end]
	if !bytes.HasPrefix(e, append([]byte(`{"store":{"path":`), qp...)) || e[len(e)-1] != '}' {
		return nil, errNotDone
	}
	return e, nil
}

var errNotDone = errors.New("not a done line")

// entryStream is the ordered output of finalEntries.
type entryStream struct {
	out  []chan indentedEntry // entry k comes on out[k % workers]
	k    int
	quit chan struct{}
	wg   sync.WaitGroup
	gate entryGate
	last int64 // the journal bytes of the entry next returned last (given back at the next call)
}

type indentedEntry struct {
	b   []byte
	n   int64 // its journal line's length, as admitted by the gate
	err error
}

// entryBytes bounds the journal bytes of the entries finalEntries holds at once (read,
// indented, or waiting to be written; the indented copy is about as large again): an entry
// is one rewritten store's edits, about 220 bytes of journal per name, so a store of 70,000
// names is 12 MB of it: a few of those ahead (2 per reader, and 1 being made) held 80 MB.
// An entry larger than this is read when no other is held, alone. A variable for tests.
var entryBytes int64 = 8 << 20

// entryGate lets finalEntries' readers take their entries in order while the entries taken and
// not yet written hold at most entryBytes (or one entry, however large). In order, so that
// waiting cannot deadlock: the bytes an entry waits for are held by earlier entries, which the
// writer takes in turn.
type entryGate struct {
	mu    sync.Mutex
	cond  *sync.Cond
	next  int // the entry admitted next
	used  int64
	limit int64
	quit  bool
}

// admit waits until entry k may be read (the entries before it were, and its n bytes fit);
// false when the stream was stopped.
func (g *entryGate) admit(k int, n int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.quit && (g.next != k || (g.used > 0 && g.used+n > g.limit)) {
		g.cond.Wait()
	}
	if g.quit {
		return false
	}
	g.next++
	g.used += n
	g.cond.Broadcast()
	return true
}

// done gives n bytes back (an entry the writer is done with).
func (g *entryGate) done(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.used -= n
	g.cond.Broadcast()
}

// stop wakes every reader waiting in admit, for good.
func (g *entryGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.quit = true
	g.cond.Broadcast()
}

// finalEntries starts workers goroutines reading the entries of files from the journal jr and
// indenting them as streamManifest does (prefix "    ", indent "  "); next returns them in
// order. Each worker keeps a few entries ready (memory: a few entries, not the run; at most
// entryBytes of them, or one, see entryGate).
func finalEntries(jr io.ReaderAt, files []fileRef, workers int) *entryStream {
	s := &entryStream{quit: make(chan struct{})}
	s.gate.cond = sync.NewCond(&s.gate.mu)
	s.gate.limit = entryBytes
	for w := range workers {
		ch := make(chan indentedEntry, 2)
		s.out = append(s.out, ch)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			var line []byte
			for k := w; k < len(files); k += workers {
				res := indentedEntry{n: int64(files[k].n)}
				if !s.gate.admit(k, res.n) {
					return
				}
				res.b, line, res.err = indentEntry(jr, files[k], line)
				if int64(cap(line)) > entryBytes/4 {
					line = nil // not kept for the next entry: a large one is held once
				}
				select {
				case ch <- res:
				case <-s.quit:
					return
				}
				if res.err != nil {
					return
				}
			}
		}()
	}
	return s
}

// indentEntry returns f's manifest entry indented; line is a reusable read buffer.
func indentEntry(jr io.ReaderAt, f fileRef, line []byte) ([]byte, []byte, error) {
	if f.entry != nil {
		b, err := json.MarshalIndent(f.entry, "    ", "  ")
		return b, line, err
	}
	if cap(line) < f.n {
		line = make([]byte, f.n)
	}
	line = line[:f.n]
	if _, err := jr.ReadAt(line, f.off); err != nil {
		return nil, line, fmt.Errorf("read journal at byte %d: %w", f.off, err)
	}
	raw, err := doneEntry(line, f.path)
	if err != nil {
		return nil, line, fmt.Errorf("journal line at byte %d is not the entry of %s", f.off, f.path)
	}
	// json.Indent grows its destination by twice the source first: grown less here, it was
	// allocated twice.
	var ind bytes.Buffer
	ind.Grow(2 * len(raw))
	if err := json.Indent(&ind, raw, "    ", "  "); err != nil {
		return nil, line, fmt.Errorf("journal line at byte %d: the entry of %s: %w", f.off, f.path, err)
	}
	return ind.Bytes(), line, nil
}

// next returns the next entry in order. It must be called at most len(files) times (the
// workers never close their channels: a worker sends each of its entries, or stops after
// sending an error, which next returns).
// The bytes of the entry it returned before are given back (the writer is done with it).
func (s *entryStream) next() ([]byte, error) {
	s.gate.done(s.last)
	res := <-s.out[s.k%len(s.out)]
	s.k++
	s.last = res.n
	return res.b, res.err
}

// stop ends the workers (those still running when an error or a fault stopped the writer).
func (s *entryStream) stop() {
	close(s.quit)
	s.gate.stop()
	s.wg.Wait()
}
