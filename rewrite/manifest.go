package rewrite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	c := *m
	c.Version = manifestVersion
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
	var ind bytes.Buffer
	for k := range n {
		e, raw, err := next()
		if err != nil {
			return nil, err
		}
		var b []byte
		if e != nil {
			if b, err = json.MarshalIndent(e, "    ", "  "); err != nil {
				return nil, err
			}
		} else {
			ind.Reset()
			if err := json.Indent(&ind, raw, "    ", "  "); err != nil {
				return nil, err
			}
			b = ind.Bytes()
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
// (sorted by path), read back from the journal one at a time; like writeManifest it is
// replaced durably (replaceStateFile), its temp file a sibling (".manifest.json<digits>").
func (r *run) writeFinalManifest() error {
	path := filepath.Join(r.dir, manifestName)
	if err := faultWrite(path); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	jr, err := os.Open(filepath.Join(r.dir, journalName))
	if err != nil {
		return fmt.Errorf("write manifest: read journal: %w", err)
	}
	defer jr.Close()
	var line []byte
	k := 0
	// The "done" line's entry is taken as written (json.Marshal's bytes, see streamManifest);
	// its path member is the entry's store (applyEdits).
	var done struct {
		Event string          `json:"event"`
		Path  string          `json:"path"`
		Entry json.RawMessage `json:"entry"`
	}
	next := func() (*FileEntry, []byte, error) {
		f := r.files[k]
		k++
		if f.entry != nil {
			return f.entry, nil, nil
		}
		if cap(line) < f.n {
			line = make([]byte, f.n)
		}
		line = line[:f.n]
		if _, err := jr.ReadAt(line, f.off); err != nil {
			return nil, nil, fmt.Errorf("read journal at byte %d: %w", f.off, err)
		}
		done.Event, done.Path, done.Entry = "", "", done.Entry[:0]
		if err := json.Unmarshal(bytes.TrimSuffix(line, []byte("\n")), &done); err != nil || done.Event != "done" ||
			len(done.Entry) == 0 || done.Entry[0] != '{' || done.Path != f.path {
			return nil, nil, fmt.Errorf("journal line at byte %d is not the entry of %s", f.off, f.path)
		}
		return nil, done.Entry, nil
	}
	err = replaceStateFile(path, func(pf *renameio.PendingFile) error {
		sum, err := streamManifest(pf, r.m, len(r.files), next, nil)
		if err != nil {
			return err
		}
		_, err = pf.WriteAt(sum, int64(len(manifestSealPrefix)))
		return err
	})
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	r.m.Version = manifestVersion
	return nil
}
