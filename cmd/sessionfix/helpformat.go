package main

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/urfave/cli/v2"
)

// helpWidth is the number of terminal columns every --help line fits in (issue 23: a
// terminal's 80; columns as go-runewidth counts them).
const helpWidth = 80

// helpIndent is the indentation of every section's text; section headings start in column 0.
const helpIndent = 3

func init() {
	cli.HelpPrinter = printHelp
	// -v is --verbose wherever a command has it (scan, fix): the version is --version only.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
}

// printHelp is urfave/cli's HelpPrinter: the template rendered as urfave/cli renders it, then
// laid out again by formatHelp for helpWidth columns.
func printHelp(w io.Writer, templ string, data any) {
	var b bytes.Buffer
	cli.HelpPrinterCustom(&b, templ, data, nil)
	_, _ = io.WriteString(w, formatHelp(b.String(), helpWidth))
}

// A help text is read into sections of items (parseHelp), then written again (renderHelp).
type helpItemKind int

const (
	helpProse   helpItemKind = iota // a paragraph: its words are filled into lines again
	helpEntry                       // a term and its text (an option, a command, an exit code)
	helpExample                     // a shell command and an optional "# comment"
	helpLiteral                     // a line kept as written (a CSV header), broken only when too wide
	helpBreak                       // a blank line between paragraphs
)

type helpItem struct {
	kind       helpItemKind
	term, text string // helpEntry: term and text; helpExample: command and comment; others: text
	indent     int    // helpLiteral: columns beyond the section's indentation
}

type helpSection struct {
	name  string
	items []helpItem
	// base is the indentation of the section's first line of text; parent is the section a
	// heading inside it opened this one from (a description's EXAMPLES), nil for a top-level one.
	base   int
	parent *helpSection
}

var (
	// helpHeading is a section heading: capitals, digits and spaces, then a colon, alone on
	// its line. Indented, it is a part of the description given its own section (EXAMPLES,
	// EXIT STATUS).
	helpHeading = regexp.MustCompile(`^[A-Z][A-Z0-9 ]*:$`)
	// helpComment splits an example into its command and its comment (a "#" after a space and
	// before one).
	helpComment = regexp.MustCompile(`^(.*?\S)\s+#\s(.*)$`)
	// helpEntrySplit splits an entry at the first run of two or more spaces.
	helpEntrySplit = regexp.MustCompile(`\s{2,}`)
	// helpSliceFlag is urfave/cli's "[ --name value ]" after a repeatable flag (the usage says
	// "repeatable").
	helpSliceFlag = regexp.MustCompile(`\s*\[ --[^\]]+ \]`)
)

// helpEntrySections are the sections whose lines are entries.
var helpEntrySections = []string{"COMMANDS", "OPTIONS", "GLOBAL OPTIONS", "EXIT STATUS"}

// helpOrder is the order of the sections written; a section not listed comes after
// DESCRIPTION, in the order it appeared.
var helpOrder = []string{"NAME", "USAGE", "VERSION", "DESCRIPTION", "", "COMMANDS", "OPTIONS", "GLOBAL OPTIONS", "EXAMPLES", "EXIT STATUS"}

// formatHelp lays out a help text as urfave/cli rendered it (its sections, with the
// descriptions' own EXAMPLES and EXIT STATUS blocks) for width columns: every section heading
// in column 0 and its text indented by helpIndent; paragraphs filled again; options, commands
// and exit codes as a term and a text wrapped under itself; examples one a line with their
// comments aligned (or above the command when the line would be too wide) and a command too
// wide broken with " \" continuations; the examples a description holds anywhere (the agent
// paragraphs' own) gathered into EXAMPLES. No line is wider than width unless a single word
// is (none is: TestHelpFits).
func formatHelp(s string, width int) string {
	return renderHelp(parseHelp(s), width)
}

func parseHelp(s string) []*helpSection {
	var secs []*helpSection
	section := func(name string) *helpSection {
		for _, sec := range secs {
			if sec.name == name {
				return sec
			}
		}
		sec := &helpSection{name: name, base: -1}
		secs = append(secs, sec)
		return sec
	}
	var cur *helpSection
	pending := "" // an example's comment read on the line above it
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if line == "" {
			if cur != nil {
				cur.items = append(cur.items, helpItem{kind: helpBreak})
			}
			continue
		}
		body := strings.TrimLeft(line, " ")
		ind := len(line) - len(body)
		if helpHeading.MatchString(body) {
			var parent *helpSection
			if ind > 0 && cur != nil {
				parent = cur
				for parent.parent != nil {
					parent = parent.parent
				}
			}
			cur = section(strings.TrimSuffix(body, ":"))
			cur.parent = parent
			continue
		}
		if cur == nil {
			cur = section("")
		}
		// A line left of a heading's text ends the part it opened (the description goes on).
		for cur.parent != nil && cur.base >= 0 && ind < cur.base {
			cur = cur.parent
		}
		if cur.base < 0 {
			cur.base = ind
		}
		rel := ind - cur.base
		entries := slices.Contains(helpEntrySections, cur.name)
		switch {
		case cur.name == "EXAMPLES" && strings.HasPrefix(body, "# "):
			// A comment written above its example (renderExamples, when it does not fit after it).
			pending = strings.TrimSpace(strings.TrimPrefix(pending+" "+strings.TrimPrefix(body, "#"), " "))
		case cur.name == "EXAMPLES" || (rel > 0 && strings.HasPrefix(body, "sessionfix ")):
			cmd := body
			for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
				i++
				cmd = strings.TrimRight(strings.TrimSuffix(cmd, `\`), " ") + " " + strings.TrimSpace(lines[i])
			}
			it := helpItem{kind: helpExample, term: cmd}
			if m := helpComment.FindStringSubmatch(cmd); m != nil {
				it.term, it.text = m[1], m[2]
			}
			if pending != "" {
				it.text, pending = pending, ""
			}
			ex := section("EXAMPLES")
			ex.items = append(ex.items, it)
		case rel > 0 && cur.name == "NAME" && len(cur.items) > 0 && cur.items[len(cur.items)-1].kind == helpProse:
			last := &cur.items[len(cur.items)-1]
			last.text += " " + body
		case rel > 0 && entries && len(cur.items) > 0 && cur.items[len(cur.items)-1].kind == helpEntry:
			last := &cur.items[len(cur.items)-1]
			last.text = strings.TrimSpace(last.text + " " + body)
		case rel > 0:
			cur.items = append(cur.items, helpItem{kind: helpLiteral, text: body, indent: rel})
		case entries:
			parts := helpEntrySplit.Split(body, 2)
			it := helpItem{kind: helpEntry, term: parts[0]}
			if len(parts) == 2 {
				it.text = parts[1]
			}
			cur.items = append(cur.items, it)
		case len(cur.items) > 0 && cur.items[len(cur.items)-1].kind == helpProse:
			last := &cur.items[len(cur.items)-1]
			last.text += " " + body
		default:
			cur.items = append(cur.items, helpItem{kind: helpProse, text: body})
		}
	}
	return secs
}

func renderHelp(secs []*helpSection, width int) string {
	rank := func(name string) int {
		if i := slices.Index(helpOrder, name); i >= 0 {
			return i
		}
		return slices.Index(helpOrder, "")
	}
	slices.SortStableFunc(secs, func(a, b *helpSection) int { return rank(a.name) - rank(b.name) })
	var out []string
	for _, sec := range secs {
		items := trimBreaks(sec.items)
		if len(items) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		if sec.name != "" {
			out = append(out, sec.name+":")
		}
		pad := strings.Repeat(" ", helpIndent)
		switch {
		case sec.name == "EXAMPLES":
			out = append(out, renderExamples(items, width)...)
			continue
		case slices.Contains(helpEntrySections, sec.name):
			out = append(out, renderEntries(sec.name, items, width)...)
			continue
		}
		for i, it := range items {
			switch it.kind {
			case helpBreak:
				if i > 0 && items[i-1].kind != helpBreak {
					out = append(out, "")
				}
			case helpProse:
				hang := 0
				if sec.name == "NAME" {
					if k := strings.Index(it.text, " - "); k >= 0 {
						hang = runewidth.StringWidth(it.text[:k+3])
					}
				}
				out = append(out, fill(it.text, pad, pad+strings.Repeat(" ", hang), width)...)
			case helpLiteral:
				p := strings.Repeat(" ", helpIndent+it.indent)
				out = append(out, breakLiteral(it.text, p, width)...)
			}
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// trimBreaks drops the blank lines at the start and end of items and runs of them.
func trimBreaks(items []helpItem) []helpItem {
	var out []helpItem
	for _, it := range items {
		if it.kind == helpBreak && (len(out) == 0 || out[len(out)-1].kind == helpBreak) {
			continue
		}
		out = append(out, it)
	}
	for len(out) > 0 && out[len(out)-1].kind == helpBreak {
		out = out[:len(out)-1]
	}
	return out
}

// renderEntries writes a section's entries: the terms in one column as wide as the widest
// term up to maxTerm (a wider term stands on its own line), each text filled in the column
// after it. An option's "(default: false)" and urfave/cli's "[ --name value ]" of a
// repeatable flag are dropped (a flag alone is off; its usage says "repeatable").
func renderEntries(section string, items []helpItem, width int) []string {
	const maxTerm = 24
	var entries []helpItem
	col := 0
	for _, it := range items {
		if it.kind != helpEntry {
			continue
		}
		if section == "OPTIONS" || section == "GLOBAL OPTIONS" {
			it.term = helpSliceFlag.ReplaceAllString(it.term, "")
			it.text = strings.TrimSpace(strings.ReplaceAll(it.text, " (default: false)", ""))
		}
		entries = append(entries, it)
		if w := runewidth.StringWidth(it.term); w <= maxTerm {
			col = max(col, w)
		}
	}
	pad := strings.Repeat(" ", helpIndent)
	hang := strings.Repeat(" ", helpIndent+col+2)
	var out []string
	for _, it := range entries {
		w := runewidth.StringWidth(it.term)
		if w > col {
			out = append(out, pad+it.term)
			out = append(out, fill(it.text, hang, hang, width)...)
			continue
		}
		first := pad + it.term + strings.Repeat(" ", col-w+2)
		if it.text == "" {
			out = append(out, strings.TrimRight(first, " "))
			continue
		}
		out = append(out, fill(it.text, first, hang, width)...)
	}
	return out
}

// renderExamples writes the examples one a line, their comments in one column after the
// widest command that leaves room for its comment; an example whose comment does not fit
// there has it on the line above; a command wider than the line is broken (breakCommand).
func renderExamples(items []helpItem, width int) []string {
	pad := strings.Repeat(" ", helpIndent)
	var ex []helpItem
	for _, it := range items {
		if it.kind == helpExample {
			ex = append(ex, it)
		}
	}
	above := make([]bool, len(ex))
	col := 0
	for changed := true; changed; {
		changed, col = false, 0
		for i, e := range ex {
			if e.text != "" && !above[i] {
				col = max(col, helpIndent+runewidth.StringWidth(e.term)+2)
			}
		}
		for i, e := range ex {
			if e.text != "" && !above[i] && col+2+runewidth.StringWidth(e.text) > width {
				above[i], changed = true, true
			}
		}
	}
	var out []string
	for i, e := range ex {
		switch {
		case e.text == "":
			out = append(out, breakCommand(e.term, pad, width)...)
		case above[i]:
			out = append(out, fill("# "+e.text, pad, pad+"# ", width)...)
			out = append(out, breakCommand(e.term, pad, width)...)
		default:
			line := pad + e.term
			out = append(out, line+strings.Repeat(" ", col-runewidth.StringWidth(line))+"# "+e.text)
		}
	}
	return out
}

// breakCommand writes a shell command in lines of at most width columns: words (a quoted
// string is one word) filled after pad, each line but the last ended by " \\", the next ones
// indented four more columns. A flag and the word after it (its value, when it takes one) are
// kept on one line.
func breakCommand(cmd, pad string, width int) []string {
	var words []string
	sw := shellWords(cmd)
	for i := 0; i < len(sw); i++ {
		w := sw[i]
		if (w == "<" || w == ">" || w == "|" || strings.HasPrefix(w, "-") && !strings.Contains(w, "=")) && i+1 < len(sw) && !strings.HasPrefix(sw[i+1], "-") {
			w += " " + sw[i+1]
			i++
		}
		words = append(words, w)
	}
	cont := pad + "    "
	var out []string
	line := pad
	for _, w := range words {
		switch {
		case line == pad || line == cont:
			line += w
		case runewidth.StringWidth(line)+1+runewidth.StringWidth(w)+2 > width:
			out = append(out, line+` \`)
			line = cont + w
		default:
			line += " " + w
		}
	}
	return append(out, line)
}

// shellWords splits a command at its spaces outside quotes (a quoted string, quotes kept, is
// one word).
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// fill fills the words of text into lines of at most width columns: the first line starts
// with first, the others with rest. A word wider than a line is broken after its commas or
// slashes (breakWord).
func fill(text, first, rest string, width int) []string {
	var out []string
	line := first
	empty := true
	for _, w := range strings.Fields(text) {
		for _, part := range breakWord(w, width-runewidth.StringWidth(rest)) {
			switch {
			case empty:
				line += part
				empty = false
			case runewidth.StringWidth(line)+1+runewidth.StringWidth(part) > width:
				out = append(out, line)
				line = rest + part
			default:
				line += " " + part
			}
		}
	}
	return append(out, line)
}

// breakWord splits a word wider than room columns after commas or slashes into parts that fit
// (a part with no such place stays whole); a word that fits is its only part.
func breakWord(w string, room int) []string {
	if runewidth.StringWidth(w) <= room || room <= 0 {
		return []string{w}
	}
	var parts []string
	for runewidth.StringWidth(w) > room {
		cut := -1
		for i, r := range w {
			if runewidth.StringWidth(w[:i+1]) > room {
				break
			}
			if r == ',' || r == '/' {
				cut = i + 1
			}
		}
		if cut <= 0 {
			break
		}
		parts = append(parts, w[:cut])
		w = w[cut:]
	}
	return append(parts, w)
}

// breakLiteral writes a line kept as written after pad, broken after a comma or space where it
// is wider than width.
func breakLiteral(text, pad string, width int) []string {
	room := width - runewidth.StringWidth(pad)
	var out []string
	for runewidth.StringWidth(text) > room {
		cut := -1
		for i, r := range text {
			if runewidth.StringWidth(text[:i+1]) > room {
				break
			}
			if r == ',' || r == ' ' {
				cut = i + 1
			}
		}
		if cut <= 0 {
			break
		}
		out = append(out, pad+strings.TrimRight(text[:cut], " "))
		text = strings.TrimLeft(text[cut:], " ")
	}
	return append(out, pad+text)
}
