package sqlite

import (
	"bytes"
	"fmt"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Compiled is a Profile ready to find the name sites of one JSON value at a time, for an engine
// that reads its rows itself (engine/postgres): the profile format is this engine's, the rows
// are the other engine's. It is the slow, general path of Scan (internal/jsonscan per value);
// safe for one goroutine at a time.
type Compiled struct {
	c     *compiled
	cur   valueCtx
	lines []*jsonscan.Scanner // a long-lived JSON Lines scanner per table spec (reader.row's)
}

type valueCtx struct {
	ct      *compiledTable
	loc     store.Loc
	scope   string
	scoped  bool
	readAll bool
	err     *jsonscan.SyntaxError
	errAt   int64
	badUTF8 int64
	seen    bool // a record ended (the Lines scanner's)
	emit    func(store.Site)
	idents  func(store.Identity)
}

// Compile validates p and compiles it (ErrBadProfile when it is malformed).
func Compile(p *Profile) (*Compiled, error) {
	c, err := compileProfile(p)
	if err != nil {
		return nil, err
	}
	return &Compiled{c: c, lines: make([]*jsonscan.Scanner, len(c.tables))}, nil
}

// DetectPairs returns the "table.column" pairs that must all exist for the profile to describe a
// database (Profile.Detect, else the JSON column of every table that is not Optional).
func (p *Profile) DetectPairs() [][2]string { return p.detectPairs() }

// ValueOptions describes the row a value comes from.
type ValueOptions struct {
	// Loc is the row's location (Row, and whatever the engine keeps to find the row again);
	// each site gets it with Offset set.
	Loc store.Loc
	// Scope, when Scoped, is the call-scope column's value (TableSpec.CallScope): call ids
	// become "<scope>/<id>".
	Scope  string
	Scoped bool
	// ReadOnly makes every site read-only (a row the engine cannot find again, a column it must
	// not rewrite).
	ReadOnly bool
	// Identity receives the raw identities (SiteSpec.Identity); nil drops them.
	Identity func(store.Identity)
}

// Value finds the name sites of val, the JSON value of table spec i (Profile.Tables[i]) in one
// row, and hands each to emit in document order (Site.Loc.Offset: the byte offset of the
// token's opening quote in val; Path "column:json.path"). It returns "" or why the value was
// not read (invalid JSON, invalid UTF-8, zstd-compressed), as Scan words its problems.
func (c *Compiled) Value(i int, val []byte, opt ValueOptions, emit func(store.Site)) string {
	ct := c.c.tables[i]
	spec := ct.spec
	if bytes.HasPrefix(val, zstdMagic) {
		return fmt.Sprintf("%s.%s is zstd-compressed (%d bytes): reported, not parsed", spec.Table, spec.Column, len(val))
	}
	c.cur = valueCtx{ct: ct, loc: opt.Loc, scope: opt.Scope, scoped: opt.Scoped, readAll: opt.ReadOnly, badUTF8: -1, emit: emit, idents: opt.Identity}
	// As reader.row: a value on one line goes through the table's long-lived JSON Lines scanner
	// (no scanner built per value); one with line breaks or a byte order mark, or one the Lines
	// scanner finds invalid (to describe the error as for a whole document), gets its own
	// document scanner. Both give the same captures, offsets relative to the value.
	lines := len(val) > 0 && bytes.IndexByte(val, '\n') < 0 && !bytes.HasPrefix(val, bom)
	if lines {
		sc := c.lines[i]
		if sc == nil {
			sc = jsonscan.New(ct.pat, jsonscan.Lines, c.onRecord)
			c.lines[i] = sc
		}
		_, _ = sc.Write(val)
		_, _ = sc.Write(newline)
	}
	if lines && !c.cur.seen {
		// No record ended at the line break: the value is unfinished ("{"), and the scanner
		// is inside it. It is dropped; the document scanner says what is wrong.
		c.lines[i] = nil
	}
	if c.cur.err != nil || !lines || !c.cur.seen {
		c.cur.err = nil
		sc := jsonscan.New(ct.pat, jsonscan.Document, c.onRecord)
		_, _ = sc.Write(val)
		_ = sc.Close()
	}
	switch v := &c.cur; {
	case v.err != nil:
		return fmt.Sprintf("invalid JSON in %s.%s (%s, offset %d); row left as it is", spec.Table, spec.Column, v.err.Msg, v.errAt)
	case v.badUTF8 >= 0:
		return fmt.Sprintf("invalid UTF-8 in %s.%s at byte offset %d; row left as it is", spec.Table, spec.Column, v.badUTF8)
	}
	return ""
}

func (c *Compiled) onRecord(rec *jsonscan.Record) error {
	v := &c.cur
	v.seen = true
	switch {
	case rec.Err != nil:
		v.err, v.errAt = rec.Err, rec.Err.Offset-rec.Start
	case rec.Blank:
		v.err, v.errAt = &jsonscan.SyntaxError{Msg: "empty document"}, 0
	case rec.BadUTF8 >= 0:
		v.badUTF8 = rec.BadUTF8 - rec.Start
	case len(rec.Captures) > 0:
		c.resolve(rec)
	}
	return nil
}

// resolve is reader.resolve for one value (same conditions, call ids, servers and kinds).
func (c *Compiled) resolve(rec *jsonscan.Record) {
	v := &c.cur
	ct, spec, base := v.ct, v.ct.spec, rec.Start
	for i := range ct.sites {
		cs := &ct.sites[i]
		for j := range rec.Captures {
			cp := &rec.Captures[j]
			if cp.Pattern != cs.pat {
				continue
			}
			if cs.when.pat >= 0 {
				w, ok := bound(rec, cs.when, cp)
				if !ok || !cs.in[w] {
					continue
				}
			}
			loc := v.loc
			loc.Offset = cp.Offset - base
			val, err := cp.Value()
			if err != nil {
				continue // a name Scan reports as an error: the engine's caller sees no site
			}
			site := store.Site{Loc: loc, Kind: cs.kind, Path: spec.Column + ":" + cp.Path.String(), Name: val.Str, Units: val.Units,
				Raw: bytes.Clone(cp.Raw), Key: cp.Key,
				ReadOnly: v.readAll || cs.spec.ReadOnly || cs.spec.Identity || cs.kind == store.SiteRule}
			if id, ok := bound(rec, cs.callID, cp); ok {
				if v.scoped {
					id = v.scope + "/" + id
				}
				site.CallID = id
			}
			if srv, ok := bound(rec, cs.server, cp); ok {
				site.Server = srv
			}
			if cs.spec.Identity {
				if v.idents != nil {
					v.idents(store.Identity{Server: site.Server, Tool: site.Name, CallID: site.CallID, Loc: site.Loc})
				}
				continue
			}
			v.emit(site)
		}
	}
}
