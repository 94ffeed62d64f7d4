package reports

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTMLColoursLegendAndLinks: issue 8 item 19. Restrictions in effect (deny, block, …)
// are not coloured as problems; only lost is red; cells never break inside an identifier;
// counts link to their rows; the legend shows each value in its cells' colour.
func TestHTMLColoursLegendAndLinks(t *testing.T) {
	rule := func(sel string) string {
		for _, line := range strings.Split(reportCSS, "\n") {
			if strings.Contains(line, sel) && strings.Contains(line, "{color") {
				return line
			}
		}
		return ""
	}
	assert.Contains(t, rule("[data-v=lost]"), "var(--bad)")
	for _, v := range []string{"deny", "block", "disabled", "excluded", "disallowed"} {
		l := rule("[data-v=" + v + "]")
		assert.NotContains(t, l, "--bad", "%s is the rule doing its job, not a problem", v)
		assert.Contains(t, l, "var(--firm)", v)
	}
	assert.Contains(t, rule("[data-v=gained]"), "var(--good)")
	assert.NotContains(t, reportCSS, "overflow-wrap:anywhere;unicode-bidi", "cells do not break names anywhere")
	// Cells wrap only at the <wbr> of a name's seams (breakParts), never inside a word.
	assert.Regexp(t, `(?m)^td\{[^}]*white-space:normal;overflow-wrap:normal;word-break:keep-all`, reportCSS)

	var b strings.Builder
	require.NoError(t, WriteHTML(&b, &HTMLPage{Title: "t",
		Counts: []HTMLCount{{Label: "lost", Value: 2, Tone: "bad", Href: "#pairs.change=lost"}, {Label: "rules", Value: 1}},
		Legend: []HTMLLegend{{Term: "now", Text: "matches <today>"}, {Term: "lost", Value: true, Text: "gone"}},
	}))
	out := b.String()
	assert.Contains(t, out, `<li data-tone="bad"><a href="#pairs.change=lost"><span class="n">2</span> <span class="label">lost</span></a></li>`)
	assert.Contains(t, out, `<li><span class="n">1</span> <span class="label">rules</span></li>`)
	assert.Contains(t, out, `<dt>now</dt><dd>matches &lt;today&gt;</dd>`)
	assert.Contains(t, out, `<dt data-v="lost">lost</dt><dd>gone</dd>`)

	err := WriteHTML(&b, &HTMLPage{Counts: []HTMLCount{{Label: "x", Href: "javascript:alert(1)"}}})
	assert.ErrorIs(t, err, ErrBadSection, "a count links only within the page")
}
