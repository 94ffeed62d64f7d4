// Package reports renders tables of plain strings as aligned text, CSV (made inert for
// spreadsheets), JSON and one self-contained HTML page (WriteHTML: escaped, no network
// fetches, CSP-pinned inline script for sorting and filtering). It knows nothing of stores:
// callers turn their results into Tables.
//
// WriteSARIFRuns writes a SARIF 2.1.0 log (github.com/owenrumney/go-sarif/v2) from plain rules
// and results; text tables measure cells in terminal columns (github.com/mattn/go-runewidth).
// A leaf (internal/layering TestReportsIsALeaf): every layer that writes a report may use it.
package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
)

// Table is a header and rows of cells.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Add appends a row.
func (t *Table) Add(cells ...string) { t.Rows = append(t.Rows, cells) }

// width is the fixed, locale-independent width rule of text tables: East Asian wide and
// fullwidth characters (CJK, most emoji) take two terminal cells, combining marks none,
// ambiguous-width characters one (UAX #11 via go-runewidth; the same on every machine, so
// golden output does not depend on $LANG).
var width = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// DisplayWidth is the number of terminal cells s takes (see width).
func DisplayWidth(s string) int { return width.StringWidth(s) }

// WriteText writes t with columns aligned by display width (terminal cells: a CJK character
// counts two, a combining mark none; see DisplayWidth), two spaces apart, the
// header in upper case. Cells are made printable: control characters are shown as \uXXXX so a
// hostile name cannot move the cursor or hide text on a terminal.
func WriteText(w io.Writer, t *Table) error {
	widths := make([]int, len(t.Columns))
	rows := make([][]string, 0, len(t.Rows)+1)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = strings.ToUpper(c)
	}
	rows = append(rows, head)
	for _, r := range t.Rows {
		clean := make([]string, len(r))
		for i, c := range r {
			clean[i] = Printable(c)
		}
		rows = append(rows, clean)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], DisplayWidth(c))
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-DisplayWidth(c)+2))
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// Printable replaces control, bidi and invisible characters (zero-width spaces and joiners,
// soft hyphen, line separators, BOM) with \uXXXX escapes, so what a cell shows is what it
// holds.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			b.WriteString(`\u`)
			const hex = "0123456789abcdef"
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0: // C0, DEL, C1 controls
		return true
	case r == 0x00ad, r == 0x034f, r == 0x061c, r == 0x180e: // soft hyphen, CGJ, ALM, MVS
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line/paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0xfeff, r >= 0xfff9 && r <= 0xfffb: // BOM/ZWNBSP, interlinear annotation
		return true
	}
	return false
}

// CSVSafe makes a cell inert for spreadsheets: a cell starting with '=', '+', '-', '@', tab or
// CR gets a leading apostrophe (OWASP CSV injection guidance).
func CSVSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// WriteCSV writes t as RFC 4180 CSV with a header row, every cell passed through CSVSafe.
func WriteCSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	row := make([]string, len(t.Columns))
	for _, r := range t.Rows {
		for i := range row {
			row[i] = ""
			if i < len(r) {
				row[i] = CSVSafe(r[i])
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes v as indented JSON without HTML escaping (names keep '<', '>' and '&').
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Plural is n and what, pluralised the English way for the words sessionfix counts ("1 name",
// "2 names", "3 policies").
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ShellQuote quotes s for a POSIX shell (single quotes) when it is empty or holds a
// character the shell would interpret; else s as it is. For commands printed to be run.
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// JSONFile is one input file a report read, with its scope (an audit's settings or rule file:
// "user", "project" …), as JSON {"path", "scope"}.
type JSONFile struct {
	Path  string `json:"path"`
	Scope string `json:"scope"`
}

// JSONPair is one (rule, tool) pair of an audit's JSON document, with the columns of its pairs
// table (audit.md §3; inventory only when the tool was inferred). A previous run's pairs are
// what audit.ReadBaseline reads back as a baseline.
type JSONPair struct {
	File       string `json:"settings_file"`
	Scope      string `json:"scope"`
	Key        string `json:"key"`
	Index      int    `json:"index"`
	Rule       string `json:"rule"`
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	Registered string `json:"registered_name"`
	Now        string `json:"now"`
	Before     string `json:"before"`
	Change     string `json:"change"`
	Inventory  string `json:"inventory,omitempty"`
}

// MarkdownText is s as Markdown text that shows s and nothing else: printable (Printable),
// every character that could start inline markup, a link, HTML, an entity or a table cell
// escaped with a backslash (\ ` * _ [ ] < > | ~ &); text is never at the start of a line
// where # - + or a digit could start a block (the writers put it after a list marker or a
// fixed word).
func MarkdownText(s string) string {
	var b strings.Builder
	for _, r := range Printable(s) {
		if strings.ContainsRune("\\`*_[]<>|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MarkdownCode is s as a Markdown code span (printable; a fence longer than any run of
// backticks in it; a "|" escaped, as a table cell needs).
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(Printable(s), "|", `\|`)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// MarkdownCodeBlock is s as a fenced code block of language lang (a fence longer than any run
// of backticks in s).
func MarkdownCodeBlock(s, lang string) string {
	s = Printable(s)
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + s + "\n" + fence + "\n"
}

// WriteMarkdownTable writes t as a GitHub-flavoured Markdown table: the cells of the columns
// named in code as code spans (names and paths, shown as they are), the others as text; every
// cell printable and inert (MarkdownText, MarkdownCode).
func WriteMarkdownTable(w io.Writer, t *Table, code ...string) error {
	isCode := make([]bool, len(t.Columns))
	head := make([]string, len(t.Columns))
	rule := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		isCode[i] = slices.Contains(code, c)
		head[i], rule[i] = MarkdownText(c), "---"
	}
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n| " + strings.Join(rule, " | ") + " |\n")
	for _, r := range t.Rows {
		cells := make([]string, len(t.Columns))
		for i := range cells {
			v := ""
			if i < len(r) {
				v = r[i]
			}
			if isCode[i] && v != "" {
				cells[i] = MarkdownCode(v)
			} else {
				cells[i] = MarkdownText(v)
			}
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TrimCommonDir takes the directory every non-empty cell of column col shares (ending in "/";
// none when it is "/" or fewer than two cells have one) out of those cells and returns it ("" when
// nothing was taken), for a report to say once ("Files in DIR").
func TrimCommonDir(t *Table, col string) string {
	i := slices.Index(t.Columns, col)
	if i < 0 {
		return ""
	}
	dir := commonDir(t.Rows, map[int]bool{i: true})
	if dir == "" {
		return ""
	}
	for _, r := range t.Rows {
		if i < len(r) {
			r[i] = strings.TrimPrefix(r[i], dir)
		}
	}
	return dir
}

// Document is v as a JSON document handed on through an interface (json.Marshaler) to a
// writer that never reads it: it encodes as WriteJSON encodes v (no HTML escaping), and
// encoding/json compacts what MarshalJSON returns and indents it with the rest, so WriteJSON of
// Document(v) writes WriteJSON(v)'s bytes.
func Document(v any) json.Marshaler { return document{v} }

type document struct{ v any }

func (d document) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d.v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// AndList is "a, b and c".
func AndList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// OrList is "a, b or c".
func OrList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}
