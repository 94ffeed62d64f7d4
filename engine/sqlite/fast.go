package sqlite

import "C"

import (
	"bytes"
	"regexp"
	"unicode/utf8"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// The SQL-assisted path (issue 12 item 3). For a table spec with one site whose path and
// helper paths (when, call id, server) are plain key chains ("$.part.tool"), the extractor
// (extract.go, in C: the parser of the SQL function sessionfix_extract, called by the scan on
// whole row batches in a stage of its own, extractRows) checks each value in one pass (strict
// RFC 8259, one object) and returns the byte offset and length of the string token at each
// path; Go then takes the site's token at that offset instead of lexing the whole value.
// A value goes through the full JSON lexer instead whenever the two could disagree:
//   - it is not TEXT, not such JSON (the lexer words the problem), not valid UTF-8, has an
//     escaped key anywhere (a key spelled with `\u`) or a key of one of the paths twice in one
//     object (the lexer would capture both), or nests deeper than 64 levels;
//   - the token at the offset is not a plain string (no backslash) equal to the extracted one,
//     or is longer than the capture limit; a helper value with a lone surrogate or longer than
//     the capture limit.
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
	npaths               int
	ptext                []byte  // the paths back to back, for sfx_batch
	plen                 []C.int // their lengths
}

// fastDisabled turns the SQL-assisted path off (tests compare both paths).
var fastDisabled = false

// fastOf returns the fast path of ct, or nil when the spec does not qualify.
func fastOf(ct *compiledTable) *fastSpec {
	if fastDisabled || len(ct.sites) != 1 {
		return nil
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
			return nil
		}
	}
	last := ss.Path[bytes.LastIndexByte([]byte(ss.Path), '.')+1:]
	f.needle = []byte(`"` + last + `"`)
	f.path = ct.spec.Column + ":" + ss.Path[2:]
	// the extractor (extract.go's sfx_batch) checks each value and finds, per path, where the
	// string token at it is, in one pass over a batch of rows (extractRows)
	for _, p := range paths {
		f.ptext = append(f.ptext, p...)
		f.plen = append(f.plen, C.int(len(p)))
	}
	f.npaths = len(paths)
	return f
}

// fastRow finds the site of one row by the fast path; false sends the value to the full lexer
// (see above). ext is the row's extractor result (extractRows: accepted, then an offset and a
// length per path).
func (r *reader) fastRow(c *rowCtx, f *fastSpec, val []byte, ext []int64) bool {
	if ext[0] != 1 || !utf8.Valid(val) { // not accepted: not such JSON
		return false
	}
	var got [4]token
	if !tokens(val, ext[1:], got[:f.npaths]) {
		return false
	}
	raw := got[0].raw
	if raw == nil {
		r.extra.fastRows++
		return true // no string at the path: no site (the lexer captures strings only)
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 || len(raw) > jsonscan.DefaultMaxCapture {
		return false
	}
	cs := &c.ct.sites[0]
	if f.when >= 0 {
		w := got[f.when]
		if plain, ok := w.plain(); ok {
			// no escape: the value is the token's body (compared without a copy)
			if !cs.in[string(plain)] {
				r.extra.fastRows++
				return true
			}
		} else {
			v, ok := w.text()
			if !ok && w.raw != nil {
				return false // a lone surrogate, or too long
			}
			if !ok || !cs.in[v] {
				r.extra.fastRows++
				return true
			}
		}
	}
	callID := ""
	if f.callID >= 0 && got[f.callID].raw != nil {
		id := got[f.callID]
		if plain, ok := id.plain(); ok {
			callID = r.scopedCallID(c, plain) // one string: the scope's and the id's bytes
		} else if v, ok := id.text(); ok {
			callID = r.scopedCallID(c, []byte(v))
		} else {
			return false
		}
	}
	server, ok := helper(got[:], f.server)
	if !ok {
		return false
	}
	r.extra.fastRows++
	r.addSite(c, cs, store.Loc{Row: r.labelOf(c), RowID: c.rowid.Int64, Offset: int64(got[0].at)}, raw, r.internBytes(body), nil,
		f.path, false, callID, server)
	return true
}

// plain returns the body of a token without a backslash and within the capture limit: its
// value as it is (the extractor and fastRow's utf8.Valid checked it); false otherwise (none,
// an escape, too long: text decides).
func (t token) plain() ([]byte, bool) {
	if t.raw == nil || len(t.raw) > jsonscan.DefaultMaxCapture {
		return nil, false
	}
	body := t.raw[1 : len(t.raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		return nil, false
	}
	return body, true
}

// token is the string token at one path of a value (raw nil: none) and its offset.
type token struct {
	raw []byte
	at  int
}

// text returns the token's value (a copy); false when there is none, it has a lone surrogate
// or it is longer than the lexer's capture limit (the lexer keeps no value then: a helper the
// fast path would read and the lexer would not).
func (t token) text() (string, bool) {
	if t.raw == nil || len(t.raw) > jsonscan.DefaultMaxCapture {
		return "", false
	}
	v, err := jsonscan.Unquote(t.raw)
	if err != nil || v.Lone() {
		return "", false
	}
	return v.Str, true
}

// helper is the text of helper path i (-1: none): nil when there is no string; false for a lone
// surrogate or a value longer than the capture limit (the value goes to the lexer).
func helper(got []token, i int) (*string, bool) {
	if i < 0 || got[i].raw == nil {
		return nil, true
	}
	s, ok := got[i].text()
	if !ok {
		return nil, false
	}
	return &s, true
}

// tokens reads the extractor's result (per path: offset and length of its string token in val)
// into out; false when it does not fit val.
func tokens(val []byte, ext []int64, out []token) bool {
	if len(ext) != 2*len(out) {
		return false
	}
	for i := range out {
		off, n := ext[2*i], ext[2*i+1]
		switch {
		case n == 0:
			out[i] = token{}
		case off < 0 || n < 2 || off+n > int64(len(val)) || val[off] != '"' || val[off+n-1] != '"':
			return false
		default:
			out[i] = token{raw: val[off : off+n : off+n], at: int(off)}
		}
	}
	return true
}
