package reports

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"slices"
	"strings"
)

// HTMLPage is one self-contained HTML report: a title, counts, notes and tables. Every string
// in it is untrusted text (tool and server names come from remote MCP servers): WriteHTML
// escapes all of it.
type HTMLPage struct {
	Title string
	// Meta are short lines under the title (when, from which inputs).
	Meta []string
	// Counts are shown as large numbers at the top.
	Counts []HTMLCount
	// Notes are warnings shown under the counts (files that could not be read, …).
	Notes []string
	// Legend explains the words and colours of the tables, under the counts.
	Legend   []HTMLLegend
	Sections []HTMLSection
}

// HTMLLegend is one entry of the page's legend: a term (a column name or a cell value) and
// what it means. A Value entry is styled as the cells holding that value (data-v), so the
// legend shows the colour it explains.
type HTMLLegend struct {
	Term  string
	Value bool
	Text  string
}

// HTMLCount is one number at the top of the page.
type HTMLCount struct {
	// Label names what is counted, in the plural ("rules"); One in the singular ("rule"),
	// shown when Value is 1 (Label then, when One is empty).
	Label, One string
	Value      int
	// Tone colours a non-zero count: "" (neutral), "bad", "warn" or "good".
	Tone string
	// Href, when set, makes the count a link to the rows it counts: a fragment such as
	// "#pairs.change=lost" (the section's filter state; see WriteHTML). It must start with "#".
	Href string
}

// HTMLSection is one table of the page.
type HTMLSection struct {
	// ID names the section in links and in the fragment state (#<ID>.sort=…); it must match
	// [a-z][a-z0-9-]*.
	ID    string
	Title string
	Table *Table
	// Facets are column names that get a drop-down filter of their distinct values; their
	// cells carry data-v="<value>" so the style sheet can colour known values (match, lost,
	// refused, block, ran, ask…).
	Facets []string
	// Empty is shown instead of the table when it has no rows.
	Empty string
	// Paths are columns holding file paths: the directory all their cells share is said once
	// above the table ("Files in DIR/") and left out of the cells, so the columns that matter
	// fit the page.
	Paths []string
}

// ErrBadSection is returned (wrapped) by WriteHTML for a section with an invalid ID or a
// facet that is not one of its columns.
var ErrBadSection = errors.New("bad HTML section")

var sectionID = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

//go:embed html/report.js
var reportJS string

//go:embed html/report.css
var reportCSS string

// ContentSecurityPolicy is the policy of every page WriteHTML writes (in a meta element):
// nothing may be fetched, no form sent, and only the page's own script and style sheet,
// pinned by their SHA-256, may run. An injected element or event handler could not run even
// if escaping failed.
var ContentSecurityPolicy = fmt.Sprintf("default-src 'none'; script-src '%s'; style-src '%s'; img-src 'none'; base-uri 'none'; form-action 'none'",
	cspHash(reportJS), cspHash(reportCSS))

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// htmlCell is a cell: its text V, and V cut into Parts after the places a long name may
// break at (breakParts), written with <wbr> between them.
type htmlCell struct {
	V     string
	Parts []string
	Facet bool
}

type htmlFacet struct {
	Col    int
	Name   string
	Values []string
}

type htmlSection struct {
	ID, Title, Empty string
	// Shown is the row count ("1 row", "14 rows"); Dir the directory left out of the Paths
	// columns ("" when none).
	Shown, Dir string
	Columns    []htmlCell
	Rows       [][]htmlCell
	Facets     []htmlFacet
}

type htmlData struct {
	Title, CSP string
	CSS        template.CSS
	JS         template.JS
	Meta       []string
	Counts     []HTMLCount
	Notes      []string
	Legend     []HTMLLegend
	Sections   []htmlSection
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
{{- range .Meta}}
<p class="meta">{{.}}</p>
{{- end}}
</header>
<ul class="counts">
{{- range .Counts}}
<li{{if and .Tone .Value}} data-tone="{{.Tone}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{end}}<span class="n">{{.Value}}</span> <span class="label">{{.Label}}</span>{{if .Href}}</a>{{end}}</li>
{{- end}}
</ul>
{{- if .Notes}}
<ul class="notes">
{{- range .Notes}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Legend}}
<details class="legend" open>
<summary>Legend</summary>
<dl>
{{- range .Legend}}
<dt{{if .Value}} data-v="{{.Term}}"{{end}}>{{.Term}}</dt><dd>{{.Text}}</dd>
{{- end}}
</dl>
</details>
{{- end}}
<noscript><p class="hint">Sorting and filtering need JavaScript; every row is listed below.</p></noscript>
<nav>{{range $i, $s := .Sections}}{{if $i}} · {{end}}<a href="#{{$s.ID}}">{{$s.Title}}</a>{{end}}</nav>
{{- range .Sections}}
<section id="{{.ID}}" data-section="{{.ID}}">
<h2>{{.Title}} <span class="shown" data-shown>{{.Shown}}</span></h2>
{{- if .Dir}}
<p class="dir">Files in {{.Dir}}</p>
{{- end}}
{{- if .Rows}}
<div class="controls" hidden>
<label>Filter <input type="search" data-filter placeholder="text in any column" autocomplete="off"></label>
{{- range .Facets}}
<label>{{.Name}} <select data-facet data-col="{{.Col}}"><option value="">all</option>{{range .Values}}<option>{{.}}</option>{{end}}</select></label>
{{- end}}
</div>
<div class="scroll">
<table>
<thead><tr>{{range .Columns}}<th scope="col" data-name="{{.V}}">{{range $i, $p := .Parts}}{{if $i}}<wbr>{{end}}{{$p}}{{end}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Facet}} data-v="{{.V}}"{{end}}>{{range $i, $p := .Parts}}{{if $i}}<wbr>{{end}}{{$p}}{{end}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
</div>
{{- else}}
<p class="empty">{{.Empty}}</p>
{{- end}}
</section>
{{- end}}
<script>{{.JS}}</script>
</body>
</html>
`))

// WriteHTML writes p as one self-contained HTML document: inline style sheet and script (no
// network fetches, pinned by ContentSecurityPolicy), every text escaped by html/template
// after Printable has made control and bidi-override characters visible as \uXXXX, long
// names wrapped anywhere. Without scripts the page is complete and readable (every row is in
// the markup); with them, column headers sort (numbers numerically), a text box and the
// facet drop-downs filter rows, and the state is kept in the URL fragment
// (#<section>.q=text&<section>.sort=-column&<section>.<facet column>=value), so a view can be
// linked and opened directly; a count with an Href links to such a view of its rows (the
// script applies a changed fragment at once). Counts and row counts say "1 row", not "1 rows".
// Cells break only where a name has a seam (after / , _ and the like: breakParts; no hyphen is
// added, copied text is the name), so a table fits the page's width (1,280 px: TestHTMLFits);
// a table that still cannot scrolls sideways within its section.
func WriteHTML(w io.Writer, p *HTMLPage) error {
	d := htmlData{Title: Printable(p.Title), CSP: ContentSecurityPolicy, CSS: template.CSS(reportCSS), JS: template.JS(reportJS),
		Counts: make([]HTMLCount, len(p.Counts))}
	for _, m := range p.Meta {
		d.Meta = append(d.Meta, Printable(m))
	}
	for _, n := range p.Notes {
		d.Notes = append(d.Notes, Printable(n))
	}
	for i, c := range p.Counts {
		if c.Href != "" && c.Href[0] != '#' {
			return fmt.Errorf("write HTML count %q: href %q is not a fragment: %w", c.Label, c.Href, ErrBadSection)
		}
		label := c.Label
		if c.Value == 1 && c.One != "" {
			label = c.One
		}
		d.Counts[i] = HTMLCount{Label: Printable(label), Value: c.Value, Tone: c.Tone, Href: c.Href}
	}
	for _, l := range p.Legend {
		d.Legend = append(d.Legend, HTMLLegend{Term: Printable(l.Term), Value: l.Value, Text: Printable(l.Text)})
	}
	for _, s := range p.Sections {
		hs, err := htmlSectionOf(s)
		if err != nil {
			return err
		}
		d.Sections = append(d.Sections, hs)
	}
	return pageTemplate.Execute(w, d)
}

func htmlSectionOf(s HTMLSection) (htmlSection, error) {
	if !sectionID.MatchString(s.ID) {
		return htmlSection{}, fmt.Errorf("write HTML section %q: id: %w", s.ID, ErrBadSection)
	}
	t := s.Table
	if t == nil {
		t = &Table{}
	}
	hs := htmlSection{ID: s.ID, Title: Printable(s.Title), Empty: Printable(s.Empty), Shown: rowCount(len(t.Rows))}
	if hs.Empty == "" {
		hs.Empty = "Nothing to list."
	}
	pathCol := map[int]bool{}
	for _, c := range s.Paths {
		col := slices.Index(t.Columns, c)
		if col < 0 {
			return htmlSection{}, fmt.Errorf("write HTML section %q: path column %q is not a column: %w", s.ID, c, ErrBadSection)
		}
		pathCol[col] = true
	}
	dir := commonDir(t.Rows, pathCol)
	hs.Dir = Printable(dir)
	facetCol := map[int]bool{}
	for _, f := range s.Facets {
		col := slices.Index(t.Columns, f)
		if col < 0 {
			return htmlSection{}, fmt.Errorf("write HTML section %q: facet %q is not a column: %w", s.ID, f, ErrBadSection)
		}
		facetCol[col] = true
		hs.Facets = append(hs.Facets, htmlFacet{Col: col, Name: Printable(f)})
	}
	for _, c := range t.Columns {
		hs.Columns = append(hs.Columns, htmlCell{V: Printable(c), Parts: breakParts(Printable(c))})
	}
	values := make(map[int]map[string]bool, len(facetCol))
	for _, r := range t.Rows {
		row := make([]htmlCell, len(t.Columns))
		for i := range row {
			v := ""
			if i < len(r) {
				v = r[i]
				if pathCol[i] && dir != "" {
					v = strings.TrimPrefix(v, dir)
				}
				v = Printable(v)
			}
			row[i] = htmlCell{V: v, Parts: breakParts(v), Facet: facetCol[i]}
			if facetCol[i] {
				if values[i] == nil {
					values[i] = map[string]bool{}
				}
				values[i][v] = true
			}
		}
		hs.Rows = append(hs.Rows, row)
	}
	for i := range hs.Facets {
		for v := range values[hs.Facets[i].Col] {
			hs.Facets[i].Values = append(hs.Facets[i].Values, v)
		}
		slices.Sort(hs.Facets[i].Values)
	}
	return hs, nil
}

// rowCount is "1 row" or "N rows".
func rowCount(n int) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

// breakParts cuts a cell's text after each place a long name may break without a hyphen:
// after / , ; : = _ ) . - and a space, and before ( and [, so a path, a server key
// (com.example.search) or an MCP name (mcp__server__tool, get_data_for_a_location) wraps at
// its seams when the column is narrow; never inside a word, nor before a short last word
// after . or - (settings.json, deploy.prod stay whole); text without such places stays one
// part.
func breakParts(v string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '/', ',', ';', ':', '=', '_', ')', ' ', '.', '-':
			// after it, unless the next byte is another of the same (a "__" stays together),
			// or (after . and -) a short word ends the name (settings.json, deploy.prod)
			if i+1 < len(v) && v[i+1] != v[i] && !((v[i] == '.' || v[i] == '-') && shortTail(v[i+1:])) {
				parts = append(parts, v[start:i+1])
				start = i + 1
			}
		case '(', '[':
			if i > start {
				parts = append(parts, v[start:i])
				start = i
			}
		}
	}
	return append(parts, v[start:])
}

// shortTail reports whether s is a word of at most 5 letters or digits that ends the text or is
// followed by a separator other than . and -.
func shortTail(s string) bool {
	n := 0
	for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return n <= 5 && (n == len(s) || !strings.ContainsRune(".-", rune(s[n])))
}

// commonDir is the directory (ending in "/") every non-empty cell of the columns cols
// starts with, "" when they share none but "/" or there are fewer than two such cells.
func commonDir(rows [][]string, cols map[int]bool) string {
	var dir string
	n := 0
	for _, r := range rows {
		for i, v := range r {
			if !cols[i] || v == "" {
				continue
			}
			d := v[:strings.LastIndex(v, "/")+1]
			if n == 0 {
				dir = d
			}
			for !strings.HasPrefix(d, dir) {
				dir = dir[:strings.LastIndex(strings.TrimSuffix(dir, "/"), "/")+1]
			}
			n++
		}
	}
	if n < 2 || dir == "/" {
		return ""
	}
	return dir
}
