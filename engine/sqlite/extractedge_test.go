package sqlite

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzExtractRowsAtRowEdges: the batch extractor gives every row of a batch (rows back to back
// in one buffer, each followed by bytes that are not its own, more than a 256-row chunk) what it
// gives the same value alone in a buffer of exactly its length: nothing is read past a row's end
// or taken from another row's result.
func FuzzExtractRowsAtRowEdges(f *testing.F) {
	f.Add([]byte("{\"tool\":\"a\"}\x1e{\"part\":{\"tool\":\"b\\u0041\"}}\x1e{\"tool\":\"x\\"), []byte(`"}`), uint16(300))
	f.Add([]byte("{\"tool\":\x1e\"a\"}\x1e{}\x1e"), []byte(`]}`), uint16(257))
	f.Add([]byte("{\"type\":\"t\",\"tool\":\"a\x1e{\"tool\":1.5e"), []byte(`0}`), uint16(2))
	paths := []string{"$.tool", "$.type", "$.part.tool", "$.part.part.tool"}
	spec := specOf(paths)
	stride := 1 + 2*len(paths)
	f.Fuzz(func(t *testing.T, data, trailer []byte, nrows uint16) {
		vals := bytes.Split(data, []byte{0x1e})
		n := 1 + int(nrows)%600
		b := newRowBatch(2, n)
		b.buf = b.buf[:0]
		for i := range n {
			v := vals[i%len(vals)]
			c := &b.cols[i*2+1]
			c.kind = kindText
			if i%11 == 10 {
				c.kind = kindBlob
			}
			setNum(&c.off, len(b.buf))
			setNum(&c.n, len(v))
			b.buf = append(b.buf, v...)
			b.buf = append(b.buf, trailer...)
		}
		if len(b.buf) == 0 {
			b.buf = append(b.buf, 0)
		}
		b.n = n
		require.NoError(t, extractRows(b, spec))
		require.Len(t, b.ext, n*stride)
		alone := map[int][]int64{}
		for i := range n {
			got := b.ext[i*stride : (i+1)*stride]
			if b.cols[i*2+1].kind == kindBlob {
				require.Zero(t, got[0], "row %d is a BLOB", i)
				continue
			}
			want, ok := alone[i%len(vals)]
			if !ok {
				v := vals[i%len(vals)]
				one := newRowBatch(2, 1)
				one.buf = append(make([]byte, 0, len(v)+1), v...)
				if len(one.buf) == 0 {
					one.buf = append(one.buf, 0)
				}
				one.n = 1
				one.cols[1].kind = kindText
				setNum(&one.cols[1].n, len(v))
				require.NoError(t, extractRows(one, spec))
				want = one.ext
				alone[i%len(vals)] = want
			}
			require.Equal(t, want[0], got[0], "row %d (%q, trailer %q): accepted", i, vals[i%len(vals)], trailer)
			if want[0] == 1 {
				require.Equal(t, want, got, "row %d (%q, trailer %q)", i, vals[i%len(vals)], trailer)
			}
		}
	})
}
