package sqlite

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// The SQL-assisted path (issue 12 item 3). For a table spec with one site whose path and
// helper paths (when, call id, server) are plain key chains ("$.part.tool"), the SQL function
// sessionfix_extract (extract.go, in C, evaluated by SQLite as it steps) checks each value in one
// pass (strict RFC 8259, one object) and returns the strings at the paths and the byte offset of
// the site's token; Go then takes the token at that offset instead of lexing the whole value.
// A value goes through the full JSON lexer instead whenever the two could disagree:
//   - it is not TEXT, not such JSON (the lexer words the problem), not valid UTF-8, has an
//     escaped key anywhere (a key spelled with `\u`) or a key of one of the paths twice in one
//     object (the lexer would capture both), or nests deeper than 64 levels;
//   - the token at the offset is not a plain string (no backslash) equal to the extracted one,
//     or is longer than the capture limit; a helper value with a lone surrogate.
//
// TestFastPathAgreesWithLexer compares both paths on every fixture, a generated database and
// edge cases (each check of the extractor is needed by one of them).

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
	// extractFunc (extract.go) checks the value and returns a JSON array of the strings at the
	// paths (null where there is none) in one pass; NULL sends the value to the lexer.
	args := ""
	for _, p := range append(paths, paths[0])[:max(2, len(paths))] {
		args += ", '" + p + "'"
	}
	cols := []string{fmt.Sprintf("%s(%s%s)", extractFunc, col, args)}
	f.ncols = len(cols)
	f.npaths = len(paths)
	return f, cols
}

// fastRow finds the site of one row by the SQL-assisted path; false sends the value to the
// full lexer (see above). vals are the extra columns (one: the extracted array, or NULL).
func (r *reader) fastRow(c *rowCtx, f *fastSpec, val []byte, b *rowBatch, vals []sfCol) bool {
	if vals[0].kind != kindText || !utf8.Valid(val) { // NULL: not TEXT, or not for this path
		return false
	}
	arr := b.str(&vals[0]) // splitArray copies what it keeps
	var got [4]extracted
	q, ok := splitArray(arr, got[:f.npaths])
	if !ok {
		return false
	}
	if !got[0].ok {
		r.extra.fastRows++
		return true // no string at the path: no site (the lexer captures strings only)
	}
	if q < 0 || q >= int64(len(val)) || val[q] != '"' {
		return false
	}
	end := bytes.IndexByte(val[q+1:], '"')
	if end < 0 {
		return false
	}
	raw := val[q : q+int64(end)+2]
	name := got[0].s
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
	r.addSite(c, cs, store.Loc{Row: r.labelOf(c), RowID: c.rowid.Int64, Offset: q}, raw, name, nil,
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

// splitArray reads the JSON array extractFunc returns for several paths (no spaces) into out,
// one element per path, and the byte offset that ends it (-1: no string at the first path);
// false when it is not such an array.
func splitArray(a string, out []extracted) (int64, bool) {
	if len(a) < 2 || a[0] != '[' || a[len(a)-1] != ']' {
		return 0, false
	}
	k := strings.LastIndexByte(a, ',')
	if k < 0 {
		return 0, false
	}
	off, err := strconv.ParseInt(a[k+1:len(a)-1], 10, 64)
	if err != nil {
		return 0, false
	}
	return off, splitElems(a, k, out)
}

// splitElems reads the elements of array a up to index end (a ',' or the closing ']').
func splitElems(a string, end int, out []extracted) bool {
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
			if depth == 0 && (c == ',' || i == end) {
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
	return i == end
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
