package jsonscan

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// classifyNaive is the definition classify and classifyGo implement, byte by byte.
func classifyNaive(p []byte) (high, ctl bool, nls []int) {
	for j, c := range p {
		high = high || c >= 0x80
		ctl = ctl || (c < 0x20 && c != '\n')
		if c == '\n' {
			nls = append(nls, j)
		}
	}
	return
}

// checkClassify requires classify (the vector version where the build has one) and classifyGo
// (the fallback, which other machines and the purego build run) to agree with classifyNaive
// on p: both flags, and the newline list when p holds no other control byte. A non-empty nls
// passed in must be kept and appended to.
func checkClassify(t testing.TB, p []byte) {
	t.Helper()
	wh, wc, wn := classifyNaive(p)
	for name, f := range map[string]func([]byte, []int) (bool, bool, []int){"classify": classify, "classifyGo": classifyGo} {
		gh, gc, gn := f(p, []int{-7})
		require.Equal(t, [2]bool{wh, wc}, [2]bool{gh, gc}, "%s: high, ctl of %d bytes %q", name, len(p), p)
		require.Equal(t, -7, gn[0], "%s keeps what nls held", name)
		if !wc {
			require.Equal(t, append([]int{-7}, wn...), gn, "%s: newlines of %d bytes %q", name, len(p), p)
		}
	}
	// classifyIndex: the same answers, and (with AVX2) every word of the bitmaps written, also
	// over the garbage of an earlier, longer chunk.
	ix := chunkIndex{q: make([]uint64, 0, 8), b: make([]uint64, 0, 8)}
	ix.size(len(p) + 200)
	for k := range ix.q {
		ix.q[k], ix.b[k] = ^uint64(0), 0x5555555555555555
	}
	gh, gc, gn := classifyIndex(p, []int{-7}, &ix)
	require.Equal(t, [2]bool{wh, wc}, [2]bool{gh, gc}, "classifyIndex: high, ctl of %d bytes %q", len(p), p)
	if !wc {
		require.Equal(t, append([]int{-7}, wn...), gn, "classifyIndex: newlines of %d bytes %q", len(p), p)
	}
	require.Equal(t, hasAVX2 && !wc, ix.ok, "classifyIndex: bitmaps usable")
	if hasAVX2 {
		require.Len(t, ix.q, (len(p)+63)/64)
		for j, c := range p {
			require.Equal(t, c == '"', ix.q[j/64]>>(j%64)&1 == 1, "quote bit of byte %d of %q", j, p)
			require.Equal(t, c == '\\', ix.b[j/64]>>(j%64)&1 == 1, "backslash bit of byte %d of %q", j, p)
		}
		for j := len(p); j < len(ix.q)*64; j++ {
			require.Zero(t, ix.q[j/64]>>(j%64)&1, "quote bit past the end, %d of %d", j, len(p))
			require.Zero(t, ix.b[j/64]>>(j%64)&1, "backslash bit past the end, %d of %d", j, len(p))
		}
	}
}

// TestClassifyRandom: classify and classifyGo against the byte loop on random inputs of every
// length 0–300 and of lengths around the vector version's 128-block (4096-byte) groups, with
// bytes drawn mostly from the classes that matter ('\n', other control bytes, high bytes, the
// borrow-prone 0x20/0x21/0x7f/0x80) and, per length, clean and dirty variants. Seeded: the
// same inputs on every run.
func TestClassifyRandom(t *testing.T) {
	t.Logf("vector classify in this build: %v", hasAVX2)
	r := rand.New(rand.NewPCG(1, 2))
	special := []byte{'\n', '\n', '\n', 0, '\t', '\r', 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xbf, 0xc3, 0xff, '"', '\\'}
	gen := func(n int, pSpecial float64, allowCtl bool) []byte {
		b := make([]byte, n)
		for i := range b {
			if r.Float64() < pSpecial {
				c := special[r.IntN(len(special))]
				if !allowCtl && c < 0x20 && c != '\n' {
					c = '\n'
				}
				b[i] = c
			} else {
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		return b
	}
	lengths := []int{}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for _, edge := range []int{4096, 8192, 12288} {
		for d := -33; d <= 33; d += 1 {
			lengths = append(lengths, edge+d)
		}
	}
	checks := 0
	for _, n := range lengths {
		for _, p := range []float64{0, 0.02, 0.2, 1} {
			for _, allowCtl := range []bool{false, true} {
				checkClassify(t, gen(n, p, allowCtl))
				checks++
			}
		}
		// A control byte only in the last block or the tail, after clean blocks with newlines.
		if n > 0 {
			b := gen(n, 0.05, false)
			b[n-1] = 0x01
			checkClassify(t, b)
			checks++
		}
	}
	require.Equal(t, len(lengths)*9-1, checks)
}

// FuzzClassify: classify and classifyGo agree with the byte loop on any input, also when the
// slice starts at an odd offset of its array (the vector loads are unaligned).
func FuzzClassify(f *testing.F) {
	f.Add([]byte(""), uint8(0))
	f.Add([]byte("{\"a\":1}\n{\"b\":\"\xc3\xa9\"}\n"), uint8(1))
	f.Add([]byte("0123456789abcdef0123456789abcdef\n\t"), uint8(3))
	f.Fuzz(func(t *testing.T, p []byte, skip uint8) {
		checkClassify(t, p)
		if int(skip) < len(p) {
			checkClassify(t, p[skip:])
		}
	})
}
