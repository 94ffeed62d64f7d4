// Package helpformat lays out a --help text for a terminal (issue 23: every line fits 80
// columns): a text as urfave/cli renders it is read into sections of items (Parse: paragraphs,
// entries, examples, literal lines) and written again for a width (Format). It knows no flag and
// no command: the CLI's help printer renders its template and hands the text over; the docs
// generator reads the same sections (Parse) to write docs/commands/.
package helpformat

import (
	"regexp"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
)

// Width is the number of terminal columns every --help line fits in (issue 23: a terminal's
// 80; columns as go-runewidth counts them).
const Width = 80

// Indent is the indentation of every section's text; section headings start in column 0.
const Indent = 3

// Kind is what an Item is. A help text is read into sections of items (Parse), then written
// again (render).
type Kind int

const (
	Prose   Kind = iota // a paragraph: its words are filled into lines again
	Entry               // a term and its text (an option, a command, an exit code)
	Example             // a shell command and an optional "# comment"
	Literal             // a line kept as written (a CSV header), broken only when too wide
	Break               // a blank line between paragraphs
)

// Item is one item of a section: its Kind, Term and Text (Entry: term and text; Example:
// command and comment; others: Text) and Indent (Literal: columns beyond the section's
// indentation).
type Item struct {
	Kind       Kind
	Term, Text string
	Indent     int
}

// Section is one section of a help text: its Name (the heading without its colon) and Items.
type Section struct {
	Name  string
	Items []Item
	// base is the indentation of the section's first line of text; parent is the section a
	// heading inside it opened this one from (a description's EXAMPLES), nil for a top-level one.
	base   int
	parent *Section
}

var (
	// heading is a section heading: capitals, digits and spaces, then a colon, alone on
	// its line. Indented, it is a part of the description given its own section (EXAMPLES,
	// EXIT STATUS).
	heading = regexp.MustCompile(`^[A-Z][A-Z0-9 ]*:$`)
	// comment splits an example into its command and its comment (a "#" after a space and
	// before one).
	comment = regexp.MustCompile(`^(.*?\S)\s+#\s(.*)$`)
	// entrySplit splits an entry at the first run of two or more spaces.
	entrySplit = regexp.MustCompile(`\s{2,}`)
	// SliceFlag is urfave/cli's "[ --name value ]" after a repeatable flag (the usage says
	// "repeatable").
	SliceFlag = regexp.MustCompile(`\s*\[ --[^\]]+ \]`)
)

// EntrySections are the sections whose lines are entries.
var EntrySections = []string{"COMMANDS", "OPTIONS", "GLOBAL OPTIONS", "EXIT STATUS"}

// order is the order of the sections written; a section not listed comes after
// DESCRIPTION, in the order it appeared.
var order = []string{"NAME", "USAGE", "VERSION", "DESCRIPTION", "", "COMMANDS", "OPTIONS", "GLOBAL OPTIONS", "EXAMPLES", "EXIT STATUS"}

// Format lays out a help text as urfave/cli rendered it (its sections, with the
// descriptions' own EXAMPLES and EXIT STATUS blocks) for width columns: every section heading
// in column 0 and its text indented by Indent; paragraphs filled again; options, commands
// and exit codes as a term and a text wrapped under itself; examples one a line with their
// comments aligned (or above the command when the line would be too wide) and a command too
// wide broken with " \" continuations; the examples a description holds anywhere (the agent
// paragraphs' own) gathered into EXAMPLES. No line is wider than width unless a single word
// is (none is: TestHelpFits).
func Format(s string, width int) string {
	return render(Parse(s), width)
}

func Parse(s string) []*Section {
	var secs []*Section
	section := func(name string) *Section {
		for _, sec := range secs {
			if sec.Name == name {
				return sec
			}
		}
		sec := &Section{Name: name, base: -1}
		secs = append(secs, sec)
		return sec
	}
	var cur *Section
	pending := "" // an example's comment read on the line above it
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if line == "" {
			if cur != nil {
				cur.Items = append(cur.Items, Item{Kind: Break})
			}
			continue
		}
		body := strings.TrimLeft(line, " ")
		ind := len(line) - len(body)
		if heading.MatchString(body) {
			var parent *Section
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
		entries := slices.Contains(EntrySections, cur.Name)
		switch {
		case cur.Name == "EXAMPLES" && strings.HasPrefix(body, "# "):
			// A comment written above its example (renderExamples, when it does not fit after it).
			pending = strings.TrimSpace(strings.TrimPrefix(pending+" "+strings.TrimPrefix(body, "#"), " "))
		case cur.Name == "EXAMPLES" || (rel > 0 && strings.HasPrefix(body, "sessionfix ")):
			cmd := body
			for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
				i++
				cmd = strings.TrimRight(strings.TrimSuffix(cmd, `\`), " ") + " " + strings.TrimSpace(lines[i])
			}
			it := Item{Kind: Example, Term: cmd}
			if m := comment.FindStringSubmatch(cmd); m != nil {
				it.Term, it.Text = m[1], m[2]
			}
			if pending != "" {
				it.Text, pending = pending, ""
			}
			ex := section("EXAMPLES")
			ex.Items = append(ex.Items, it)
		case rel > 0 && cur.Name == "NAME" && len(cur.Items) > 0 && cur.Items[len(cur.Items)-1].Kind == Prose:
			last := &cur.Items[len(cur.Items)-1]
			last.Text += " " + body
		case rel > 0 && entries && len(cur.Items) > 0 && cur.Items[len(cur.Items)-1].Kind == Entry:
			last := &cur.Items[len(cur.Items)-1]
			last.Text = strings.TrimSpace(last.Text + " " + body)
		case rel > 0:
			cur.Items = append(cur.Items, Item{Kind: Literal, Text: body, Indent: rel})
		case entries:
			parts := entrySplit.Split(body, 2)
			it := Item{Kind: Entry, Term: parts[0]}
			if len(parts) == 2 {
				it.Text = parts[1]
			}
			cur.Items = append(cur.Items, it)
		case len(cur.Items) > 0 && cur.Items[len(cur.Items)-1].Kind == Prose:
			last := &cur.Items[len(cur.Items)-1]
			last.Text += " " + body
		default:
			cur.Items = append(cur.Items, Item{Kind: Prose, Text: body})
		}
	}
	return secs
}

func render(secs []*Section, width int) string {
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return slices.Index(order, "")
	}
	slices.SortStableFunc(secs, func(a, b *Section) int { return rank(a.Name) - rank(b.Name) })
	var out []string
	for _, sec := range secs {
		items := TrimBreaks(sec.Items)
		if len(items) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		if sec.Name != "" {
			out = append(out, sec.Name+":")
		}
		pad := strings.Repeat(" ", Indent)
		switch {
		case sec.Name == "EXAMPLES":
			out = append(out, renderExamples(items, width)...)
			continue
		case slices.Contains(EntrySections, sec.Name):
			out = append(out, renderEntries(sec.Name, items, width)...)
			continue
		}
		for i, it := range items {
			switch it.Kind {
			case Break:
				if i > 0 && items[i-1].Kind != Break {
					out = append(out, "")
				}
			case Prose:
				hang := 0
				if sec.Name == "NAME" {
					if k := strings.Index(it.Text, " - "); k >= 0 {
						hang = runewidth.StringWidth(it.Text[:k+3])
					}
				}
				out = append(out, fill(it.Text, pad, pad+strings.Repeat(" ", hang), width)...)
			case Literal:
				p := strings.Repeat(" ", Indent+it.Indent)
				out = append(out, breakLiteral(it.Text, p, width)...)
			}
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// TrimBreaks drops the blank lines at the start and end of items and runs of them.
func TrimBreaks(items []Item) []Item {
	var out []Item
	for _, it := range items {
		if it.Kind == Break && (len(out) == 0 || out[len(out)-1].Kind == Break) {
			continue
		}
		out = append(out, it)
	}
	for len(out) > 0 && out[len(out)-1].Kind == Break {
		out = out[:len(out)-1]
	}
	return out
}

// renderEntries writes a section's entries: the terms in one column as wide as the widest
// term up to maxTerm (a wider term stands on its own line), each text filled in the column
// after it. An option's "(default: false)" and urfave/cli's "[ --name value ]" of a
// repeatable flag are dropped (a flag alone is off; its usage says "repeatable").
func renderEntries(section string, items []Item, width int) []string {
	const maxTerm = 24
	var entries []Item
	col := 0
	for _, it := range items {
		if it.Kind != Entry {
			continue
		}
		if section == "OPTIONS" || section == "GLOBAL OPTIONS" {
			it.Term = SliceFlag.ReplaceAllString(it.Term, "")
			it.Text = strings.TrimSpace(strings.ReplaceAll(it.Text, " (default: false)", ""))
		}
		entries = append(entries, it)
		if w := runewidth.StringWidth(it.Term); w <= maxTerm {
			col = max(col, w)
		}
	}
	pad := strings.Repeat(" ", Indent)
	hang := strings.Repeat(" ", Indent+col+2)
	var out []string
	for _, it := range entries {
		w := runewidth.StringWidth(it.Term)
		if w > col {
			out = append(out, pad+it.Term)
			out = append(out, fill(it.Text, hang, hang, width)...)
			continue
		}
		first := pad + it.Term + strings.Repeat(" ", col-w+2)
		if it.Text == "" {
			out = append(out, strings.TrimRight(first, " "))
			continue
		}
		out = append(out, fill(it.Text, first, hang, width)...)
	}
	return out
}

// renderExamples writes the examples one a line, their comments in one column after the
// widest command that leaves room for its comment; an example whose comment does not fit
// there has it on the line above; a command wider than the line is broken (breakCommand).
func renderExamples(items []Item, width int) []string {
	pad := strings.Repeat(" ", Indent)
	var ex []Item
	for _, it := range items {
		if it.Kind == Example {
			ex = append(ex, it)
		}
	}
	above := make([]bool, len(ex))
	col := 0
	for changed := true; changed; {
		changed, col = false, 0
		for i, e := range ex {
			if e.Text != "" && !above[i] {
				col = max(col, Indent+runewidth.StringWidth(e.Term)+2)
			}
		}
		for i, e := range ex {
			if e.Text != "" && !above[i] && col+2+runewidth.StringWidth(e.Text) > width {
				above[i], changed = true, true
			}
		}
	}
	var out []string
	for i, e := range ex {
		switch {
		case e.Text == "":
			out = append(out, breakCommand(e.Term, pad, width)...)
		case above[i]:
			out = append(out, fill("# "+e.Text, pad, pad+"# ", width)...)
			out = append(out, breakCommand(e.Term, pad, width)...)
		default:
			line := pad + e.Term
			out = append(out, line+strings.Repeat(" ", col-runewidth.StringWidth(line))+"# "+e.Text)
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
