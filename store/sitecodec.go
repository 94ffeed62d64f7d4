package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The compact encoding of a Change's byte edits (Change.SiteData, or the file Change.SiteFile
// names): what undo needs to reverse the edits in place, a few bytes a name instead of a JSON
// object. The edits are in offset order; each is written as
//
//	uvarint gap    At minus the end of the edit before it (At + len(New) of that one; 0 first)
//	uvarint ref    0: a new pair follows, else the pair numbered ref (1-based) of the table
//	[ref 0: uvarint len(Old), Old, uvarint len(New), New] — the pair is then added to the table
//
// The table holds at most SiteTableSize pairs: the definition that would make it larger first
// empties it (encoder and decoder do the same), so memory is bounded whatever the number of
// distinct names. Old and New are exact bytes (JSON string tokens with their quotes; Old is
// empty for an inserted member), as in ByteEdit.

// SiteTableSize bounds the pairs the encoding refers back to.
const SiteTableSize = 4096

// SiteEncoder writes the compact encoding of byte edits to w.
type SiteEncoder struct {
	w io.Writer
	// out is what is encoded and not yet written to w: written once it holds siteFlushAt
	// bytes, and by Flush.
	out []byte
	// table numbers the pairs defined since it was last emptied, by pairKey: looked up
	// without a copy (two strings an edit were a tenth of the bytes fix --apply allocated on
	// make bench's dense corpus), copied only when defined.
	table map[string]uint64
	end   int64 // end of the previous edit
	n     int64 // edits written
	key   []byte
}

// siteFlushAt is how many encoded bytes a SiteEncoder buffers before it writes them to w.
const siteFlushAt = 16 << 10

// NewSiteEncoder starts an encoding on w (buffered; Flush ends it).
func NewSiteEncoder(w io.Writer) *SiteEncoder {
	return &SiteEncoder{w: w, table: map[string]uint64{}}
}

// Reset starts a new encoding on w, as NewSiteEncoder(w) would, keeping the memory e grew (its
// buffer, its table) for it: what e buffered and not flushed is dropped.
func (e *SiteEncoder) Reset(w io.Writer) {
	e.w, e.out, e.end, e.n = w, e.out[:0], 0, 0
	clear(e.table)
}

// Add appends one edit; edits must come in offset order without overlap.
func (e *SiteEncoder) Add(at int64, old, new []byte) error {
	if at < e.end {
		return fmt.Errorf("site at offset %d is before the end of the one before it (%d)", at, e.end)
	}
	b := binary.AppendUvarint(e.out, uint64(at-e.end))
	// The pair's key: len(old), old, new (one key per pair: old's length says where it ends).
	e.key = append(append(binary.AppendUvarint(e.key[:0], uint64(len(old))), old...), new...)
	if ref, ok := e.table[string(e.key)]; ok {
		b = binary.AppendUvarint(b, ref)
	} else {
		if len(e.table) >= SiteTableSize {
			clear(e.table)
		}
		e.table[string(e.key)] = uint64(len(e.table) + 1)
		b = binary.AppendUvarint(b, 0)
		b = append(binary.AppendUvarint(b, uint64(len(old))), old...)
		b = append(binary.AppendUvarint(b, uint64(len(new))), new...)
	}
	e.out = b
	e.end = at + int64(len(new))
	e.n++
	if len(e.out) >= siteFlushAt {
		return e.Flush()
	}
	return nil
}

// Count is the number of edits added.
func (e *SiteEncoder) Count() int64 { return e.n }

// Flush writes what is buffered.
func (e *SiteEncoder) Flush() error {
	if len(e.out) == 0 {
		return nil
	}
	_, err := e.w.Write(e.out)
	e.out = e.out[:0]
	return err
}

// SiteDecoder reads the compact encoding back, one edit at a time.
type SiteDecoder struct {
	r     io.ByteReader
	rr    io.Reader
	table []ByteEdit // Old and New of each pair
	end   int64
}

// NewSiteDecoder reads the encoding from r.
func NewSiteDecoder(r io.Reader) *SiteDecoder {
	br, ok := r.(interface {
		io.ByteReader
		io.Reader
	})
	if !ok {
		b := bufio.NewReaderSize(r, 64<<10)
		br = b
	}
	return &SiteDecoder{r: br, rr: br}
}

// ErrBadSites marks an encoding that does not decode.
var ErrBadSites = errors.New("the recorded sites do not decode")

// Next returns the next edit; io.EOF after the last.
func (d *SiteDecoder) Next() (ByteEdit, error) {
	gap, err := binary.ReadUvarint(d.r)
	if err == io.EOF {
		return ByteEdit{}, io.EOF
	}
	bad := func(what string, err error) (ByteEdit, error) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return ByteEdit{}, fmt.Errorf("%w: %s: %v", ErrBadSites, what, err)
	}
	if err != nil {
		return bad("gap", err)
	}
	ref, err := binary.ReadUvarint(d.r)
	if err != nil {
		return bad("pair", err)
	}
	const maxToken = 1 << 26
	if gap > 1<<62 {
		return bad("gap", fmt.Errorf("%d bytes", gap))
	}
	var p ByteEdit
	switch {
	case ref == 0:
		var tok [2]string
		for i := range tok {
			n, err := binary.ReadUvarint(d.r)
			if err != nil {
				return bad("token length", err)
			}
			if n > maxToken {
				return bad("token length", fmt.Errorf("%d bytes", n))
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(d.rr, b); err != nil {
				return bad("token", err)
			}
			tok[i] = string(b)
		}
		if len(d.table) >= SiteTableSize {
			d.table = d.table[:0]
		}
		p = ByteEdit{Old: tok[0], New: tok[1]}
		d.table = append(d.table, p)
	case ref <= uint64(len(d.table)):
		p = d.table[ref-1]
	default:
		return bad("pair", fmt.Errorf("pair %d of %d", ref, len(d.table)))
	}
	p.At = d.end + int64(gap)
	d.end = p.At + int64(len(p.New))
	return p, nil
}

// DecodeSites returns every edit of data (the whole encoding in memory: for a small change).
func DecodeSites(data []byte) ([]ByteEdit, error) {
	d := NewSiteDecoder(bytes.NewReader(data))
	var out []ByteEdit
	for {
		e, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// AllSites returns every byte edit c records, whatever its form (Sites, SiteData, or the file
// SiteFile names, read whole without checking its checksum): for tests and small changes, as
// it holds them all.
func (c *Change) AllSites() ([]ByteEdit, error) {
	switch {
	case c.SiteFile != nil:
		b, err := os.ReadFile(c.SiteFile.Path)
		if err != nil {
			return nil, err
		}
		return DecodeSites(b)
	case len(c.SiteData) > 0:
		return DecodeSites(c.SiteData)
	}
	return c.Sites, nil
}
