package jsonscan

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lineIndex classifies the chunk pre, line, "\n", post (which must be clean: no control byte
// but '\n') and returns the string index of line in it (at len(pre)); ok is false where the
// CPU has no AVX2 (the chunk gets no index).
func lineIndex(t testing.TB, pre, line, post []byte) (x *strIndex, ok bool) {
	t.Helper()
	chunk := append(append(append(append([]byte(nil), pre...), line...), '\n'), post...)
	var ix chunkIndex
	_, ctl, _ := classifyIndex(chunk, nil, &ix)
	require.False(t, ctl, "test chunk must be clean: %q", chunk)
	if !ix.ok {
		return nil, false
	}
	return &strIndex{q: ix.q, b: ix.b, at: len(pre)}, true
}

// checkStringEnd puts line into a chunk at offset at (after pre, before "\n" and post) and
// requires, for every start i of a string body in line (0..len(line)), that the string index
// either leaves the string to the byte loop or gives the byte loop's answer
// (skipStringLenient without the index, which validates escapes byte by byte). It returns how
// many starts the index settled. The chunk must be clean (no control byte but '\n').
func checkStringEnd(t testing.TB, pre, line, post []byte) int {
	t.Helper()
	x, ok := lineIndex(t, pre, line, post)
	if !ok {
		return 0 // no AVX2: nothing to compare
	}
	settled := 0
	for i := 0; i <= len(line); i++ {
		j, ok := x.stringEnd(i, len(line))
		if !ok {
			continue
		}
		settled++
		wj, wok := skipStringLenient(line, i, true, nil)
		require.True(t, wok, "index ends the string at line[%d] at %d, the byte loop rejects it: %q", i, j, line)
		require.Equal(t, wj, j, "end of the string at line[%d] of %q (at %d in the chunk)", i, line, len(pre))
		// and with the index, skipStringLenient answers the same for every start
		gj, gok := skipStringLenient(line, i, true, x)
		require.Equal(t, [2]any{wj, wok}, [2]any{gj, gok})
	}
	for i := 0; i <= len(line); i++ {
		wj, wok := skipStringLenient(line, i, true, nil)
		gj, gok := skipStringLenient(line, i, true, x)
		require.Equal(t, [2]any{wj, wok}, [2]any{gj, gok}, "skipStringLenient at line[%d] of %q with and without the index", i, line)
		// skipBody, the bitmaps' slow path (backslashes, far quotes), gives the byte loop's
		// answer for every start, valid or not
		bj, bok := x.skipBody(line, i)
		require.Equal(t, [2]any{wj, wok}, [2]any{bj, bok}, "skipBody at line[%d] of %q (at %d in the chunk)", i, line, len(pre))
	}
	return settled
}

// TestStringIndexAgrees: the string index against the byte loop on random clean lines whose
// bytes are drawn mostly from '"', '\\', escape letters, hex digits and high (also invalid
// UTF-8) bytes, at every offset of their chunk around the 64-byte words, of lengths 0–200 and
// around word edges; and on adversarial lines: backslash runs of every length ending at every
// position of a word edge, escaped quotes at block edges, a string of 100 KB, a quote only in
// the next line. Seeded: the same inputs on every run.
func TestStringIndexAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alpha := []byte(`""""\\\\\unbtrf/0a9Fxz {}[],:` + "\x7f\x80\xc3\xa9\xff\xfe")
	gen := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(0x20 + r.IntN(0x5f))
			} else {
				b[i] = alpha[r.IntN(len(alpha))]
			}
		}
		return b
	}
	settled := 0
	for n := 0; n <= 200; n++ {
		for _, at := range []int{0, 1, 31, 63, 64, 65, 127} {
			pre := bytes.Repeat([]byte(`a"\`), at/3+1)[:at]
			settled += checkStringEnd(t, pre, gen(n), gen(r.IntN(130)))
		}
	}
	// Backslash runs of length 1–5 ending just before a quote, placed across a word edge.
	for run := 1; run <= 5; run++ {
		for pos := 50; pos <= 80; pos++ {
			line := []byte(strings.Repeat("x", pos) + strings.Repeat(`\`, run) + `"` + strings.Repeat("y", 70) + `"`)
			for _, at := range []int{0, 1, 63} {
				settled += checkStringEnd(t, bytes.Repeat([]byte(`"`), at), line, []byte(`"\"`))
			}
		}
	}
	// A long string, its closing quote many words on; an escaped quote in it; no closing quote
	// in the line but one in the next.
	long := []byte(strings.Repeat("plain text é ", 8000) + `"`)
	settled += checkStringEnd(t, nil, long, nil)
	settled += checkStringEnd(t, []byte("xx"), append([]byte(`abc\"def`), long...), nil)
	settled += checkStringEnd(t, nil, []byte(strings.Repeat("open ", 40)), []byte(`"closed elsewhere"`))
	if hasAVX2 {
		require.Greater(t, settled, 20000, "the index settled too few strings: the test would not see it")
	}
}

// FuzzStringIndex: for any clean line at any offset of its chunk, the string index gives the
// byte loop's answers.
func FuzzStringIndex(f *testing.F) {
	f.Add([]byte(`"a\"b"`), []byte(`x`), uint8(3))
	f.Add([]byte(strings.Repeat(`\`, 70)+`"`), []byte(`"`), uint8(63))
	f.Fuzz(func(t *testing.T, line, post []byte, at uint8) {
		clean := func(b []byte) []byte {
			return bytes.Map(func(r rune) rune {
				if r < 0x20 {
					return 'c'
				}
				return r
			}, b)
		}
		line, post = clean(line), clean(post)
		if bytes.ContainsFunc(line, func(r rune) bool { return r < 0x20 }) || bytes.ContainsFunc(post, func(r rune) bool { return r < 0x20 }) {
			t.Skip()
		}
		checkStringEnd(t, bytes.Repeat([]byte(`\"`), int(at))[:at], line, post)
	})
}

// TestCloseHandsTheIndexOn: Close gives the chunk's bitmaps up (for the next Scanner: a
// store scan makes one per file, and a 1 MiB chunk's bitmaps are 256 KiB), and a Scanner
// written after another was closed reads the same records.
func TestCloseHandsTheIndexOn(t *testing.T) {
	in := []byte(strings.Repeat(`{"message":{"parts":[{"functionCall":{"id":"c1","name":"mcp__a__b.c"}}]},"t":"x\"y"}`+"\n", 2000))
	var first []gotRecord
	for range 3 {
		var sc *Scanner
		got := scanAllWith(t, prefilterPatterns, Lines, in, 0, func(s *Scanner) { sc = s })
		if hasAVX2 {
			require.Nil(t, sc.ix.q, "Close keeps no bitmaps")
		}
		if first == nil {
			first = got
			require.Len(t, first, 2000)
			require.Len(t, first[1999].Captures, 2)
		}
		require.Equal(t, first, got)
		require.Equal(t, scanCareful(t, in, 0), got)
	}
}

// TestHugeChunkMakesNoIndex: a chunk larger than maxIndexChunk (a SQLite value written whole)
// gets no bitmaps — they were made a quarter of its size and kept for the Scanner's life, never
// read — and its records are the careful scan's; a 1 MiB chunk (a JSONL store's) still gets them.
func TestHugeChunkMakesNoIndex(t *testing.T) {
	rec := `{"message":{"parts":[{"functionCall":{"id":"c1","name":"mcp__a__b.c"}}]},"t":"x\"y"}` + "\n"
	for _, tc := range []struct {
		size  int
		index bool
	}{{1 << 20, true}, {maxIndexChunk + 4096, false}} {
		in := []byte(strings.Repeat(rec, tc.size/len(rec)+1)[:tc.size])
		in = in[:strings.LastIndexByte(string(in), '\n')+1]
		s := New(prefilterPatterns, Lines, func(*Record) error { return nil })
		_, err := s.Write(in)
		require.NoError(t, err)
		words := cap(s.ix.q)
		require.NoError(t, s.Close())
		got := scanAllWith(t, prefilterPatterns, Lines, in, 0, nil)
		if hasAVX2 {
			require.Equal(t, tc.index, words > 0, "%d-byte chunk: bitmaps made (%d words)", len(in), words)
		}
		require.Equal(t, scanCareful(t, in, 0), got, "%d-byte chunk", len(in))
	}
}

// TestStringEndNextWord: strings crossing one word's end — starting at every byte of a word,
// their closing quote in the next word (skipStringLenient's second word, read without
// skipBody), with a backslash at every place before and after that quote, or the line ending
// before it — end where the byte loop ends them.
func TestStringEndNextWord(t *testing.T) {
	settled := 0
	for start := 0; start < 64; start++ {
		for qpos := 64; qpos < 128; qpos += 9 {
			if qpos <= start {
				continue
			}
			body := []byte(strings.Repeat("s", qpos-start) + `"` + strings.Repeat("t", 20))
			for bs := -1; bs < len(body); bs += 4 {
				line := append([]byte(`"`), body...)
				if bs >= 0 {
					line[1+bs] = '\\'
				}
				pre := bytes.Repeat([]byte("p"), start) // the string's body at chunk index start+1
				settled += checkStringEnd(t, pre, line, []byte(`"next"`))
				settled += checkStringEnd(t, pre, line[:1+qpos-start], []byte(`"x"`)) // the line ends before the quote
			}
		}
	}
	if hasAVX2 {
		require.Greater(t, settled, 10000)
	}
}

// The bitmaps of a closed Scanner outlive garbage collections (red before: a sync.Pool, empty
// after two, so that under cmd/sessionfix's memory limit most scans allocated theirs again).
func TestIndexBitmapsOutliveCollections(t *testing.T) {
	for len(indexBufs) > 0 {
		<-indexBufs
	}
	var ix chunkIndex
	ix.size(1 << 20)
	q := &ix.q[0]
	ix.release()
	runtime.GC()
	runtime.GC()
	var again chunkIndex
	again.size(1 << 20)
	require.Same(t, q, &again.q[0], "the bitmaps given back are handed out again")
	again.release()
}
