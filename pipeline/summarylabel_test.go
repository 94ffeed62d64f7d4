package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sessionfix/sessionfix/mcpname"
	"github.com/sessionfix/sessionfix/pipeline/report"
	"github.com/sessionfix/sessionfix/store"
)

// TestDottedLabelCached: the Summary's cached label of a legacy-dotted name is ClassLabel's,
// the first time and from the cache, for each kind of fault, and a site holding a lone
// surrogate (Units set) is labelled from its units, never from a cached name.
func TestDottedLabelCached(t *testing.T) {
	a := &Summary{}
	sites := []store.Site{
		{Name: "mcp__lit__literature.search_pubmed"},
		{Name: "mcp__srv__caf\u00e9"},
		{Name: "mcp__srv__x.y"},
		{Name: "mcp__lit__literature.search_pubmed"},
		{Name: "mcp__srv__\ufffd", Units: []uint16{'m', 'c', 'p', '_', '_', 's', 'r', 'v', '_', '_', 0xd800}},
	}
	want := map[string]string{}
	for i := range sites {
		s := &sites[i]
		w := report.ClassLabel(mcpname.ClassLegacyDotted, s)
		for range 2 {
			assert.Equal(t, w, a.dottedLabel(s), "site %d", i)
		}
		want[s.Name] = w
	}
	assert.Equal(t, "legacy-dotted", want["mcp__lit__literature.search_pubmed"])
	assert.Equal(t, "legacy-non-ascii", want["mcp__srv__caf\u00e9"])
	assert.NotContains(t, a.labels, "mcp__srv__\ufffd", "a site with units is not cached by its name")
}
