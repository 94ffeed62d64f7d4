package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/store"
)

// The compact encoding gives back every edit exactly: offsets, inserted members (empty Old),
// tokens with any bytes, and more distinct pairs than its table holds (the table is emptied
// and pairs are defined again, on both sides alike).
func TestSiteEncodingRoundTrip(t *testing.T) {
	var in []store.ByteEdit
	at := int64(3)
	for i := range 3*store.SiteTableSize + 17 {
		old := fmt.Sprintf(`"mcp__s%d.x__t"`, i%(store.SiteTableSize+5))
		nw := fmt.Sprintf(`"mcp__s%d_x__t_0abc"`, i%(store.SiteTableSize+5))
		switch i % 7 {
		case 3:
			old, nw = "", `,"namespace":"mcp__s"`
		case 5:
			old, nw = "\"\xff\x00\"", `"é"`
		}
		in = append(in, store.ByteEdit{At: at, Old: old, New: nw})
		at += int64(len(nw)) + int64(i%300)
	}
	data, err := encodeSites(in)
	require.NoError(t, err)
	out, err := store.DecodeSites(data)
	require.NoError(t, err)
	require.Equal(t, in, out)

	// A session repeating a few names: two or three bytes an edit (gap and pair number).
	var few []store.ByteEdit
	for i := range 10_000 {
		few = append(few, store.ByteEdit{At: int64(i) * 100, Old: `"mcp__a.b__c"`, New: fmt.Sprintf(`"mcp__a_b__c_%d"`, i%3)})
	}
	small, err := encodeSites(few)
	require.NoError(t, err)
	assert.Less(t, len(small), 3*len(few))

	// Streamed from a reader that is no ByteReader, one edit at a time.
	d := store.NewSiteDecoder(io.MultiReader(bytes.NewReader(data)))
	for i := range in {
		e, err := d.Next()
		require.NoError(t, err)
		require.Equal(t, in[i], e)
	}
	_, err = d.Next()
	assert.Equal(t, io.EOF, err)

	// Out of order is refused when encoding; a cut or damaged encoding when decoding.
	_, err = encodeSites([]store.ByteEdit{{At: 10, New: `"abc"`}, {At: 11, New: `"x"`}})
	assert.Error(t, err)
	_, err = store.DecodeSites(data[:len(data)-1])
	assert.True(t, errors.Is(err, store.ErrBadSites), "%v", err)
	_, err = store.DecodeSites([]byte{0, 9})
	assert.True(t, errors.Is(err, store.ErrBadSites), "a reference to a pair never defined: %v", err)
}

// encodeSites returns the compact encoding of edits (sorted by At).
func encodeSites(edits []store.ByteEdit) ([]byte, error) {
	var buf bytes.Buffer
	enc := store.NewSiteEncoder(&buf)
	for _, s := range edits {
		if err := enc.Add(s.At, []byte(s.Old), []byte(s.New)); err != nil {
			return nil, err
		}
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// An encoder Reset for the next encoding writes what a new one would, keeping its memory: the
// jsonl engine reuses one per rewrite instead of a new encoder and its 16 KiB buffer for
// every store (red before: no Reset; each allocated its buffer).
func TestSiteEncoderResetReusesItsMemory(t *testing.T) {
	edits := make([]store.ByteEdit, 10000)
	for i := range edits {
		edits[i] = store.ByteEdit{At: int64(40 * i), Old: `"mcp__a.b__c"`, New: fmt.Sprintf(`"mcp__a_b__c_%d"`, i%5)}
	}
	want, err := encodeSites(edits)
	require.NoError(t, err)
	require.Greater(t, len(want), 16<<10, "more than one buffer's worth")
	var buf bytes.Buffer
	enc := store.NewSiteEncoder(&bytes.Buffer{})
	require.NoError(t, enc.Add(7, []byte(`"x"`), []byte(`"y"`))) // left unflushed: dropped by Reset
	old, new := make([][]byte, len(edits)), make([][]byte, len(edits))
	for i, e := range edits {
		old[i], new[i] = []byte(e.Old), []byte(e.New)
	}
	encode := func() {
		buf.Reset()
		enc.Reset(&buf)
		for i, e := range edits {
			if err := enc.Add(e.At, old[i], new[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	encode()
	assert.Equal(t, want, buf.Bytes(), "the same encoding as a new encoder's")
	assert.Equal(t, int64(len(edits)), enc.Count())
	// Only the table's keys, one per distinct pair (5), are allocated again.
	assert.LessOrEqual(t, testing.AllocsPerRun(5, encode), 5.0, "allocations of an encoding by a reused encoder")
}
