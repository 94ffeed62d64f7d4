package jsonscan

import (
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
