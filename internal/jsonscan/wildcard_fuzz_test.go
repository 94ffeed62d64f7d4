package jsonscan

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
