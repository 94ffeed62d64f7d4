package jsonl

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
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

// AddSite adds the site Site makes, in place: the same sites and problems as Site then Add for
// plain, escaped, over-long and undecodable values, what the caller sets through the pointer
// lands in the snapshot, and a site written over a slot a shortened Sites left behind keeps
// nothing of it.
func TestAddSiteIsSiteThenAdd(t *testing.T) {
	caps := []*jsonscan.Capture{
		{Raw: []byte(`"mcp__lit__literature.search_pubmed"`), Line: 3, Offset: 100, Path: jsonscan.Path{{Key: "message", Index: -1}, {Index: 2}}},
		{Raw: []byte(`"mcp__x\u002ey"`), Line: 4, Offset: 200, Key: true},
		{Raw: []byte(`"bad\q"`), Line: 5, Offset: 300},
		{Raw: []byte(`"` + strings.Repeat("n", 40) + `"`), Line: 6, Offset: 400, TooLong: true, Len: 42},
		{Raw: []byte(`"mcp__lit__literature.search_pubmed"`), Line: 7, Offset: 500, Path: jsonscan.Path{{Key: "message", Index: -1}, {Index: 3}}},
	}
	one := &Builder{snap: &store.Snapshot{}}
	two := &Builder{snap: &store.Snapshot{Sites: make([]store.Site, 0, 2)}}
	for i, c := range caps {
		if s, ok := one.Site(c, store.SiteCall, "call"); ok {
			s.CallID = fmt.Sprint("id", i)
			one.Add(s)
		}
		if s := two.AddSite(c, store.SiteCall, "call"); s != nil {
			s.CallID = fmt.Sprint("id", i)
		}
	}
	require.Len(t, two.snap.Sites, 3, "the undecodable and over-long values add none")
	assert.Equal(t, one.snap.Sites, two.snap.Sites)
	assert.Equal(t, one.snap.Problems, two.snap.Problems)
	assert.Equal(t, "id4", two.snap.Sites[2].CallID)

	two.snap.Sites[2].Server = "stale"
	two.snap.Sites = two.snap.Sites[:2] // an invalid record's sites dropped
	s := two.AddSite(caps[0], store.SiteResponse, "")
	require.NotNil(t, s)
	assert.Equal(t, store.Site{Loc: store.Loc{Line: 3, Offset: 100}, Kind: store.SiteResponse, Path: "message[2]",
		Name: "mcp__lit__literature.search_pubmed", Raw: []byte(`"mcp__lit__literature.search_pubmed"`)}, two.snap.Sites[2])
}

// TestTextSharesRecentValues: a value Text gave out a few values before (a call id coming back
// in its response and telemetry) is given the same string again, not a second copy in the
// arena; other values get their own.
func TestTextSharesRecentValues(t *testing.T) {
	b := &Builder{}
	text := func(v string) string {
		raw := []byte(`"` + v + `"`)
		return b.Text(&jsonscan.Capture{Raw: raw, Len: int64(len(raw))})
	}
	first := text("call_ae4f964a83")
	other := text("call_33b460e4ac")
	used := len(b.arena)
	again := text("call_ae4f964a83")
	assert.Equal(t, "call_ae4f964a83", again)
	assert.Same(t, unsafe.StringData(first), unsafe.StringData(again), "the same string again")
	assert.Equal(t, used, len(b.arena), "nothing copied into the arena")
	assert.Equal(t, "call_33b460e4ac", other)
	assert.NotSame(t, unsafe.StringData(first), unsafe.StringData(text("call_ae4f964a84")), "another value, its own string")
}
