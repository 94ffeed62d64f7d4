package jsonl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/sessionfix/sessionfix/internal/jsonscan"
	"github.com/sessionfix/sessionfix/store"
)

// Profile describes one file format to the engine: how records are delimited, which JSON paths
// to capture, and how captures become name sites. Agent rooms (see agent) declare
// their profiles; the engine knows none.
//
// A profile resolves captures in one of two ways: Resolve sees the collected captures of each
// valid record (rec.Captures); Stream, used instead when set, sees each capture as the scanner
// finds it (memory stays flat however many names one record holds).
type Profile struct {
	Kind store.Kind
	// Agent is the agent that writes the format: it picks the naming scheme.
	Agent store.AgentID
	// Title names the format in messages ("chat session").
	Title string
	Mode  jsonscan.Mode
	// Patterns are the JSON paths captured; capture ids are indexes into them.
	Patterns *jsonscan.Patterns
	// Resolve turns the collected captures of one valid record into sites and identities.
	Resolve func(rec *jsonscan.Record, b *Builder)
	// Stream returns the streaming resolver of one scan (a value per file: it holds the state
	// of the record being read).
	Stream func() Streamer
	// Needles are the literal prefilter of a Lines profile (jsonscan.Scanner.SetPrefilter):
	// every pattern has a plain literal key containing one of them. Empty: no prefilter.
	Needles []string
	// Batched says the profile keeps nothing of the whole file that planning reads (no
	// store.SetState): a store read with it is a store.BatchScanner whose scan may hand its
	// sites out in batches (ScanBatches), so a session of millions of names is planned and
	// rewritten holding one batch (issue 30, finding 7).
	Batched bool
}

// Streamer is a streaming resolver (Profile.Stream).
type Streamer interface {
	// Capture sees each capture as the scanner finds it; c is valid only during the call
	// (Own copies it). It may add sites at once: sites added for a record that turns out
	// invalid are dropped.
	Capture(c *jsonscan.Capture, b *Builder)
	// End runs when a valid record ends.
	End(rec *jsonscan.Record, b *Builder)
	// Reset drops the state of the current record (after End, and after an invalid record).
	Reset()
}

// Builder collects what one file yields: sites, identities and problems go into its snapshot.
type Builder struct {
	snap *store.Snapshot
	// strs interns names and paths, raws the raw tokens: a session repeats the same few names
	// and paths many times, so sites share one copy (no allocation per site).
	strs    map[string]string
	raws    map[string]token
	pathBuf []byte
	// paths holds the text of recently seen paths (pathText), direct-mapped by a hash of their
	// elements: a session repeats a few dozen paths ("message.parts[0].functionCall.name")
	// for every site.
	paths [64]struct {
		path jsonscan.Path
		text string
	}
	// recent holds the tokens internRaw returned last, direct-mapped by rawSlot: found with a
	// cheap hash and one comparison instead of the map's hash of the whole token.
	recent [64]token
	// arena holds the bytes of the strings Text returned, in chunks of arenaChunk that are
	// only ever appended to (a string made from it never changes).
	arena []byte
	// texts holds the strings Text returned last, direct-mapped by rawSlot of their bytes: a
	// call id comes back in its response and its telemetry a few records later, and is then
	// given the string made for it before instead of a second copy in the arena.
	texts [64]string
}

// arenaChunk is the size of a Builder's arena chunks; a value past an eighth of it gets its
// own string.
const arenaChunk = 4 << 10

// pathText returns p's text (Path.String), shared by every equal path of this file: from the
// small cache when p was seen recently (compared element by element: the keys of literal
// pattern edges are the same strings, so the comparison does not read their bytes), else
// written and interned.
func (b *Builder) pathText(p jsonscan.Path) string {
	h := uint(len(p))
	for i := range p {
		h = h*31 + uint(len(p[i].Key)) + uint(p[i].Index)*7
	}
	e := &b.paths[h%uint(len(b.paths))]
	if e.text != "" && e.path.Equal(p) {
		return e.text
	}
	b.pathBuf = p.AppendText(b.pathBuf[:0])
	t := b.internBytes(b.pathBuf)
	e.path, e.text = append(e.path[:0], p...), t
	return t
}

// token is an interned raw token: its bytes and, for a string token without a backslash, the
// name it holds (its bytes between the quotes): one lookup gives a site both.
type token struct {
	raw   []byte
	name  string
	plain bool
}

// Snapshot is the snapshot being built (Records, Problems, Sites, Identities are the
// engine's; a profile adds through the Builder's methods).
func (b *Builder) Snapshot() *store.Snapshot { return b.snap }

// Slot holds a streamed capture kept past its callback (Keep), with the buffers its copies of
// Raw and Path are made in, reused from one kept capture to the next. The zero Slot is ready.
type Slot struct {
	c    jsonscan.Capture
	raw  []byte
	path jsonscan.Path
}

// Keep keeps the streamed capture c in sl so it outlives the callback, until the record ends;
// its Starts are dropped. A Stable capture (the whole-record lexer's: its Raw and Path stay
// as they are until the record's callback returned) is kept as it is, its Raw and Path shared
// with the scanner; any other has them copied into sl's buffers (no allocation once they are
// large enough). On the dense bench corpus the copies were a twentieth of a scan's CPU, for
// captures that all were Stable. The kept capture is valid until sl is kept again, and never
// after the end of its record.
func (sl *Slot) Keep(c *jsonscan.Capture) *jsonscan.Capture {
	sl.c = *c
	sl.c.Starts = nil
	if !c.Stable {
		// (sl.raw and sl.path are sl's own: a Stable capture's Raw and Path are never kept
		// there, so the copy never writes into the scanner's bytes)
		sl.raw = append(sl.raw[:0], c.Raw...)
		sl.path = append(sl.path[:0], c.Path...)
		sl.c.Raw, sl.c.Path = sl.raw, sl.path
	}
	return &sl.c
}

// maxInterned bounds each intern table (a file of only distinct names does not grow it).
const maxInterned = 1 << 16

// internBytes returns v as a string shared by every equal value of this file.
func (b *Builder) internBytes(v []byte) string {
	if s, ok := b.strs[string(v)]; ok { // no allocation for the lookup
		return s
	}
	s := string(v)
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if len(b.strs) < maxInterned {
		b.strs[s] = s
	}
	return s
}

func (b *Builder) intern(s string) string {
	if v, ok := b.strs[s]; ok {
		return v
	}
	if b.strs == nil {
		b.strs = map[string]string{}
	}
	if len(b.strs) < maxInterned {
		b.strs[s] = s
	}
	return s
}

// internRaw returns raw's token shared by every equal token of this file (read only): a copy
// of raw and, when raw is a string token (quotes included) without a backslash, its name.
func (b *Builder) internRaw(raw []byte) token {
	e := &b.recent[rawSlot(raw)]
	if len(raw) > 0 && bytes.Equal(e.raw, raw) {
		return *e
	}
	if t, ok := b.raws[string(raw)]; ok {
		*e = t
		return t
	}
	t := token{raw: append([]byte(nil), raw...)}
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		t.name, t.plain = b.internBytes(raw[1:len(raw)-1]), true
	}
	if b.raws == nil {
		b.raws = map[string]token{}
	}
	if len(b.raws) < maxInterned {
		b.raws[string(t.raw)] = t
	}
	*e = t
	return t
}

// rawSlot is raw's slot in Builder.recent: from its length and its last 8 bytes (names of a
// file share their first bytes, "mcp__server__", and differ in their last).
func rawSlot(raw []byte) int {
	h := uint64(len(raw))
	if n := len(raw); n >= 8 {
		h ^= binary.LittleEndian.Uint64(raw[n-8:])
	} else {
		for _, c := range raw {
			h = h<<8 | uint64(c)
		}
	}
	h ^= h >> 29
	h *= 0x9e3779b97f4a7c15
	return int(h >> 58) // 64 slots
}

// maxProblemsPerKind caps how many problems of one reason a file reports one by one.
const maxProblemsPerKind = 20

// Value decodes a capture; a name that cannot be handled (too long, bad escape) becomes an
// error problem at the capture's line and offset, and ok is false.
func (b *Builder) Value(c *jsonscan.Capture) (v jsonscan.Value, ok bool) {
	v, err := c.Value()
	if err != nil {
		b.snap.Problems = append(b.snap.Problems, store.Problem{
			Loc: store.Loc{Line: c.Line, Offset: c.Offset}, Severity: store.SevError,
			Reason: fmt.Sprintf("name at %s cannot be handled: %v", c.Path, err)})
		return jsonscan.Value{}, false
	}
	return v, true
}

// Site makes the site of a captured string value (Loc, Path, Name, Units, Raw, Key from the
// capture; kind and field as given); ok is false when the value cannot be decoded (a problem
// is reported). Name, Path and Raw are shared with equal values of the same file (read only).
// The site is not added: see Add.
func (b *Builder) Site(c *jsonscan.Capture, kind store.SiteKind, field string) (store.Site, bool) {
	name, units, raw, ok := b.siteName(c)
	if !ok {
		return store.Site{}, false
	}
	s := store.Site{
		Loc:   store.Loc{Line: c.Line, Offset: c.Offset},
		Kind:  kind,
		Path:  b.pathText(c.Path),
		Name:  name,
		Units: units,
		Raw:   raw,
		Key:   c.Key,
		Field: field,
	}
	return s, true
}

// AddSite is Site and Add in one, the site written in place in the snapshot's Sites (a site is
// 248 bytes: made, returned and appended it was copied three times, for every name of a
// dense session). It returns the site added, for the caller to complete (CallID, Server, …):
// the pointer is valid until the next site is added. nil: the value cannot be decoded (a
// problem is reported) and nothing was added.
func (b *Builder) AddSite(c *jsonscan.Capture, kind store.SiteKind, field string) *store.Site {
	name, units, raw, ok := b.siteName(c)
	if !ok {
		return nil
	}
	sites := b.snap.Sites
	if len(sites) < cap(sites) {
		sites = sites[:len(sites)+1]
	} else {
		sites = append(sites, store.Site{})
	}
	b.snap.Sites = sites
	s := &sites[len(sites)-1]
	*s = store.Site{
		Loc:   store.Loc{Line: c.Line, Offset: c.Offset},
		Kind:  kind,
		Path:  b.pathText(c.Path),
		Name:  name,
		Units: units,
		Raw:   raw,
		Key:   c.Key,
		Field: field,
	}
	return s
}

// siteName returns the name, UTF-16 units (nil unless needed) and interned raw token of the
// captured string value c, as Site gives them; ok false: it cannot be decoded (a problem is
// reported).
func (b *Builder) siteName(c *jsonscan.Capture) (name string, units []uint16, raw []byte, ok bool) {
	var tok token
	if !c.TooLong {
		tok = b.internRaw(c.Raw)
	}
	if tok.plain {
		return tok.name, nil, tok.raw, true // no escapes: the bytes are the name
	}
	v, ok := b.Value(c)
	if !ok {
		return "", nil, nil, false
	}
	name, units = b.intern(v.Str), v.Units
	if c.TooLong {
		tok = b.internRaw(c.Raw)
	}
	return name, units, tok.raw, true
}

// Intern returns s shared by every equal string of this file (for names a profile cuts out
// of a value itself).
func (b *Builder) Intern(s string) string { return b.intern(s) }

// Add adds a site to the snapshot.
func (b *Builder) Add(s store.Site) { b.snap.Sites = append(b.snap.Sites, s) }

// AddIdentity adds a raw identity (never a name site) to the snapshot.
func (b *Builder) AddIdentity(id store.Identity) { b.snap.Identities = append(b.snap.Identities, id) }

// Text is String(c), the same string, for values that are mostly distinct (call ids): a
// token without escapes is copied into the file's arena, one allocation per 4 KiB of such
// values instead of one per value (on the dense bench corpus, a call id per site: a million
// allocations a scan). Escaped, over-long or larger values are String's.
func (b *Builder) Text(c *jsonscan.Capture) string {
	if c == nil || c.TooLong {
		return String(c)
	}
	raw := c.Raw
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || len(raw)-2 > arenaChunk/8 || bytes.IndexByte(raw, '\\') >= 0 {
		return String(c)
	}
	body := raw[1 : len(raw)-1]
	if len(body) == 0 {
		return ""
	}
	e := &b.texts[rawSlot(body)]
	if *e == string(body) { // (no allocation for the comparison)
		return *e
	}
	if cap(b.arena)-len(b.arena) < len(body) {
		b.arena = make([]byte, 0, arenaChunk)
	}
	at := len(b.arena)
	b.arena = append(b.arena, body...)
	// The bytes at b.arena[at:] are never written again (the chunk is only appended to,
	// and replaced when full): the string stays as made.
	*e = unsafe.String(&b.arena[at], len(body))
	return *e
}

// String decodes an optional capture; "" when absent or undecodable.
func String(c *jsonscan.Capture) string {
	if c == nil {
		return ""
	}
	v, err := c.Value()
	if err != nil {
		return ""
	}
	return v.Str
}
