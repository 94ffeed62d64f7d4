package reports_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/reports/htmltest"
)

// browserPage is hostilePage with an index column whose numeric and lexical orders differ.
func browserPage(t testing.TB) (path string, page *reports.HTMLPage) {
	t.Helper()
	page = hostilePage()
	tbl := page.Sections[0].Table
	for i := range tbl.Rows {
		tbl.Rows[i][1] = strconv.Itoa((i * 7) % 20)
	}
	path = filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, reports.WriteHTML(f, page))
	require.NoError(t, f.Close())
	return path, page
}

func column(rows []htmltest.Row, i int) []string {
	out := make([]string, len(rows))
	for j, r := range rows {
		out[j] = r.Cells[i]
	}
	return out
}

// TestHTMLInBrowser opens the hostile page in headless Chromium (scripts on, under the
// page's CSP) and checks the DOM after the script ran: nothing injected became an element,
// every name reads back as text, and sorting and filtering (driven by the URL fragment, as
// a user's click stores them) work.
func TestHTMLInBrowser(t *testing.T) {
	bin := htmltest.Chromium(t)
	path, page := browserPage(t)
	src := page.Sections[0].Table

	t.Run("loaded, nothing injected", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, ""))
		tags := htmltest.Tags(dom)
		for tag := range tags {
			assert.True(t, pageElements[tag], "unexpected element <%s>", tag)
		}
		assert.Equal(t, 1, tags["script"])
		assert.Zero(t, tags["img"]+tags["svg"])
		assert.Equal(t, len(src.Columns), tags["button"], "the script ran under the CSP: every header became a sort button")
		assert.NotContains(t, dom, `class="controls" hidden`, "the script showed the filter controls")
		rows, shown := htmltest.Section(t, dom, "pairs")
		assert.Equal(t, "14 rows", shown)
		require.Len(t, rows, len(src.Rows))
		for i, r := range rows {
			assert.False(t, r.Hidden)
			assert.Equal(t, reports.Printable(src.Rows[i][0]), r.Cells[0], "row %d reads back as text", i)
		}
	})

	t.Run("facet filter", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, "pairs.change=lost"))
		rows, shown := htmltest.Section(t, dom, "pairs")
		visible := htmltest.Visible(rows)
		assert.Len(t, visible, 5)
		assert.Equal(t, "5 of 14 rows", shown)
		for _, r := range visible {
			assert.Equal(t, "lost", r.Cells[2])
		}
	})

	t.Run("text filter", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, "pairs.q=SCRIPT"))
		rows, shown := htmltest.Section(t, dom, "pairs")
		assert.Equal(t, []string{`<script>alert("x")</script>`}, column(htmltest.Visible(rows), 0), "case-insensitive")
		assert.Equal(t, "1 of 14 rows", shown)
	})

	t.Run("numeric sort, descending", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, "pairs.sort=-index"))
		rows, _ := htmltest.Section(t, dom, "pairs")
		got := column(rows, 1)
		want := column(rows, 1)
		slices.SortStableFunc(want, func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			return y - x
		})
		assert.Equal(t, want, got)
		assert.Equal(t, []string{"17", "16", "15", "14"}, got[:4], "9 > 17 lexically: numbers compare as numbers")
		assert.Contains(t, dom, `aria-sort="descending"><button`)
	})

	t.Run("text sort and filters combine", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, "pairs.sort=rule&pairs.change=gained&pairs.q=mcp__"))
		rows, shown := htmltest.Section(t, dom, "pairs")
		visible := column(htmltest.Visible(rows), 0)
		assert.Equal(t, "1 of 14 rows", shown)
		assert.Equal(t, []string{`mcp__srv__\u2066x\u2069`}, visible)
		all := column(rows, 0)
		assert.True(t, slices.IsSorted(all), "rows sorted by rule: %q", all)
	})

	t.Run("unknown fragment values are ignored", func(t *testing.T) {
		dom := htmltest.DumpDOM(t, bin, htmltest.FileURL(t, path, "pairs.change=%3Cimg%3E&pairs.sort=nosuch&other.q=x"))
		rows, shown := htmltest.Section(t, dom, "pairs")
		assert.Len(t, htmltest.Visible(rows), 14)
		assert.Equal(t, "14 rows", shown)
		assert.False(t, strings.Contains(dom, "<img"), "a fragment value never becomes markup")
	})
}
