package jsonl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
)

// Builder.Text gives String's string for every token: plain ones copied into the arena, the
// rest decoded.
func TestTextIsString(t *testing.T) {
	b := &Builder{}
	long := `"` + strings.Repeat("x", arenaChunk/8+1) + `"`
	for _, c := range []struct {
		raw     string
		tooLong bool
		want    string
	}{
		{`"call_33b460e4ac"`, false, "call_33b460e4ac"},
		{`""`, false, ""},
		{`"a\"b"`, false, `a"b`},
		{`"caf\u00e9"`, false, "café"},
		{`"\ud800"`, false, "\ufffd"},
		{`"bad\q"`, false, ""}, // an invalid escape: undecodable
		{`"call_1"`, true, ""}, // over the capture limit: undecodable
		{`call_1`, false, ""},  // not a string token
		{long, false, long[1 : len(long)-1]},
	} {
		cc := &jsonscan.Capture{Raw: []byte(c.raw), TooLong: c.tooLong, Len: int64(len(c.raw))}
		assert.Equal(t, c.want, String(cc), "String(%s)", c.raw)
		assert.Equal(t, c.want, b.Text(cc), "Text(%s)", c.raw)
	}
	assert.Equal(t, "", b.Text(nil))
}

// The strings Text made stay as they were when later values fill the arena and its chunks are
// replaced; the capture's bytes are copied, not referenced.
func TestTextStringsStay(t *testing.T) {
	b := &Builder{}
	var got []string
	raw := make([]byte, 0, 64)
	for i := range 3 * arenaChunk / 10 {
		raw = fmt.Appendf(raw[:0], `"call_%05d"`, i)
		got = append(got, b.Text(&jsonscan.Capture{Raw: raw, Len: int64(len(raw))}))
		raw[2] = 'X' // the capture's buffer is reused by the scanner
	}
	require.Len(t, got, 3*arenaChunk/10)
	for i, s := range got {
		require.Equal(t, fmt.Sprintf("call_%05d", i), s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		b.Text(&jsonscan.Capture{Raw: []byte(`"call_abcdef0123"`), Len: 17})
	})
	assert.Less(t, allocs, 0.5, "a plain value is copied into the arena, not allocated")
}

// internRaw's recent-token slots answer as the map does: tokens that share their length and
// last bytes (one slot), equal tokens in other buffers (one shared copy), escaped and short
// ones, in an order that makes them evict each other.
func TestInternRawRecentSlots(t *testing.T) {
	b := &Builder{}
	var toks []string
	for i := range 300 {
		toks = append(toks, fmt.Sprintf(`"mcp__s%03d__get_data"`, i)) // same length, same last 8 bytes
	}
	toks = append(toks, `"a"`, `"b"`, `""`, `"x\"y"`, `"mcp__a__b.c"`, `"é"`)
	first := map[string]token{}
	for round := range 3 {
		for i := range toks {
			tok := toks[(i*7+round)%len(toks)]
			got := b.internRaw([]byte(tok)) // a fresh buffer each time
			require.Equal(t, tok, string(got.raw))
			plain := !strings.Contains(tok, `\`)
			require.Equal(t, plain, got.plain, tok)
			if plain {
				require.Equal(t, tok[1:len(tok)-1], got.name)
			}
			if f, ok := first[tok]; ok {
				require.Same(t, &f.raw[0], &got.raw[0], "equal tokens share one copy: %s", tok)
			} else {
				first[tok] = got
			}
		}
	}
}
