// Package splice writes planned names into the bytes of a store, the one place that turns an
// edit into bytes for every engine: each edit's old token, the exact bytes the scan saw at its
// offset (a JSON string with its quotes, store.Site.Raw), is checked byte for byte and replaced
// by the new name as a JSON string (jsonscan.AppendQuote: UTF-8 as is, no HTML escaping); an
// edit of an absent member (empty Raw, see store.Site) inserts `,"<Field>":<new>` at its offset
// instead. Edits must be sorted by offset and must not overlap.
//
// Bytes edits one value in memory (a SQLite column); Copy streams a file through (a JSONL
// session of any size). A token that is not where the scan saw it is a *MismatchError, which
// wraps store.ErrTokenMismatch.
package splice

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// MismatchError says which edit's token was not at its offset: the content changed since it
// was scanned. errors.Is(err, store.ErrTokenMismatch) holds.
type MismatchError struct {
	Site store.Site
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%v (offset %d)", store.ErrTokenMismatch, e.Site.Loc.Offset)
}

// Unwrap returns store.ErrTokenMismatch.
func (e *MismatchError) Unwrap() error { return store.ErrTokenMismatch }

// Token appends to b the bytes that stand for e after the edit: the new name as a JSON string,
// preceded by `,"<Field>":` for an absent member.
func Token(b []byte, e store.Edit) []byte {
	if len(e.Site.Raw) == 0 {
		b = append(jsonscan.AppendQuote(append(b, ','), e.Site.Field), ':')
	}
	return jsonscan.AppendQuote(b, e.New)
}

// Bytes returns val with every edit applied (offsets into val).
func Bytes(val []byte, edits []store.Edit) ([]byte, error) {
	return Append(make([]byte, 0, len(val)+64*len(edits)), val, edits)
}

// Append appends val with every edit applied (offsets into val) to out, and returns the
// extended buffer; on a token mismatch it returns nil and a *MismatchError (out's bytes past
// its length may have been written).
func Append(out, val []byte, edits []store.Edit) ([]byte, error) {
	pos := 0
	for _, e := range edits {
		off := int(e.Site.Loc.Offset)
		end := off + len(e.Site.Raw)
		if off < pos || end > len(val) || !bytes.Equal(val[off:end], e.Site.Raw) {
			return nil, &MismatchError{Site: e.Site}
		}
		out = append(out, val[pos:off]...)
		out = Token(out, e)
		pos = end
	}
	return append(out, val[pos:]...), nil
}

// Copy copies src to dst with every edit applied (offsets into src), reading through a buffer
// of bufSize bytes: memory stays flat whatever the size of src.
func Copy(dst io.Writer, src io.Reader, edits []store.Edit, bufSize int) error {
	c := NewCopier(dst, src, bufSize)
	defer c.Close()
	if err := c.Edits(edits); err != nil {
		return err
	}
	return c.Finish()
}

// Copier is Copy with the edits given batch by batch (Edits, in offset order across
// batches), so a file with millions of edits is rewritten holding one batch. OnEdit, when set,
// is told each edit as it is written: its offset in dst, the old token and the new one (valid
// only during the call).
type Copier struct {
	OnEdit func(at int64, old, new []byte) error

	dst      io.Writer
	br       *bufio.Reader
	pooled   bool
	pos      int64 // offset in src
	delta    int64 // len(dst) - pos
	tok, old []byte
	lr       io.LimitedReader // the stretch up to the next edit, reused (io.CopyN allocated one an edit)
}

// NewCopier starts a copy of src to dst through a buffer of bufSize bytes; Close gives the
// buffer back.
func NewCopier(dst io.Writer, src io.Reader, bufSize int) *Copier {
	br, pooled := getReader(src, bufSize)
	return &Copier{dst: dst, br: br, pooled: pooled}
}

// Edits copies src up to each edit and writes it (edits sorted by offset, after those of the
// batches before).
func (c *Copier) Edits(edits []store.Edit) error {
	for _, e := range edits {
		if e.Site.Loc.Offset < c.pos {
			return &MismatchError{Site: e.Site}
		}
		if err := c.copyN(e.Site.Loc.Offset - c.pos); err != nil {
			return fmt.Errorf("copy up to offset %d: %w", e.Site.Loc.Offset, err)
		}
		if n := len(e.Site.Raw); cap(c.old) < n {
			c.old = make([]byte, n)
		} else {
			c.old = c.old[:n]
		}
		if _, err := io.ReadFull(c.br, c.old); err != nil || !bytes.Equal(c.old, e.Site.Raw) {
			return &MismatchError{Site: e.Site}
		}
		c.tok = Token(c.tok[:0], e)
		if _, err := c.dst.Write(c.tok); err != nil {
			return err
		}
		if c.OnEdit != nil {
			if err := c.OnEdit(e.Site.Loc.Offset+c.delta, c.old, c.tok); err != nil {
				return err
			}
		}
		c.pos = e.Site.Loc.Offset + int64(len(c.old))
		c.delta += int64(len(c.tok) - len(c.old))
	}
	return nil
}

// copyN is io.CopyN(c.dst, c.br, n) through c's own LimitedReader.
func (c *Copier) copyN(n int64) error {
	c.lr.R, c.lr.N = c.br, n
	written, err := io.Copy(c.dst, &c.lr)
	c.lr.R = nil
	if written == n {
		return nil
	}
	if err == nil {
		err = io.EOF // src stopped early
	}
	return err
}

// Finish copies the rest of src.
func (c *Copier) Finish() error {
	_, err := c.br.WriteTo(c.dst) // what io.CopyBuffer(dst, br, buf) did, without the unused buf
	return err
}

// Close gives the read buffer back; c must not be used after.
func (c *Copier) Close() {
	if c.pooled && c.br != nil {
		putReader(c.br)
	}
	c.br = nil
}

// readers keeps the read buffers of finished copies for the next ones (one per rewritten
// store: allocating them afresh was about a seventh of the bytes an apply allocated): a free
// list of readersKept, not a sync.Pool, which a garbage collection empties (in two): fix
// --apply on make bench's dense corpus, held to cmd/sessionfix's memory limit, collects every
// few MB.
var readers = make(chan *bufio.Reader, readersKept)

// readersKept is how many idle read buffers readers keeps: one is in use per copy (a
// rewrite's transform; about one per worker).
const readersKept = 4

// getReader returns a buffered reader of size bytes reading src; pooled says it is Copy's own,
// to be given back with putReader. A src that is already a *bufio.Reader of at least size
// bytes is returned as it is, not pooled (it is the caller's, as bufio.NewReaderSize would
// return it): resetting it and handing it to the next Copy would take it from its owner.
func getReader(src io.Reader, size int) (r *bufio.Reader, pooled bool) {
	if b, ok := src.(*bufio.Reader); ok && b.Size() >= size {
		return b, false
	}
	select {
	case r := <-readers:
		if r.Size() == size {
			r.Reset(src)
			return r, true
		}
	default:
	}
	return bufio.NewReaderSize(src, size), true
}

// putReader gives r back for reuse; r must not be used after.
func putReader(r *bufio.Reader) {
	r.Reset(nil)
	select {
	case readers <- r:
	default:
	}
}
