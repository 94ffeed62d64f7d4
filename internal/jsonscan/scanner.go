package jsonscan

import (
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// Mode tells the Scanner how records are delimited.
type Mode int

const (
	// Lines is JSON Lines: every '\n' ends a record, each record holds one JSON value (or is
	// blank). A record that is not valid JSON is reported and scanning goes on with the next.
	Lines Mode = iota
	// Document is one JSON value in the whole input (a settings file, a checkpoint, a
	// SQLite JSON column); newlines are whitespace.
	Document
)

// DefaultMaxCapture is the longest string token (bytes, quotes included) kept in a Capture.
// A longer token at a captured path is reported with TooLong set and no Raw bytes.
const DefaultMaxCapture = 1 << 20

// maxDepth bounds container nesting (V8's JSON.parse fails long before this).
const maxDepth = 1 << 16

// Capture is one string value (or object key) found at a path matching a pattern.
type Capture struct {
	Pattern int   // index of the pattern in Compile
	Path    Path  // where the value is; for a key capture, the path of the member it names
	Offset  int64 // absolute input offset of the opening quote
	Len     int64 // byte length of the token, quotes included
	Raw     []byte
	Key     bool // the capture is an object key
	// Stable says Raw and Path stay as they are until the record's callback returned: a
	// streamed capture of a record the whole-record lexer read (Raw is in the bytes given to
	// the Write that ends the record, Path in the scanner's record buffers), which a streaming
	// resolver may then keep until the record ends without copying them. False: they are valid
	// only during the capture callback.
	Stable  bool
	Line    int64 // 1-based line of the token
	TooLong bool  // longer than the capture limit; Raw is nil (Len still says how long)
	limit   int   // the capture limit in bytes (for Value's error)
	// Starts[i] is the offset of the container holding Path[i] (Starts[0] is the root value):
	// captures with the same Starts[i] are inside the same object or array.
	Starts []int64
}

// Value decodes the captured token (see Unquote). It fails for a TooLong capture.
func (c *Capture) Value() (Value, error) {
	if c.TooLong {
		limit := c.limit
		if limit == 0 {
			limit = DefaultMaxCapture
		}
		return Value{}, fmt.Errorf("string of %d bytes is longer than the %d-byte limit", c.Len, limit)
	}
	return Unquote(c.Raw)
}

// Record is one JSON Lines record (or the whole input in Document mode), handed to the
// callback when it ends. Captures are valid only during the callback.
type Record struct {
	Line     int64 // 1-based line number of the record
	Start    int64 // offset of its first byte
	End      int64 // offset just past its last byte, excluding the '\n' (a '\r' is included)
	Newline  bool  // terminated by '\n' (false for a last line without one)
	Blank    bool  // only whitespace
	Err      *SyntaxError
	BadUTF8  int64 // offset of the first invalid UTF-8 byte in the record, or -1
	Captures []Capture
}

// SyntaxError is invalid JSON at a position of the input.
type SyntaxError struct {
	Line   int64 // 1-based
	Column int64 // 1-based, in bytes
	Offset int64
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Scanner is a push parser: feed it input with Write (any chunking, lines of any length) and
// Close it at end of input. It validates JSON as JSON.parse does (strict grammar, no control
// characters in strings), tracks the path of every value, and captures string tokens whose path
// matches the compiled patterns, with their exact byte offsets. It never holds more than the
// container stack and the captured tokens in memory. Not safe for concurrent use.
type Scanner struct {
	pat       *Patterns
	mode      Mode
	onRecord  func(*Record) error
	onCapture func(*Capture)
	maxCap    int
	// reused by streamed captures
	pathBuf   Path
	startsBuf []int64
	capBuf    Capture

	off       int64 // absolute offset of the next byte
	line      int64 // current 1-based line
	lineStart int64 // offset of the current line's first byte
	rec       Record
	recDirty  bool // rec has non-whitespace content

	stack  []frame
	expect expect
	top    *node // pattern node for the next top-level value

	// current token
	tok      tokKind
	strKey   bool   // the string is an object key
	strCapID int    // capture pattern id of the string, -1 if not captured
	strNeed  bool   // raw bytes are needed (capture or key decode)
	strStart int64  // offset of the opening quote
	strEnd   int64  // offset just past the closing quote (set when the string ends)
	strLine  int64  //
	strBuf   []byte // raw bytes of the string so far, quotes included, bounded
	strLong  bool   // strBuf overflowed
	esc      uint8  // escape state: 0 none, 1 after '\', 2..5 reading \u hex digits
	numState uint8
	lit      string
	litPos   int

	utf   utf8Stream
	clean bool  // the chunk being written holds no control byte but '\n' (classify)
	nls   []int // clean: the index of every '\n' in the chunk being written (classify)
	nlCur int   // nls[nlCur] is the first one lineEnd has not passed
	nlAt  int   // not clean: lineEnd's last answer (an index in the chunk being written), -1: none
	// searched counts the bytes lineEnd searched for a newline (tests: linear, not per value).
	searched int64
	// noSkipBelow: skipValue makes no attempt before this offset (one failed there).
	noSkipBelow int64
	// careful turns every shortcut off (classify, skipValue, fastKey): byte by byte as the
	// reference the tests compare the fast paths with.
	careful  bool
	bad      []int64 // pending offsets of invalid UTF-8, ascending
	started  bool
	head     []byte // first bytes held back before the BOM check
	err      error  // callback error: sticky
	closed   bool
	maxDepth int

	// prefilter (SetPrefilter)
	needles [][]byte
	vstack  []byte // fastValid's container stack
	pfLine  int64  // the line the prefilter last decided on (never twice)
	pstats  PrefilterStats

	// noFastRecord turns the whole-record lexer off (tests of the full lexer's shortcuts).
	noFastRecord bool
	// the whole-record lexer's scratch space (fastrecord.go), reused from record to record
	fstack  []fastFrame
	fcaps   []fastCap
	fpath   Path
	fstarts []int64
	// the string index (strindex.go): the current chunk's bitmaps, and the line fastRecord
	// reads seen in them (fx: nil when there is none, or noIndex is set)
	ix      chunkIndex
	sx      strIndex
	fx      *strIndex
	noIndex bool
}

type frame struct {
	obj   bool
	node  *node
	start int64 // offset of the opening '{' or '['
	index int
	// For an object whose node wants keys: the node the current member leads to (nil when no
	// pattern goes on) and its decoded key when the edge is not a literal one.
	child *node
	key   []byte
}

type expect uint8

const (
	expValue expect = iota
	expValueOrEnd
	expKeyOrEnd
	expKey
	expColon
	expCommaOrEnd
	expDone  // after the top-level value: only whitespace
	expError // skipping the rest of the record
)

type tokKind uint8

const (
	tokNone tokKind = iota
	tokString
	tokNumber
	tokLiteral
)

// New returns a Scanner that reports each record to onRecord. A non-nil error from onRecord
// stops the scan: Write and Close return it.
func New(p *Patterns, mode Mode, onRecord func(*Record) error) *Scanner {
	if p == nil {
		p = &Patterns{root: newNode()}
	}
	s := &Scanner{pat: p, mode: mode, onRecord: onRecord, maxCap: DefaultMaxCapture, line: 1, maxDepth: maxDepth}
	s.resetRecord()
	return s
}

// SetCaptureFunc streams captures: each one is handed to fn as soon as its token ends instead
// of being collected in Record.Captures, so memory does not grow with the number of captures in
// a record. The Capture (its Raw, Path and Starts too) is valid only during the call. The
// record may still turn out invalid: the Record callback then reports Err, and the caller must
// drop what it built from that record's captures.
func (s *Scanner) SetCaptureFunc(fn func(*Capture)) { s.onCapture = fn }

// SetCareful turns every shortcut of the full lexer off (the one-pass chunk classification, the
// skipping of values no pattern reaches into, keys read in one step): bytes are read one by one
// as the reference that tests compare the fast paths with. It does not touch the prefilter (SetPrefilter).
func (s *Scanner) SetCareful(on bool) { s.careful = on }

// SetMaxCapture changes the capture limit (bytes per token, quotes included).
func (s *Scanner) SetMaxCapture(n int) { s.maxCap = n }

// Offset returns the number of bytes consumed so far.
func (s *Scanner) Offset() int64 { return s.off }

func (s *Scanner) resetRecord() {
	s.rec = Record{Line: s.line, Start: s.off, BadUTF8: -1, Blank: true, Captures: s.rec.Captures[:0]}
	s.recDirty = false
	s.stack = s.stack[:0]
	s.expect = expValue
	s.top = s.pat.root
	s.tok = tokNone
	s.esc = 0
}

// Write feeds the next chunk of input. It never returns a syntax error (those are reported per
// record); it returns only the callback's error.
func (s *Scanner) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if !s.started {
		// Hold the first bytes back until a UTF-8 byte order mark can be recognised.
		need := 3 - len(s.head)
		if len(p) < need {
			s.head = append(s.head, p...)
			return len(p), nil
		}
		if len(s.head) == 0 {
			// The whole first chunk at once (the prefilter sees whole first lines).
			s.started = true
			if p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF {
				s.utf.feed(p[:3], s.off, &s.bad)
				s.off += 3
				s.rec.Start = s.off
				_, err := s.write(p[3:])
				return len(p), err
			}
			_, err := s.write(p)
			return len(p), err
		}
		head := append(s.head, p[:need]...)
		s.head = nil
		s.started = true
		if head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF {
			// A byte order mark at the start is kept in the file but not parsed.
			s.utf.feed(head, s.off, &s.bad)
			s.off += 3
			s.rec.Start = s.off
		} else if _, err := s.write(head); err != nil {
			return 0, err
		}
		_, err := s.write(p[need:])
		return len(p), err
	}
	return s.write(p)
}

// write reads one chunk: per byte (or per run of bytes, or per whole record) the step of the
// token or structure being read. It returns only the callback's error.
func (s *Scanner) write(p []byte) (int, error) {
	s.classifyChunk(p)
	base := s.off
	i := 0
	for i < len(p) && s.err == nil {
		switch s.tok {
		case tokString:
			i = s.scanString(p, i, base)
		case tokNumber:
			i = s.numberStep(p, i, base)
		case tokLiteral:
			i = s.literalStep(p, i, base)
		default:
			i = s.structStep(p, i, base)
		}
	}
	s.off = base + int64(len(p))
	if s.err != nil {
		return len(p), s.err
	}
	return len(p), nil
}

// classifyChunk prepares the chunk p for write: its newlines and whether it is clean (no
// control byte but '\n', see classify), and the UTF-8 check where it may need one.
func (s *Scanner) classifyChunk(p []byte) {
	high, ctl := true, true
	if s.nls == nil {
		s.nls = freeNLs.Get(0)
	}
	s.nls, s.nlCur, s.nlAt = s.nls[:0], 0, -1
	s.ix.ok = false
	if !s.careful {
		ix := &s.ix
		if len(p) > maxIndexChunk {
			ix = nil // no bitmaps of a huge chunk (see maxIndexChunk): the byte loops decide
		}
		high, ctl, s.nls = classifyIndex(p, s.nls, ix)
	}
	if high || s.utf.nCarry > 0 {
		s.utf.feed(p, s.off, &s.bad)
	} // else: ASCII, valid UTF-8, and no rune carried from the previous chunk
	s.clean = !ctl
}

// numberStep reads p[i] inside a number: the byte continues it, or the number ends before it
// (then p[i] is read again as what follows the value). It returns the next index.
func (s *Scanner) numberStep(p []byte, i int, base int64) int {
	if s.numByte(p[i]) {
		return i + 1
	}
	if !s.numEnd() {
		s.fail(base+int64(i), "invalid number")
		return i
	}
	s.tok = tokNone
	s.valueDone()
	return i // re-process p[i]
}

// literalStep reads p[i] inside true, false or null. It returns the next index.
func (s *Scanner) literalStep(p []byte, i int, base int64) int {
	if p[i] != s.lit[s.litPos] {
		s.fail(base+int64(i), fmt.Sprintf("invalid literal, expected %q", s.lit))
		return i
	}
	s.litPos++
	if s.litPos == len(s.lit) {
		s.tok = tokNone
		s.valueDone()
	}
	return i + 1
}

// structStep reads p[i] between tokens: a whole record at once where it can (wholeRecord),
// else a newline, the rest of an invalid record, whitespace or the next structural byte or
// token start. It returns the next index.
func (s *Scanner) structStep(p []byte, i int, base int64) int {
	if s.mode == Lines && s.expect == expValue && !s.recDirty && len(s.stack) == 0 && s.pfLine != s.line && (s.needles != nil || !(s.careful || s.noFastRecord)) {
		if j, ok := s.wholeRecord(p, i, base); ok {
			return j
		}
	}
	c := p[i]
	switch {
	case c == '\n':
		return s.newline(i, base)
	case s.expect == expError:
		// Skip to the end of the record.
		if s.mode != Lines {
			return i + 1
		}
		if j := indexByte(p[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(p)
	case c == ' ' || c == '\t' || c == '\r':
		return i + 1
	}
	s.recDirty = true
	s.rec.Blank = false
	return s.structByte(p, i, base)
}

// wholeRecord is structStep at the start of a record that lies whole in p: the whole-record
// lexer (fastrecord.go), or with it off the literal prefilter. It returns the index of the
// record's newline (the newline ends the record in the next step) and true when one of them
// read it; false when the full lexer must (nothing was consumed). The whole-record lexer reads
// every record the prefilter accepts (and those holding names), at least as fast: on the dense
// bench corpus the prefilter before it cost a fifth more CPU (it read each record up to its
// first name, then gave up), on the realistic one it saved nothing measurable.
func (s *Scanner) wholeRecord(p []byte, i int, base int64) (int, bool) {
	j := s.lineEnd(p, i)
	if j >= len(p) {
		return i, false
	}
	s.pfLine = s.line
	line := p[i:j]
	done, blank := false, false
	if s.needles != nil && (s.careful || s.noFastRecord) {
		var st []byte
		blank, done, st = fastValid(line, s.needles, s.maxDepth, s.vstack, s.clean)
		s.vstack = st
		if done {
			s.pstats.Fast++
		} else {
			s.pstats.Full++
		}
	}
	if !done && !s.careful && !s.noFastRecord {
		s.fx = nil
		if s.ix.ok && !s.noIndex {
			s.sx = strIndex{q: s.ix.q, b: s.ix.b, at: i}
			s.fx = &s.sx
		}
		if blank, done = s.fastRecord(line, base+int64(i)); done {
			s.pstats.FastRecords++
		} else {
			s.pstats.FastRecordsFailed++
		}
	}
	if !done {
		return i, false
	}
	if !blank {
		s.recDirty, s.rec.Blank, s.expect = true, false, expDone
	}
	return j, true
}

// newline reads the '\n' at p[i]: in Lines mode the end of the record. It returns the next
// index.
func (s *Scanner) newline(i int, base int64) int {
	s.off = base + int64(i)
	if s.mode == Lines {
		s.endRecord(true)
	}
	i++
	s.line++
	s.lineStart = base + int64(i)
	if s.mode == Lines {
		s.off = s.lineStart
		s.resetRecord()
	}
	return i
}

// structByte reads the structural byte or token start p[i] (not whitespace) against what is
// expected. It returns the next index.
func (s *Scanner) structByte(p []byte, i int, base int64) int {
	c := p[i]
	at := base + int64(i)
	switch s.expect {
	case expValue, expValueOrEnd:
		if c == ']' && s.expect == expValueOrEnd {
			s.pop()
			return i + 1
		}
		s.startValue(p, &i, base)
	case expKeyOrEnd, expKey:
		if c == '}' && s.expect == expKeyOrEnd {
			s.pop()
			return i + 1
		}
		if c != '"' {
			s.fail(at, "expected string key")
			return i
		}
		f := &s.stack[len(s.stack)-1]
		if s.fastKey(p, &i, f) {
			return i
		}
		s.beginString(at, true, f.node)
		i++
	case expColon:
		if c != ':' {
			s.fail(at, "expected ':' after key")
			return i
		}
		s.expect = expValue
		i++
	case expCommaOrEnd:
		return s.commaOrEnd(c, i, at)
	case expDone:
		s.fail(at, "unexpected data after the JSON value")
	}
	return i
}

// commaOrEnd reads c (at p[i], offset at) after a value inside a container: a comma, or the
// container's end. It returns the next index.
func (s *Scanner) commaOrEnd(c byte, i int, at int64) int {
	f := &s.stack[len(s.stack)-1]
	switch {
	case c == ',':
		if f.obj {
			s.expect = expKey
		} else {
			f.index++
			s.expect = expValue
		}
		return i + 1
	case c == '}' && f.obj, c == ']' && !f.obj:
		s.pop()
		return i + 1
	}
	s.fail(at, "expected ',' or end of container")
	return i
}

// startValue begins a value at p[*i].
func (s *Scanner) startValue(p []byte, i *int, base int64) {
	c := p[*i]
	at := base + int64(*i)
	n := s.valueNode()
	if n == nil && s.skipValue(p, i, base) {
		return
	}
	switch {
	case c == '"':
		s.beginString(at, false, n)
		*i++
	case c == '{' || c == '[':
		if len(s.stack) >= s.maxDepth {
			s.fail(at, "nesting too deep")
			return
		}
		if len(s.stack) < cap(s.stack) {
			// Reuse the slot and its key buffer (no allocation per object).
			s.stack = s.stack[:len(s.stack)+1]
			f := &s.stack[len(s.stack)-1]
			*f = frame{obj: c == '{', node: n, start: at, key: f.key[:0]}
		} else {
			s.stack = append(s.stack, frame{obj: c == '{', node: n, start: at})
		}
		if c == '{' {
			s.expect = expKeyOrEnd
		} else {
			s.expect = expValueOrEnd
		}
		*i++
	case c == '-' || (c >= '0' && c <= '9'):
		s.tok = tokNumber
		s.numState = 0
		if !s.numByte(c) {
			s.fail(at, "invalid number")
			return
		}
		*i++
	case c == 't':
		s.tok, s.lit, s.litPos = tokLiteral, "true", 1
		*i++
	case c == 'f':
		s.tok, s.lit, s.litPos = tokLiteral, "false", 1
		*i++
	case c == 'n':
		s.tok, s.lit, s.litPos = tokLiteral, "null", 1
		*i++
	default:
		s.fail(at, fmt.Sprintf("unexpected character %q", c))
	}
}

// skipValue skips the value starting at p[*i], which no pattern reaches into (its node is nil:
// nothing below it can be captured), with the fast validator's valueEnd (strings skipped with
// bytes.IndexByte, no paths, no key decoding, none of the lexer's per-token states) when it
// lies whole in p before the next '\n' and valueEnd accepts it outright; it reports whether it
// did. A number must be followed by another byte of the line (the next Write could go on with
// its digits). Otherwise nothing is
// consumed and the full lexer reads the value, so errors and every other field of the record
// come out exactly as without the skip. An attempt that fails at an offset stops further
// attempts before that offset (their values would fail there again), so each byte is read by
// at most one failed attempt.
func (s *Scanner) skipValue(p []byte, i *int, base int64) bool {
	at := base + int64(*i)
	if s.careful || at < s.noSkipBelow {
		return false
	}
	line := p[:s.lineEnd(p, *i)]
	end, failAt, ok, st := valueEnd(line, *i, nil, s.maxDepth-len(s.stack), s.vstack, s.clean, true, nil)
	s.vstack = st
	if ok && end == len(line) && (p[*i] == '-' || (p[*i] >= '0' && p[*i] <= '9')) {
		ok, failAt = false, end
	}
	if !ok {
		s.noSkipBelow = base + int64(failAt)
		s.pstats.SkipFailed++
		return false
	}
	s.pstats.Skipped++
	*i = end
	s.valueDone()
	return true
}

// fastKey reads the object key token starting at p[*i] (its opening quote) and the ':' after
// it (spaces allowed before the colon) in one step, instead of the string states and a
// decode: it does so only in a clean chunk (no control byte but '\n', see classify), when the
// token has no backslash and ends, with its colon, before the line ends, when it is not longer
// than the capture limit and when f's node captures no keys. The frame then gets exactly what
// the string states give it (the key bytes and the child node when the node wants keys,
// neither otherwise) and the next thing expected is the member's value; it reports whether it
// did. Otherwise nothing is consumed and the string states read the key, so errors come out as
// without it.
func (s *Scanner) fastKey(p []byte, i *int, f *frame) bool {
	if s.careful || !s.clean {
		return false
	}
	n := f.node
	if n != nil && n.keyCapID >= 0 {
		return false
	}
	start := *i + 1
	nl := s.lineEnd(p, start)
	q := -1
	k := nextStop(p, start, &q, nl)
	if k >= nl || p[k] != '"' || k+1-*i > s.maxCap {
		return false // a backslash, the end of the line or of the chunk, or a long key
	}
	m := k + 1
	for m < nl && p[m] == ' ' {
		m++
	}
	if m >= nl || p[m] != ':' {
		return false
	}
	f.child = nil
	f.key = f.key[:0]
	if n.wantsKeys() {
		f.key = append(f.key, p[start:k]...)
		f.child = n.childKey(f.key)
	}
	s.pstats.FastKeys++
	s.expect = expValue
	*i = m + 1
	return true
}

// lineEnd returns the index of the first '\n' of p at or after i, len(p) when there is none:
// from classify's list in a clean chunk, else with bytes.IndexByte, once per line (the calls of
// one Write come with growing i).
func (s *Scanner) lineEnd(p []byte, i int) int {
	if !s.clean {
		// Searched once per line: skipValue asks at every value of a line.
		if s.nlAt < i {
			if j := indexByte(p[i:], '\n'); j >= 0 {
				s.nlAt = i + j
			} else {
				s.nlAt = len(p)
			}
			s.searched += int64(s.nlAt - i)
		}
		return s.nlAt
	}
	for s.nlCur < len(s.nls) && s.nls[s.nlCur] < i {
		s.nlCur++
	}
	if s.nlCur < len(s.nls) {
		return s.nls[s.nlCur]
	}
	return len(p)
}

// valueNode is the pattern node for the value about to start.
func (s *Scanner) valueNode() *node {
	if len(s.stack) == 0 {
		return s.top
	}
	f := &s.stack[len(s.stack)-1]
	if f.node == nil {
		return nil
	}
	if f.obj {
		return f.child
	}
	return f.node.anyElem
}

func (s *Scanner) beginString(at int64, key bool, n *node) {
	s.tok = tokString
	s.strKey = key
	s.strStart = at
	s.strLine = s.line
	s.strCapID = -1
	s.strNeed = false
	s.strLong = false
	s.esc = 0
	s.strBuf = s.strBuf[:0]
	if key {
		if n.wantsKeys() {
			s.strNeed = true
			if n.keyCapID >= 0 {
				s.strCapID = n.keyCapID
			}
		}
	} else if n != nil && n.capture >= 0 {
		s.strCapID = n.capture
		s.strNeed = true
	}
	if s.strNeed {
		s.strBuf = append(s.strBuf, '"')
	}
}

// Bit tricks over 8 bytes at a time (little endian).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stopMask has the high bit set in every byte of v that is '"', '\\' or a control character
// (< 0x20). Bytes >= 0x80 never stop. A borrow can only mark a byte above a true stop, so the
// lowest marked byte is always exact.
func stopMask(v uint64) uint64 {
	q := v ^ (lsb * '"')
	b := v ^ (lsb * '\\')
	return ((q - lsb) &^ q & msb) | ((b - lsb) &^ b & msb) | ((v - lsb*0x20) &^ v & msb)
}

// scanString consumes string bytes from p[i:]; it returns the new index.
func (s *Scanner) scanString(p []byte, i int, base int64) int {
	start := i
	q := -1 // nextStop's cache of the next quote
	nl := -1
	if s.clean {
		nl = s.lineEnd(p, i) // a '\n' ends the string (unterminated), so this one is enough
	}
	for i < len(p) {
		if s.esc == 0 {
			i = nextStop(p, i, &q, nl)
			if i >= len(p) {
				break
			}
			c := p[i]
			switch {
			case c == '"':
				i++
				s.appendStr(p[start:i])
				s.strEnd = base + int64(i)
				s.endString()
				return i
			case c == '\\':
				s.esc = 1
				i++
			case c < 0x20:
				s.appendStr(p[start:i])
				at := base + int64(i)
				if c == '\n' && s.mode == Lines {
					s.off = at
					s.fail(at, "unterminated string at end of line")
					return i // the newline ends the record in the main loop
				}
				s.fail(at, "control character in string")
				return i
			default:
				i++
			}
			continue
		}
		c := p[i]
		switch s.esc {
		case 1:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.esc = 0
			case 'u':
				s.esc = 2
			default:
				s.appendStr(p[start:i])
				s.fail(base+int64(i), fmt.Sprintf("invalid escape '\\%c'", c))
				return i
			}
		default: // 2..5: hex digits of \uXXXX
			if !isHex(c) {
				s.appendStr(p[start:i])
				s.fail(base+int64(i), "invalid \\u escape")
				return i
			}
			s.esc++
			if s.esc == 6 {
				s.esc = 0
			}
		}
		i++
	}
	s.appendStr(p[start:i])
	return i
}

func (s *Scanner) appendStr(b []byte) {
	if !s.strNeed || s.strLong {
		return
	}
	if len(s.strBuf)+len(b) > s.maxCap {
		s.strLong = true
		s.strBuf = s.strBuf[:0]
		return
	}
	s.strBuf = append(s.strBuf, b...)
}

func (s *Scanner) endString() {
	s.tok = tokNone
	if s.strKey {
		f := &s.stack[len(s.stack)-1]
		f.child = nil
		f.key = f.key[:0]
		if s.strNeed && !s.strLong {
			body := s.strBuf[1 : len(s.strBuf)-1]
			ok := true
			if indexByte(body, '\\') < 0 {
				f.key = append(f.key, body...)
			} else if v, err := Unquote(s.strBuf); err == nil && !v.Lone() {
				f.key = append(f.key, v.Str...)
			} else {
				ok = false // undecodable key: nothing below it matches
			}
			if ok {
				f.child = f.node.childKey(f.key)
			}
		}
		if s.strCapID >= 0 {
			s.addCapture(true)
		}
		s.expect = expColon
		return
	}
	if s.strCapID >= 0 {
		s.addCapture(false)
	}
	s.valueDone()
}

func (s *Scanner) addCapture(key bool) {
	if s.onCapture != nil {
		c := &s.capBuf
		*c = Capture{Pattern: s.strCapID, Offset: s.strStart, Len: s.strEnd - s.strStart, Key: key, Line: s.strLine, TooLong: s.strLong, limit: s.maxCap}
		if !s.strLong {
			c.Raw, c.Len = s.strBuf, int64(len(s.strBuf))
		}
		s.pathBuf, s.startsBuf = s.pathInto(key, s.pathBuf[:0], s.startsBuf[:0])
		c.Path, c.Starts = s.pathBuf, s.startsBuf
		s.onCapture(c)
		return
	}
	c := Capture{Pattern: s.strCapID, Offset: s.strStart, Len: s.strEnd - s.strStart, Key: key, Line: s.strLine, TooLong: s.strLong, limit: s.maxCap}
	if !s.strLong {
		c.Raw = append([]byte(nil), s.strBuf...)
		c.Len = int64(len(c.Raw))
	}
	c.Path, c.Starts = s.path(key)
	s.rec.Captures = append(s.rec.Captures, c)
}

// path builds the path of the current value (or, for a key, of the member it names).
func (s *Scanner) path(forKey bool) (Path, []int64) {
	return s.pathInto(forKey, make(Path, 0, len(s.stack)), make([]int64, 0, len(s.stack)))
}

// pathInto appends the current path and container starts to p and starts.
func (s *Scanner) pathInto(forKey bool, p Path, starts []int64) (Path, []int64) {
	for i := range s.stack {
		f := &s.stack[i]
		starts = append(starts, f.start)
		last := i == len(s.stack)-1
		switch {
		case !f.obj:
			p = append(p, Elem{Index: f.index})
		case last && forKey:
			// The key being captured: decode it for the path.
			v, _ := Unquote(s.strBuf)
			p = append(p, Elem{Key: v.Str, Index: -1})
		case f.child != nil && f.child.label != "":
			p = append(p, Elem{Key: f.child.label, Index: -1}) // a literal edge: no allocation
		default:
			p = append(p, Elem{Key: string(f.key), Index: -1})
		}
	}
	return p, starts
}

func (s *Scanner) valueDone() {
	if len(s.stack) == 0 {
		s.expect = expDone
		return
	}
	s.expect = expCommaOrEnd
}

func (s *Scanner) pop() {
	s.stack = s.stack[:len(s.stack)-1]
	s.valueDone()
}

// numByte advances the number grammar -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? by one
// byte; it returns false when c cannot continue the number.
func (s *Scanner) numByte(c byte) bool {
	digit := c >= '0' && c <= '9'
	switch s.numState {
	case 0: // start
		switch {
		case c == '-':
			s.numState = 1
		case c == '0':
			s.numState = 2
		case digit:
			s.numState = 3
		default:
			return false
		}
	case 1: // after '-'
		switch {
		case c == '0':
			s.numState = 2
		case digit:
			s.numState = 3
		default:
			return false
		}
	case 2, 3: // after leading 0 / in integer digits
		switch {
		case digit && s.numState == 3:
		case c == '.':
			s.numState = 4
		case c == 'e' || c == 'E':
			s.numState = 6
		default:
			return false
		}
	case 4: // after '.'
		if !digit {
			return false
		}
		s.numState = 5
	case 5: // fraction digits
		switch {
		case digit:
		case c == 'e' || c == 'E':
			s.numState = 6
		default:
			return false
		}
	case 6: // after 'e'
		switch {
		case c == '+' || c == '-':
			s.numState = 7
		case digit:
			s.numState = 8
		default:
			return false
		}
	case 7: // after exponent sign
		if !digit {
			return false
		}
		s.numState = 8
	case 8: // exponent digits
		if !digit {
			return false
		}
	}
	return true
}

// numEnd reports whether the number may end here.
func (s *Scanner) numEnd() bool {
	return s.numState == 2 || s.numState == 3 || s.numState == 5 || s.numState == 8
}

// fail marks the current record invalid at offset at; the rest of the record is skipped.
func (s *Scanner) fail(at int64, msg string) {
	if s.rec.Err == nil {
		s.rec.Err = &SyntaxError{Line: s.line, Column: at - s.lineStart + 1, Offset: at, Msg: msg}
	}
	s.tok = tokNone
	s.esc = 0
	s.expect = expError
}

// endRecord finishes the current record at s.off.
func (s *Scanner) endRecord(newline bool) {
	r := &s.rec
	r.End = s.off
	r.Newline = newline
	if r.Err == nil && s.recDirty {
		switch {
		case s.tok == tokNumber && s.numEnd() && len(s.stack) == 0:
			s.tok = tokNone
			s.expect = expDone
		case s.tok != tokNone || s.expect != expDone:
			msg := "unexpected end of line"
			if s.mode == Document || !newline {
				msg = "unexpected end of input"
			}
			r.Err = &SyntaxError{Line: s.line, Column: s.off - s.lineStart + 1, Offset: s.off, Msg: msg}
		}
	}
	if r.Err == nil && s.mode == Document && !s.recDirty {
		r.Err = &SyntaxError{Line: s.line, Column: s.off - s.lineStart + 1, Offset: s.off, Msg: "empty document"}
	}
	// Invalid UTF-8 inside this record.
	for len(s.bad) > 0 && s.bad[0] < r.End+1 {
		if r.BadUTF8 < 0 && s.bad[0] >= r.Start {
			r.BadUTF8 = s.bad[0]
		}
		s.bad = s.bad[1:]
	}
	if r.Err != nil {
		r.Captures = r.Captures[:0]
	}
	if s.onRecord != nil && s.err == nil {
		if err := s.onRecord(r); err != nil {
			s.err = err
		}
	}
}

// Close ends the input: the last record (a final line without '\n', or the document) is
// reported. It returns the callback's error, if any.
func (s *Scanner) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	defer func() {
		s.ix.release()
		if cap(s.nls) <= maxKeptNLs {
			freeNLs.Put(s.nls)
		}
		s.nls = nil
	}()
	if s.err != nil {
		return s.err
	}
	if !s.started {
		s.started = true
		if _, err := s.write(s.head); err != nil {
			return err
		}
		s.head = nil
	}
	s.utf.flush(&s.bad)
	if s.mode == Lines {
		if s.off > s.rec.Start || s.recDirty {
			s.endRecord(false)
		}
		return s.err
	}
	s.endRecord(false)
	return s.err
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func trailingZeroBytes(m uint64) int { return bits.TrailingZeros64(m) / 8 }

// utf8Stream validates UTF-8 across chunk boundaries and records invalid offsets.
type utf8Stream struct {
	carry   [4]byte
	nCarry  int
	carryAt int64 // offset of carry[0]; the carry always ends where the next chunk starts
	nBad    int
}

const maxBadOffsets = 1024

func (u *utf8Stream) report(bad *[]int64, at int64) {
	if u.nBad < maxBadOffsets {
		*bad = append(*bad, at)
	}
	u.nBad++
}

// feed validates p, which starts at absolute offset base.
func (u *utf8Stream) feed(p []byte, base int64, bad *[]int64) {
	i := 0
	if u.nCarry > 0 {
		// Finish the runes that started in the carried bytes.
		var buf [7]byte
		n := copy(buf[:], u.carry[:u.nCarry])
		k := copy(buf[n:], p[:min(len(p), 3)])
		b := buf[:n+k]
		j := 0
		for j < n {
			if !utf8.FullRune(b[j:]) && k == len(p) && startsValidPrefix(b[j:]) {
				// Still incomplete and this chunk is exhausted: carry on.
				at := u.carryAt + int64(j)
				u.nCarry = copy(u.carry[:], b[j:])
				u.carryAt = at
				return
			}
			r, size := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && size <= 1 {
				u.report(bad, u.carryAt+int64(j))
				size = 1
			}
			j += size
		}
		u.nCarry = 0
		i = j - n
	}
	if rest := p[i:]; !utf8.Valid(rest) {
		u.scan(rest, base+int64(i), bad)
	}
}

// scan finds invalid bytes in p and carries an incomplete rune at its end.
func (u *utf8Stream) scan(p []byte, base int64, bad *[]int64) {
	for j := 0; j < len(p); {
		if p[j] < utf8.RuneSelf {
			j++
			continue
		}
		if !utf8.FullRune(p[j:]) && startsValidPrefix(p[j:]) {
			u.nCarry = copy(u.carry[:], p[j:])
			u.carryAt = base + int64(j)
			return
		}
		r, size := utf8.DecodeRune(p[j:])
		if r == utf8.RuneError && size <= 1 {
			u.report(bad, base+int64(j))
			j++
			continue
		}
		j += size
	}
}

// startsValidPrefix reports whether b (shorter than a full rune) could begin a valid rune.
func startsValidPrefix(b []byte) bool {
	if len(b) == 0 || len(b) >= utf8.UTFMax {
		return false
	}
	for _, fill := range []byte{0x80, 0xBF} {
		var buf [utf8.UTFMax]byte
		n := copy(buf[:], b)
		for k := n; k < utf8.UTFMax; k++ {
			buf[k] = fill
		}
		for l := n + 1; l <= utf8.UTFMax; l++ {
			if r, size := utf8.DecodeRune(buf[:l]); !(r == utf8.RuneError && size <= 1) && size == l {
				return true
			}
		}
	}
	return false
}

// flush reports an incomplete rune at the end of the input.
func (u *utf8Stream) flush(bad *[]int64) {
	if u.nCarry > 0 {
		u.report(bad, u.carryAt)
		u.nCarry = 0
	}
}
