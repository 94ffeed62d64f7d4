package jsonscan

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// childKey's length filter (node.lens) answers as the map does: literal keys of lengths on
// both sides of the filter's last bit (63: every longer key shares it), with and without a
// "*" step beside them, with few labels (compared one by one) and many (the map), looked up
// with every key length from 0 to 130, the literal keys themselves and keys one byte off.
func TestChildKeyLengthFilter(t *testing.T) {
	lens := []int{1, 2, 7, 30, 62, 63, 64, 65, 100, 128}
	for _, many := range []bool{false, true} {
		for _, star := range []bool{false, true} {
			var pats []string
			for _, n := range lens {
				pats = append(pats, "r."+strings.Repeat("k", n)+".v")
			}
			if many {
				for i := range 12 {
					pats = append(pats, "r.m"+strings.Repeat("q", i)+".v")
				}
			}
			if star {
				pats = append(pats, "r.*.w")
			}
			p := MustCompile(pats...)
			nd := p.root.childKey([]byte("r"))
			require.NotNil(t, nd)
			want := func(key string) *node {
				if c, ok := nd.keys[key]; ok {
					return c
				}
				return nd.anyKey
			}
			found := 0
			for n := 0; n <= 130; n++ {
				for _, key := range []string{strings.Repeat("k", n), strings.Repeat("k", max(n-1, 0)) + "x", "m" + strings.Repeat("q", n)} {
					got := nd.childKey([]byte(key))
					require.Same(t, want(key), got, "key of %d bytes %.8q… (many %v, star %v)", len(key), key, many, star)
					if got != nil && got != nd.anyKey {
						found++
					}
				}
			}
			wantFound := len(lens)
			if many {
				wantFound += 12
			}
			require.Equal(t, wantFound, found, "every literal key is found")
		}
	}
}

// A closed Scanner's newline list goes to the next Scanner (freeNLs), which reads its own
// chunk's lines from it: records of a scan after one of a thousand short lines are those of
// the careful byte loop (which keeps no newline list).
func TestNewlineListReused(t *testing.T) {
	p := MustCompile("message.parts[*].functionCall.name")
	short := []byte(strings.Repeat(`{"a":1}`+"\n", 1000))
	scanAll(t, p, Lines, short, 0) // closed: its list is kept
	var in []byte
	for i := range 40 {
		in = fmt.Appendf(in, `{"pad":"%s","message":{"parts":[{"functionCall":{"name":"mcp__s__t.%d"}}]}}`+"\n", strings.Repeat("x", i*37), i)
	}
	for _, chunk := range []int{0, 700, 4096} {
		got := scanAll(t, p, Lines, in, chunk)
		want := scanAllWith(t, p, Lines, in, chunk, func(s *Scanner) { s.SetCareful(true) })
		require.Len(t, got, 40)
		require.Equal(t, want, got, "chunk %d", chunk)
	}
	for range 2 * freeNLs.Max {
		freeNLs.Get(0) // empty the free list: it then holds only s's list
	}
	s := New(p, Lines, nil)
	_, _ = s.Write(short)
	require.NoError(t, s.Close())
	s2 := New(p, Lines, nil)
	_, _ = s2.Write(in[:10])
	require.GreaterOrEqual(t, cap(s2.nls), 1000, "the list of the Scanner closed before")
	require.NoError(t, s2.Close())
}

// TestChildKeyWords: keys of up to 16 bytes are compared with a node's few literal keys as two
// words read from the key's slice (masked to its length: the bytes behind a key in its line are
// not part of it). Every literal key is found with other bytes behind it in its slice, and with
// none (a slice of capacity below 8 is compared byte by byte); a key differing from a literal key in
// any one byte, or one byte longer or shorter, is not it.
func TestChildKeyWords(t *testing.T) {
	const alpha = "abcdefghijklmnopqrstuvwxyz"
	for _, lens := range [][]int{{1, 2, 3, 7}, {8, 9, 15, 16}, {4, 12, 17, 20}, {5, 6, 10, 11, 13, 14, 16, 18}} {
		var pats []string
		for _, n := range lens {
			pats = append(pats, "r."+alpha[:n]+".v")
		}
		pats = append(pats, "r.*.w")
		nd := MustCompile(pats...).root.childKey([]byte("r"))
		require.NotNil(t, nd)
		want := func(key string) *node {
			if c, ok := nd.keys[key]; ok {
				return c
			}
			return nd.anyKey
		}
		// in a line: the key, its closing quote and more bytes behind it
		inLine := func(key string) []byte { b := []byte(key + `":"` + alpha); return b[:len(key)] }
		for _, n := range lens {
			lit := alpha[:n]
			for _, key := range []string{lit, lit[:n-1], lit + "x", "x" + lit[1:]} {
				require.Same(t, want(key), nd.childKey(inLine(key)), "key %q in a line (labels of %v)", key, lens)
				require.Same(t, want(key), nd.childKey([]byte(key)[:len(key):len(key)]), "key %q alone (labels of %v)", key, lens)
			}
			require.Same(t, nd.keys[lit], nd.childKey(inLine(lit)), "literal key %q found", lit)
			for i := range n {
				b := []byte(lit + `":1`)
				b[i] ^= 0x20 // one byte differs
				key := string(b[:n])
				require.Same(t, nd.anyKey, nd.childKey(b[:n]), "key %q differing at byte %d from %q", key, i, lit)
			}
		}
	}
}

// TestChildKeyTable: a node's literal keys of up to 16 bytes are found in one probe of its key
// table (ktab, lookupWords) as the map finds them — for random sets of 1–17 keys of 1–20 bytes
// (those over 16 bytes have no slot: childKey compares them), sets sharing a prefix, looked up
// with every key, keys one byte off, one byte longer and shorter — and a node whose keys cannot
// have a table (over 15 keys) has none and childKey still answers as the map. Every node of the Qwen session patterns
// has one (the whole-record lexer's members are looked up there). Seeded.
func TestChildKeyTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 16))
	const alpha = "abcdefghijklmnopqrstuvwxyz_$-0123456789" // (no ".": a pattern step)
	tables := 0
	for set := range 600 {
		nk := 1 + r.IntN(17)
		maxLen := 16
		if set%5 == 0 {
			maxLen = 20
		}
		keys := map[string]bool{}
		prefix := alpha[:r.IntN(8)]
		for len(keys) < nk {
			n := 1 + r.IntN(maxLen)
			b := []byte(prefix + strings.Repeat("x", n))[:n]
			for i := len(prefix); i < n; i++ {
				b[i] = alpha[r.IntN(len(alpha))]
			}
			keys[string(b)] = true
		}
		var pats []string
		for k := range keys {
			pats = append(pats, "r."+k+".v")
		}
		if set%2 == 0 {
			pats = append(pats, "r.*.w")
		}
		nd := MustCompile(pats...).root.childKey([]byte("r"))
		require.NotNil(t, nd)
		if len(keys) > 15 {
			require.False(t, nd.ktabOK, "no table for keys %q", pats)
		} else if len(keys) <= 3 {
			require.True(t, nd.ktabOK, "a table for the few keys %q", pats)
		}
		if nd.ktabOK {
			tables++
		}
		want := func(key string) *node {
			if c, ok := nd.keys[key]; ok {
				return c
			}
			return nd.anyKey
		}
		for k := range keys {
			tries := []string{k, k[:len(k)-1], k + "x", "x" + k[1:], k[:len(k)-1] + "~"}
			for i := range len(k) {
				b := []byte(k)
				b[i] ^= 0x01
				tries = append(tries, string(b))
			}
			for _, key := range tries {
				inLine := []byte(key + `":"` + alpha)[:len(key)]
				require.Same(t, want(key), nd.childKey(inLine), "key %q of set %q", key, pats)
				if nd.ktabOK && len(key) <= 16 {
					require.Same(t, want(key), nd.lookupWords(keyWords(inLine)), "key %q in the table of set %q", key, pats)
				}
			}
		}
	}
	require.Greater(t, tables, 200, "too few sets had a table")
	// the Qwen session patterns (as BenchmarkScanDense compiles them)
	var pats []string
	for _, pre := range []string{"message", "systemPayload.compressedHistory[*]", "systemPayload.history[*]"} {
		for _, f := range []string{"functionCall.name", "functionCall.id", "functionCall.args.name", "functionResponse.name", "functionResponse.id"} {
			pats = append(pats, pre+".parts[*]."+f)
		}
	}
	pats = append(pats, "systemPayload.uiEvent.function_name", "systemPayload.uiEvent.mcp_server_name", "systemPayload.uiEvent.call_id")
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil {
			return
		}
		if len(n.lits) > 0 {
			require.True(t, n.ktabOK, "node with keys %q has no key table", n.labels)
		}
		for _, c := range n.lits {
			walk(c)
		}
		walk(n.anyElem)
		walk(n.anyKey)
	}
	walk(MustCompile(pats...).root)
}
