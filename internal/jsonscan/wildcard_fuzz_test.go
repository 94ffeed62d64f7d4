package jsonscan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wildPats reach into objects through `*` keys (fastKey gives the child node and the key bytes the
// path shows), capture keys (`{}`: fastKey must not take them) and array elements.
var wildPats = MustCompile("mcpServers.*.command", "*.name", "a.*.*.b", "m.*.{}", "x[*].*.name", "k.lit.name")

// FuzzWildcardPatternsCarefulEqualsFast: with patterns that capture below any key, capture
// keys and go through arrays, the scan with its shortcuts (classify, fastKey, skipped values)
// gives the careful scan's records and captures, in Lines and Document mode, for any chunking.
func FuzzWildcardPatternsCarefulEqualsFast(f *testing.F) {
	for _, s := range []string{`{"mcpServers":{"a.b":{"command":"x"}},"q":{"name":"n"}}`, `{"a":{"\u0062":{"z":{"b":"y"}}}}`,
		`{"m":{"k":{"x":1,"y":2}}}`, "{\"x\":[{\"\xff\":{\"name\":\"q\"}}]}", `{"k":{"lit":{"name":"v"}},"k":{"lit":{"name":"w"}}}`,
		"{\"q\"\t:{\"name\":\"n\"}}\n{\"q\" :{\"name\":\"n\"}}"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		in := []byte(s)
		for _, mode := range []Mode{Lines, Document} {
			ref := scanAllWith(t, wildPats, mode, in, int(chunk), func(s *Scanner) { s.careful = true })
			got := scanAllWith(t, wildPats, mode, in, int(chunk), nil)
			if !assert.Equal(t, ref, got, "mode %v", mode) {
				t.FailNow()
			}
		}
	})
}

// TestFastRecordWildcardKeys: the whole-record lexer (fastRecord, which the seeds above, having no
// newline, rarely reach) follows `*` keys of every length, beside literal keys of some lengths,
// as the careful scan does: a member key of no literal key's length leads to the wildcard child
// without a lookup (fastMembers' length test, node.litLen), one of a literal key's length to the literal
// child or, differing, the wildcard one.
func TestFastRecordWildcardKeys(t *testing.T) {
	pats := MustCompile("w.*.name", "w.lit.name", "w.literal_key.name", "v.lit.name", "x[*].*.id")
	var b strings.Builder
	for n := 0; n <= 70; n++ {
		k := strings.Repeat("k", n)
		fmt.Fprintf(&b, `{"w":{%q:{"name":"a%d"},"lit":{"name":"L"},"lid":{"name":"D"}},"v":{%q:{"name":"never"},"lit":{"name":"V"}},"x":[{%q:{"id":"i%d"}}]}`+"\n", k, n, k, k, n)
	}
	in := []byte(b.String())
	ref := scanAllWith(t, pats, Lines, in, 0, func(s *Scanner) { s.careful = true })
	var sc *Scanner
	got := scanAllWith(t, pats, Lines, in, 0, func(s *Scanner) { sc = s })
	require.Equal(t, ref, got)
	require.EqualValues(t, 71, sc.PrefilterStats().FastRecords, "every record read by the whole-record lexer")
	require.Len(t, ref, 71)
	for _, r := range ref {
		require.Len(t, r.Captures, 5, "the wildcard name, lit, lid (through *), V and the element's id: %v", r.Captures)
	}
}
