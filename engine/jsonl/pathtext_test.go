package jsonl

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/stretchr/testify/require"
)

// TestPathTextIsPathString: the path cache of Builder.Site gives Path.String for every path,
// also for paths that fall into the same slot (same length, same key lengths, indexes whose
// hash contributions collide), for keys that are equal strings in different memory, and for
// keys that need quoting; equal paths share one string.
func TestPathTextIsPathString(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := []string{"message", "parts", "functionCall", "functionResponse", "name", "id", "a.b", "é", "", "x\"y"}
	b := &Builder{}
	seen := map[string]string{}
	hits := 0
	for range 20000 {
		n := r.IntN(6)
		p := make(jsonscan.Path, n)
		for i := range p {
			if r.IntN(3) == 0 {
				p[i] = jsonscan.Elem{Index: r.IntN(70)}
			} else {
				k := keys[r.IntN(len(keys))]
				p[i] = jsonscan.Elem{Key: string([]byte(k)), Index: -1} // a fresh copy of the key
			}
		}
		got := b.pathText(p)
		require.Equal(t, p.String(), got, "path %#v", p)
		if s, ok := seen[got]; ok {
			hits++
			require.Same(t, unsafe.StringData(s), unsafe.StringData(got), "equal paths share one string")
		}
		seen[got] = got
	}
	require.Greater(t, hits, 1000)
	// Two paths in the same slot: index 7 more and key length 31·7 = 217 less cancel out.
	p1 := jsonscan.Path{{Key: string(make([]byte, 217)), Index: -1}, {Index: 0}}
	p2 := jsonscan.Path{{Key: "", Index: 30}, {Index: 0}}
	for range 3 {
		require.Equal(t, p1.String(), b.pathText(p1))
		require.Equal(t, p2.String(), b.pathText(p2))
	}
}
