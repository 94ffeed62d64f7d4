package gemini

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A small TOML reader that keeps where things are: BurntSushi/toml decodes and validates a
// policy file (its MetaData keeps key positions private), this finds the byte spans of the
// tables, keys and values the decoder reported, so a rule can be named by file:line:col and a
// rewrite can replace exactly the bytes of one value. It understands what TOML allows in a
// policy file: comments, [table] and [[array]] headers, dotted and quoted keys, basic, literal
// and multi-line strings, arrays and inline tables spanning lines; any other value is skipped
// as a token. Where it cannot follow the file it gives up (ok false) and the caller reports
// positions as unknown rather than guessed.

type tkind byte

const (
	tTable tkind = 't'
	tArray tkind = 'a'
	tStr   tkind = 's'
	tOther tkind = 'v'
)

// tnode is one value of the document with its span.
type tnode struct {
	kind       tkind
	start, end int // the value's bytes (a header table: its header line)
	str        string
	literal    bool // a literal '…' string
	members    []*tmember
	items      []*tnode
	inline     bool // an inline table or array
	// insertAt is where a new "key = value" line goes in a header table (after its header
	// line), indent the indentation of its first key line.
	insertAt int
	indent   string
}

// tmember is one key of a table: its own bytes (keyStart) and the start of its line.
type tmember struct {
	name      string
	keyStart  int
	lineStart int
	val       *tnode
}

func (t *tnode) get(name string) *tmember {
	if t == nil {
		return nil
	}
	for _, m := range t.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

type tparser struct {
	b  []byte
	i  int
	ok bool
}

// parseTOMLPositions returns the document's root table, or ok false where the reader cannot
// follow the file.
func parseTOMLPositions(b []byte) (root *tnode, ok bool) {
	p := &tparser{b: b, ok: true}
	root = &tnode{kind: tTable}
	cur := root
	for p.ok {
		p.skipBlank(true)
		if p.i >= len(b) {
			break
		}
		switch {
		case strings.HasPrefix(string(b[p.i:min(p.i+2, len(b))]), "[["):
			start := p.i
			p.i += 2
			path := p.keyPath("]]")
			if !p.ok {
				return nil, false
			}
			p.i += 2
			parent := root
			for _, k := range path[:len(path)-1] {
				parent = p.descend(parent, k, start)
			}
			last := path[len(path)-1]
			m := parent.get(last)
			if m == nil {
				m = &tmember{name: last, keyStart: start, lineStart: start, val: &tnode{kind: tArray, start: start}}
				parent.members = append(parent.members, m)
			}
			if m.val.kind != tArray {
				return nil, false
			}
			t := &tnode{kind: tTable, start: start}
			p.endHeader(t)
			m.val.items = append(m.val.items, t)
			cur = t
		case b[p.i] == '[':
			start := p.i
			p.i++
			path := p.keyPath("]")
			if !p.ok {
				return nil, false
			}
			p.i++
			t := root
			for _, k := range path {
				t = p.descend(t, k, start)
			}
			if t == nil {
				return nil, false
			}
			p.endHeader(t)
			cur = t
		default:
			p.keyValue(cur, true)
		}
	}
	return root, p.ok
}

// descend returns the table k of t, made when absent (the last table of an array of tables).
func (p *tparser) descend(t *tnode, k string, at int) *tnode {
	if t == nil {
		return nil
	}
	m := t.get(k)
	if m == nil {
		m = &tmember{name: k, keyStart: at, lineStart: at, val: &tnode{kind: tTable, start: at}}
		t.members = append(t.members, m)
	}
	switch m.val.kind {
	case tTable:
		return m.val
	case tArray:
		if n := len(m.val.items); n > 0 && m.val.items[n-1].kind == tTable {
			return m.val.items[n-1]
		}
	}
	p.ok = false
	return nil
}

// endHeader moves past the rest of a header line and records where a key line may be inserted.
func (p *tparser) endHeader(t *tnode) {
	p.skipSpaces()
	if p.i < len(p.b) && p.b[p.i] == '#' {
		p.skipComment()
	}
	t.end = p.i
	if p.i < len(p.b) && p.b[p.i] == '\r' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
	}
	t.insertAt = p.i
	// The indentation of the next key line, if any.
	j := p.i
	for j < len(p.b) && (p.b[j] == ' ' || p.b[j] == '\t') {
		j++
	}
	t.indent = string(p.b[p.i:j])
}

// keyValue reads "key = value" into t (a dotted key makes sub-tables); line says whether it
// stands on its own line (then it must end there).
func (p *tparser) keyValue(t *tnode, line bool) {
	lineStart := p.i
	for lineStart > 0 && p.b[lineStart-1] != '\n' {
		lineStart--
	}
	keyStart := p.i
	path := p.keyPath("=")
	if !p.ok {
		return
	}
	p.i++ // '='
	p.skipSpaces()
	v := p.value()
	if !p.ok {
		return
	}
	for _, k := range path[:len(path)-1] {
		t = p.descend(t, k, keyStart)
		if !p.ok {
			return
		}
	}
	t.members = append(t.members, &tmember{name: path[len(path)-1], keyStart: keyStart, lineStart: lineStart, val: v})
	if line {
		p.skipSpaces()
		if p.i < len(p.b) && p.b[p.i] == '#' {
			p.skipComment()
		}
		if p.i < len(p.b) && p.b[p.i] != '\n' && p.b[p.i] != '\r' {
			p.ok = false
		}
	}
}

// keyPath reads a dotted key up to (not over) end.
func (p *tparser) keyPath(end string) []string {
	var path []string
	for p.ok {
		p.skipSpaces()
		if p.i >= len(p.b) {
			p.ok = false
			return nil
		}
		var k string
		switch p.b[p.i] {
		case '"':
			n := p.basicString()
			if n == nil {
				return nil
			}
			k = n.str
		case '\'':
			n := p.literalString()
			if n == nil {
				return nil
			}
			k = n.str
		default:
			j := p.i
			for j < len(p.b) && isBareKey(p.b[j]) {
				j++
			}
			if j == p.i {
				p.ok = false
				return nil
			}
			k = string(p.b[p.i:j])
			p.i = j
		}
		path = append(path, k)
		p.skipSpaces()
		if strings.HasPrefix(string(p.b[p.i:]), end) {
			return path
		}
		if p.i < len(p.b) && p.b[p.i] == '.' {
			p.i++
			continue
		}
		p.ok = false
	}
	return nil
}

func isBareKey(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// value reads one value.
func (p *tparser) value() *tnode {
	if p.i >= len(p.b) {
		p.ok = false
		return nil
	}
	switch c := p.b[p.i]; {
	case strings.HasPrefix(string(p.b[p.i:min(p.i+3, len(p.b))]), `"""`):
		return p.multiline(`"""`, true)
	case strings.HasPrefix(string(p.b[p.i:min(p.i+3, len(p.b))]), `'''`):
		return p.multiline(`'''`, false)
	case c == '"':
		return p.basicString()
	case c == '\'':
		return p.literalString()
	case c == '[':
		n := &tnode{kind: tArray, start: p.i, inline: true}
		p.i++
		for p.ok {
			p.skipBlank(true)
			if p.i >= len(p.b) {
				p.ok = false
				return nil
			}
			if p.b[p.i] == ']' {
				p.i++
				n.end = p.i
				return n
			}
			item := p.value()
			if !p.ok {
				return nil
			}
			n.items = append(n.items, item)
			p.skipBlank(true)
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
			}
		}
		return nil
	case c == '{':
		n := &tnode{kind: tTable, start: p.i, inline: true}
		p.i++
		for p.ok {
			p.skipSpaces()
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				n.end = p.i
				return n
			}
			p.keyValue(n, false)
			p.skipSpaces()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
			}
		}
		return nil
	default:
		j := p.i
		for j < len(p.b) && !strings.ContainsRune(" \t\r\n,]}#", rune(p.b[j])) {
			j++
		}
		if j == p.i {
			p.ok = false
			return nil
		}
		n := &tnode{kind: tOther, start: p.i, end: j}
		p.i = j
		return n
	}
}

// basicString reads "…" with its escapes.
func (p *tparser) basicString() *tnode {
	n := &tnode{kind: tStr, start: p.i}
	var sb strings.Builder
	p.i++
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			n.end, n.str = p.i, sb.String()
			return n
		case c == '\n':
			p.ok = false
			return nil
		case c == '\\':
			if !p.escape(&sb) {
				return nil
			}
		default:
			sb.WriteByte(c)
			p.i++
		}
	}
	p.ok = false
	return nil
}

// escape decodes the escape at p.i into sb.
func (p *tparser) escape(sb *strings.Builder) bool {
	if p.i+1 >= len(p.b) {
		p.ok = false
		return false
	}
	e := p.b[p.i+1]
	p.i += 2
	switch e {
	case 'b':
		sb.WriteByte('\b')
	case 't':
		sb.WriteByte('\t')
	case 'n':
		sb.WriteByte('\n')
	case 'f':
		sb.WriteByte('\f')
	case 'r':
		sb.WriteByte('\r')
	case 'e':
		sb.WriteByte(0x1b)
	case '"', '\\':
		sb.WriteByte(e)
	case 'u', 'U', 'x':
		n := map[byte]int{'u': 4, 'U': 8, 'x': 2}[e]
		if p.i+n > len(p.b) {
			p.ok = false
			return false
		}
		v, err := strconv.ParseUint(string(p.b[p.i:p.i+n]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			p.ok = false
			return false
		}
		sb.WriteRune(rune(v))
		p.i += n
	default:
		p.ok = false
		return false
	}
	return true
}

// literalString reads '…'.
func (p *tparser) literalString() *tnode {
	n := &tnode{kind: tStr, start: p.i, literal: true}
	j := p.i + 1
	for j < len(p.b) && p.b[j] != '\'' && p.b[j] != '\n' {
		j++
	}
	if j >= len(p.b) || p.b[j] != '\'' {
		p.ok = false
		return nil
	}
	n.str = string(p.b[p.i+1 : j])
	p.i = j + 1
	n.end = p.i
	return n
}

// multiline reads a """…""" or ”'…”' string (a newline right after the opening is dropped;
// in a basic one, a backslash at a line's end joins the next non-blank text).
func (p *tparser) multiline(q string, basic bool) *tnode {
	n := &tnode{kind: tStr, start: p.i, literal: !basic}
	p.i += 3
	if strings.HasPrefix(string(p.b[p.i:]), "\r\n") {
		p.i += 2
	} else if p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
	}
	var sb strings.Builder
	for p.i < len(p.b) {
		if strings.HasPrefix(string(p.b[p.i:min(p.i+3, len(p.b))]), q) {
			// Up to two more quotes belong to the string.
			j := p.i + 3
			for j < len(p.b) && j < p.i+5 && p.b[j] == q[0] {
				j++
			}
			sb.WriteString(strings.Repeat(q[:1], j-p.i-3))
			p.i = j
			n.end, n.str = p.i, sb.String()
			return n
		}
		c := p.b[p.i]
		if basic && c == '\\' {
			j := p.i + 1
			for j < len(p.b) && (p.b[j] == ' ' || p.b[j] == '\t' || p.b[j] == '\r') {
				j++
			}
			if j < len(p.b) && p.b[j] == '\n' {
				for j < len(p.b) && (p.b[j] == ' ' || p.b[j] == '\t' || p.b[j] == '\r' || p.b[j] == '\n') {
					j++
				}
				p.i = j
				continue
			}
			if !p.escape(&sb) {
				return nil
			}
			continue
		}
		sb.WriteByte(c)
		p.i++
	}
	p.ok = false
	return nil
}

func (p *tparser) skipSpaces() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

func (p *tparser) skipComment() {
	for p.i < len(p.b) && p.b[p.i] != '\n' {
		p.i++
	}
}

// skipBlank skips spaces, comments and (with lines) line ends.
func (p *tparser) skipBlank(lines bool) {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t':
			p.i++
		case '\r', '\n':
			if !lines {
				return
			}
			p.i++
		case '#':
			p.skipComment()
		default:
			return
		}
	}
}
