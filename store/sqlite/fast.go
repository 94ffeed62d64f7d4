package sqlite

import (
	"bytes"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// The SQL-assisted path (issue 12 item 3). For a table spec with one site whose path and
// helper paths (when, call id, server) are plain key chains ("$.part.tool"), SQLite checks each
// value (json_valid: strict RFC 8259, in C) and extracts the string at each path (json_type
// 'text', json_extract); Go then only finds the one token of the site by a literal search,
// instead of lexing the whole value. A value goes through the full JSON lexer instead whenever
// the search could be fooled or the two could disagree:
//   - it is not TEXT, not valid JSON (the lexer words the problem), not valid UTF-8, or holds a
//     `\u` (a key or name spelled with escapes, a lone surrogate);
//   - the site's key ("tool") is followed by ':' more than once (nested or duplicate keys), or
//     once while SQLite finds no string at the path, or the token there is not a plain string
//     (no backslash) equal to what SQLite extracted, or is longer than the capture limit.
//
// Duplicate helper keys resolve alike: SQLite's lookup and the lexer's binding both take the
// first. TestFastPathAgreesWithLexer compares both paths on every fixture and edge case.

// plainPath is a JSON path the SQL-assisted path accepts.
var plainPath = regexp.MustCompile(`^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// fastSpec is the SQL-assisted path of one table spec.
type fastSpec struct {
	needle []byte // the site's last key, quoted: `"tool"`
	path   string // the site path as the lexer renders it: "data:part.tool"
	// elements of the extracted array: the site's, then when, call id, server (-1: none)
	when, callID, server int
	ncols                int
	npaths               int
}

// fastDisabled turns the SQL-assisted path off (tests compare both paths).
var fastDisabled = false

// fastOf returns the SQL-assisted path of ct and its extra SELECT columns for the column
// expression col, or nil when the spec does not qualify.
func fastOf(ct *compiledTable, col string) (*fastSpec, []string) {
	if fastDisabled || len(ct.sites) != 1 {
		return nil, nil
	}
	ss := ct.sites[0].spec
	paths := []string{ss.Path}
	f := &fastSpec{when: -1, callID: -1, server: -1}
	add := func(p string, at *int) {
		if p != "" {
			*at = len(paths)
			paths = append(paths, p)
		}
	}
	if ss.When != nil {
		add(ss.When.Path, &f.when)
	}
	add(ss.CallID, &f.callID)
	add(ss.Server, &f.server)
	for _, p := range paths {
		if !plainPath.MatchString(p) {
			return nil, nil
		}
	}
	last := ss.Path[bytes.LastIndexByte([]byte(ss.Path), '.')+1:]
	f.needle = []byte(`"` + last + `"`)
	f.path = ct.spec.Column + ":" + ss.Path[2:]
	// One json_extract with several paths parses the value once and returns a JSON array of
	// the values (strings quoted, so their type survives); json_valid first, as json_extract
	// fails on malformed JSON.
	valid := fmt.Sprintf("typeof(%s) = 'text' AND json_valid(%s)", col, col)
	args := ""
	for _, p := range append(paths, paths[0])[:max(2, len(paths))] {
		args += ", '" + p + "'"
	}
	cols := []string{fmt.Sprintf("CASE WHEN %s THEN json_extract(%s%s) END", valid, col, args)}
	f.ncols = len(cols)
	f.npaths = len(paths)
	return f, cols
}

// fastRow finds the site of one row by the SQL-assisted path; false sends the value to the
// full lexer (see above). vals are the extra columns (one: the extracted array, or NULL).
func (r *reader) fastRow(c *rowCtx, f *fastSpec, val []byte, b *rowBatch, vals []sfCol) bool {
	if bytes.Contains(val, []byte(`\u`)) || !utf8.Valid(val) {
		return false
	}
	if vals[0].kind != kindText { // NULL: not TEXT, or not valid JSON
		return false
	}
	arr := b.str(&vals[0]) // splitArray copies what it keeps
	var got [4]extracted
	if !splitArray(arr, got[:f.npaths]) {
		return false
	}
	name, isStr := got[0].s, got[0].ok
	at, n := -1, 0
	for i := 0; ; {
		k := bytes.Index(val[i:], f.needle)
		if k < 0 {
			break
		}
		k += i
		i = k + len(f.needle)
		j := skipWS(val, i)
		if j < len(val) && val[j] == ':' {
			n++
			at = k
		}
	}
	switch {
	case n > 1:
		return false
	case !isStr:
		r.extra.fastRows++
		return true // no string at the path: no site (the lexer captures strings only)
	case n == 0:
		return false
	}
	if at > 0 && val[at-1] == '\\' {
		return false
	}
	q := skipWS(val, skipWS(val, at+len(f.needle))+1)
	if q >= len(val) || val[q] != '"' {
		return false
	}
	end := bytes.IndexByte(val[q+1:], '"')
	if end < 0 {
		return false
	}
	raw := val[q : q+end+2]
	if bytes.IndexByte(raw[1:len(raw)-1], '\\') >= 0 || len(raw) > jsonscan.DefaultMaxCapture || string(raw[1:len(raw)-1]) != name {
		return false
	}
	r.extra.fastRows++
	cs := &c.ct.sites[0]
	if f.when >= 0 {
		if w := got[f.when]; !w.ok || !cs.in[w.s] {
			return true
		}
	}
	r.addSite(c, cs, store.Loc{Row: r.labelOf(c), RowID: c.rowid.Int64, Offset: int64(q)}, raw, name, nil,
		f.path, false, text(got[:], f.callID), text(got[:], f.server))
	return true
}

func text(got []extracted, i int) *string {
	if i < 0 || !got[i].ok {
		return nil
	}
	return &got[i].s
}

// extracted is one value of json_extract's array: a string (ok) or anything else.
type extracted struct {
	s  string
	ok bool
}

// splitArray reads the JSON array SQLite's json_extract returns for several paths (canonical
// JSON: no spaces) into out, one element per path; false when it is not such an array.
func splitArray(a string, out []extracted) bool {
	if len(a) < 2 || a[0] != '[' || a[len(a)-1] != ']' {
		return false
	}
	i := 1
	for k := range out {
		if k > 0 {
			if i >= len(a) || a[i] != ',' {
				return false
			}
			i++
		}
		if i >= len(a) {
			return false
		}
		start := i
		if a[i] == '"' {
			i++
			for i < len(a) && a[i] != '"' {
				if a[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(a) {
				return false
			}
			i++
			v, err := jsonscan.Unquote([]byte(a[start:i]))
			if err != nil || v.Lone() {
				return false
			}
			out[k] = extracted{s: v.Str, ok: true}
			continue
		}
		depth := 0
		for i < len(a) {
			c := a[i]
			if depth == 0 && (c == ',' || (c == ']' && i == len(a)-1)) {
				break
			}
			switch c {
			case '"':
				for i++; i < len(a) && a[i] != '"'; i++ {
					if a[i] == '\\' {
						i++
					}
				}
			case '[', '{':
				depth++
			case ']', '}':
				depth--
			}
			i++
		}
		out[k] = extracted{}
	}
	return i == len(a)-1
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
