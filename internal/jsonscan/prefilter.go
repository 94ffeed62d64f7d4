package jsonscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// SetPrefilter turns on the literal prefilter (Lines mode only; a no-op in Document mode): a
// record that lies whole in one Write is first read by a fast validator (no paths, no key
// decoding, strings skipped with bytes.IndexByte, which is vectorised); when it is valid JSON
// with no object key token holding one of the needles, no "\u" escape and no control byte, it
// is reported as it is, without the full lexer. Any record the fast validator does not accept
// outright (a key with a needle, invalid, too deep, an escape it does not handle) goes through
// the full lexer from its first byte, as without the prefilter. The records reported are the same either way (Line, Start, End, Blank,
// Err, BadUTF8, Captures).
//
// Why no capture can be missed: every pattern must have a literal key K made only of
// characters [A-Za-z0-9_$-] such that the quoted key `"K"` contains one of the needles
// (SetPrefilter returns an error otherwise). A record with a capture for that pattern holds the
// key K; its token is `"K"` byte for byte unless a character of it is written as an escape,
// and for those characters the only escape JSON has is \uXXXX. The fast validator looks at
// every key token of a valid record and gives up at any "\u": a record it accepts has no key K,
// so no capture.
func (s *Scanner) SetPrefilter(needles ...string) error {
	if len(needles) == 0 {
		s.needles = nil
		return nil
	}
	for id, lits := range s.pat.lits {
		covered := false
		for _, k := range lits {
			if !plainKey(k) {
				continue
			}
			q := `"` + k + `"`
			for _, n := range needles {
				if n != "" && bytes.Contains([]byte(q), []byte(n)) {
					covered = true
				}
			}
		}
		if !covered {
			return fmt.Errorf("prefilter: pattern %d (literal keys %q) contains none of the needles %q as a plain key", id, lits, needles)
		}
	}
	s.needles = s.needles[:0]
	for _, n := range needles {
		s.needles = append(s.needles, []byte(n))
	}
	return nil
}

// plainKey reports whether every character of k can only be escaped as \uXXXX.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '$' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// PrefilterStats counts the records the prefilter let through the fast validator and those it
// sent to the full lexer, the values inside the full lexer that no pattern reaches into,
// skipped by the fast validator or read by the full lexer after a failed skip, and the keys
// the full lexer read in one step (for tests and benchmarks).
type PrefilterStats struct {
	Fast, Full          int64
	Skipped, SkipFailed int64
	// FastKeys counts the object keys the full lexer read in one step (fastKey).
	FastKeys int64
	// FastRecords counts the records the whole-record lexer read (fastrecord.go), and
	// FastRecordsFailed those it left to the full lexer.
	FastRecords, FastRecordsFailed int64
}

// PrefilterStats returns the counts so far.
func (s *Scanner) PrefilterStats() PrefilterStats { return s.pstats }

// anyCtl reports whether p holds a byte below 0x20 (32 bytes per step; a borrow can only mark a
// byte above a true one, so any mark means there is one).
func anyCtl(p []byte) bool {
	var acc uint64
	for len(p) >= 32 {
		q := p[:32:32]
		a := binary.LittleEndian.Uint64(q[0:8])
		b := binary.LittleEndian.Uint64(q[8:16])
		c := binary.LittleEndian.Uint64(q[16:24])
		d := binary.LittleEndian.Uint64(q[24:32])
		acc |= ((a - lsb*0x20) &^ a) | ((b - lsb*0x20) &^ b) | ((c - lsb*0x20) &^ c) | ((d - lsb*0x20) &^ d)
		p = p[32:]
	}
	for len(p) >= 8 {
		a := binary.LittleEndian.Uint64(p[:8])
		acc |= (a - lsb*0x20) &^ a
		p = p[8:]
	}
	if acc&msb != 0 {
		return true
	}
	for _, c := range p {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// classifyGo (classify without vector instructions) reports whether p holds a byte >= 0x80 (then it needs a UTF-8 check) and whether it
// holds a control byte (< 0x20) other than '\n', and appends to nls the index of every '\n' of
// p while it has found no other control byte (when ctl is true the list is incomplete and must
// not be used). One pass, 32 bytes per step: for the common chunk that is ASCII (or valid UTF-8)
// without tabs or carriage returns it replaces a UTF-8 pass, a control-byte pass per string run
// and every search for the end of a line. A block whose control mask is set is looked at byte
// by byte (a borrow can only mark a byte above a true control byte, so an unmarked block has
// none): that is the block of each '\n', a few per record.
func classifyGo(p []byte, nls []int) (high, ctl bool, _ []int) {
	var hi uint64
	off := 0
	for len(p)-off >= 32 {
		q := p[off : off+32 : off+32]
		a := binary.LittleEndian.Uint64(q[0:8])
		b := binary.LittleEndian.Uint64(q[8:16])
		c := binary.LittleEndian.Uint64(q[16:24])
		d := binary.LittleEndian.Uint64(q[24:32])
		hi |= a | b | c | d
		if !ctl && (((a-lsb*0x20)&^a)|((b-lsb*0x20)&^b)|((c-lsb*0x20)&^c)|((d-lsb*0x20)&^d))&msb != 0 {
			ctl, nls = ctlBytes(q, off, nls)
		}
		off += 32
	}
	for _, c := range p[off:] {
		hi |= uint64(c)
	}
	if !ctl {
		ctl, nls = ctlBytes(p[off:], off, nls)
	}
	return hi&msb != 0, ctl, nls
}

// ctlBytes appends base+j for every '\n' at q[j] to nls and reports whether q holds another
// control byte (it stops there).
func ctlBytes(q []byte, base int, nls []int) (bool, []int) {
	for j, c := range q {
		if c < 0x20 {
			if c != '\n' {
				return true, nls
			}
			nls = append(nls, base+j)
		}
	}
	return false, nls
}

// fastValid reports whether line (one JSON Lines record, no '\n') is valid JSON the way the
// full lexer sees it, and whether it is blank. It is conservative: ok is false for anything it
// does not accept outright — invalid JSON, a "\u" escape, a control byte anywhere (tabs and
// carriage returns included: between tokens only ' ' is accepted, and skipString refuses a
// control byte), nesting deeper than maxDepth, a key token holding a needle — and the caller
// then runs the full lexer, which gives the exact verdict and error. clean says line holds no
// control byte (classify; the record's '\n' is not part of line): strings then need no
// control-byte check. stack is scratch space (reused).
func fastValid(line []byte, needles [][]byte, maxDepth int, stack []byte, clean bool) (blank, ok bool, _ []byte) {
	i, n := 0, len(line)
	for i < n && line[i] == ' ' {
		i++
	}
	if i == n {
		return true, true, stack
	}
	end, _, ok, stack := valueEnd(line, i, needles, maxDepth, stack, clean, false, nil)
	if !ok {
		return false, false, stack
	}
	for end < n && line[end] == ' ' {
		end++
	}
	return false, end == n, stack
}

// valueEnd skips the JSON value starting at line[i] (no space before it) the way fastValid
// reads a record — the same refusals: a control byte, a "\u" escape, any space but ' ', nesting
// deeper than maxDepth, a key token holding a needle — and returns the index just past it. When
// ok is false, at is where it gave up (at most len(line)): the bytes before it were read.
// lenient (for values no pattern looks into, where no key matters) also accepts "\u" escapes
// and, in a chunk that is not clean, '\t' and '\r' between tokens, as the full lexer does.
// x (nil: none) is the string index of a clean line (strindex.go).
func valueEnd(line []byte, i int, needles [][]byte, maxDepth int, stack []byte, clean, lenient bool, x *strIndex) (end, at int, ok bool, _ []byte) {
	stack = stack[:0]
	n := len(line)
	sclean := clean || !lenient // ' ' only between tokens
	// (No closures over i and no function values here: they kept i in memory and every string
	// skip an indirect call, in the loop that skips most of a dense record's values.)
	for {
		// a value at line[i]
		i = skipWS(line, i, sclean)
		if i >= n {
			return 0, n, false, stack
		}
		switch c := line[i]; {
		case c == '"':
			var j int
			var good bool
			if lenient {
				j, good = skipStringLenient(line, i+1, clean, x)
			} else {
				j, good = skipString(line, i+1, clean)
			}
			if !good {
				return 0, i, false, stack
			}
			i = j
		case c == '{':
			if len(stack) >= maxDepth {
				return 0, i, false, stack
			}
			i++
			i = skipWS(line, i, sclean)
			if i < n && line[i] == '}' {
				i++
				break
			}
			stack = append(stack, '{')
			if !key(line, &i, needles, clean, lenient, x) {
				return 0, i, false, stack
			}
			continue
		case c == '[':
			if len(stack) >= maxDepth {
				return 0, i, false, stack
			}
			i++
			i = skipWS(line, i, sclean)
			if i < n && line[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			continue
		case c == '-' || (c >= '0' && c <= '9'):
			j, good := skipNumber(line, i)
			if !good {
				return 0, i, false, stack
			}
			i = j
		case c == 't':
			if !bytes.HasPrefix(line[i:], []byte("true")) {
				return 0, i, false, stack
			}
			i += 4
		case c == 'f':
			if !bytes.HasPrefix(line[i:], []byte("false")) {
				return 0, i, false, stack
			}
			i += 5
		case c == 'n':
			if !bytes.HasPrefix(line[i:], []byte("null")) {
				return 0, i, false, stack
			}
			i += 4
		default:
			return 0, i, false, stack
		}
		// after a value: close containers or go on with the next member / element
		for {
			if len(stack) == 0 {
				return i, i, true, stack
			}
			i = skipWS(line, i, sclean)
			if i >= n {
				return 0, n, false, stack
			}
			top := stack[len(stack)-1]
			c := line[i]
			if c == ',' {
				i++
				if top == '{' {
					i = skipWS(line, i, sclean)
					if !key(line, &i, needles, clean, lenient, x) {
						return 0, i, false, stack
					}
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			return 0, i, false, stack
		}
	}
}

// key consumes `"key" :` at line[*i] (spaces allowed around the colon). It fails, like any
// doubt, when the key token holds one of the needles: the record then goes to the full lexer.
func key(line []byte, i *int, needles [][]byte, clean, lenient bool, x *strIndex) bool {
	sclean := clean || !lenient
	j := skipWS(line, *i, sclean)
	if j >= len(line) || line[j] != '"' {
		return false
	}
	start := j
	var ok bool
	if lenient {
		j, ok = skipStringLenient(line, j+1, clean, x)
	} else {
		j, ok = skipString(line, j+1, clean)
	}
	if !ok {
		return false
	}
	tok := line[start:j]
	for _, n := range needles {
		// A needle starting with '"' can only be a prefix of a key token (the token's other
		// quotes are its end or escaped): a prefix test is exact for it, and cheap.
		if n[0] == '"' && bytes.HasPrefix(tok, n) || n[0] != '"' && bytes.Contains(tok, n) {
			return false
		}
	}
	j = skipWS(line, j, sclean)
	if j >= len(line) || line[j] != ':' {
		return false
	}
	*i = j + 1
	return true
}

// skipString skips the body of a string starting at line[i] (after the opening quote) and
// returns the index after the closing quote. It fails on a control byte, on a "\u" escape (the
// prefilter's fallback) and on an invalid escape. clean says line holds no control byte but
// '\n' and no '\n' either (a record without its end of line, or a part of one).
func skipString(line []byte, i int, clean bool) (int, bool) {
	q := -1
	nl := -1
	if clean {
		nl = len(line)
	}
	for {
		i = nextStop(line, i, &q, nl)
		if i >= len(line) {
			return 0, false
		}
		if line[i] == '"' {
			return i + 1, true
		}
		if line[i] < 0x20 {
			return 0, false
		}
		// A backslash: check the escape and go on after it.
		i++
		if i >= len(line) {
			return 0, false
		}
		switch line[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		default: // 'u' (the full lexer decides) or invalid
			return 0, false
		}
	}
}

// nextStop returns the index of the first byte of p[i:] that ends a run of plain string bytes:
// '"', '\\' or a control character (< 0x20); len(p) when there is none. Short runs are
// looked at 8 bytes at a time; past 32 bytes the next quote and backslash are found with
// bytes.IndexByte (vectorised) and the bytes before them checked for control characters 32
// at a time. *q caches the next quote's index between calls on the same p (start with -1):
// each quote is searched for once, so a long string with many escapes stays linear. nl >= 0
// says p holds no control byte but '\n' (classify) and nl is the index of the first '\n' at or
// after i (len(p) when there is none): past 32 bytes the run then ends at the first quote or
// backslash before nl, found with bytes.IndexByte, or at nl, and no byte is looked at one by
// one. nl < 0: control bytes are checked.
func nextStop(p []byte, i int, q *int, nl int) int {
	for range 4 {
		if i+8 > len(p) {
			for ; i < len(p); i++ {
				if c := p[i]; c == '"' || c == '\\' || c < 0x20 {
					return i
				}
			}
			return i
		}
		if m := stopMask(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + trailingZeroBytes(m)
		}
		i += 8
	}
	if *q < i {
		if j := bytes.IndexByte(p[i:], '"'); j >= 0 {
			*q = i + j
		} else {
			*q = len(p)
		}
	}
	end := *q
	if nl >= 0 && nl < end {
		end = nl
	}
	if k := bytes.IndexByte(p[i:end], '\\'); k >= 0 {
		end = i + k
	}
	if nl >= 0 {
		return end
	}
	if !anyCtl(p[i:end]) {
		return end
	}
	for i+8 <= end {
		if m := stopMask(binary.LittleEndian.Uint64(p[i:])); m != 0 {
			return i + trailingZeroBytes(m)
		}
		i += 8
	}
	for ; i < end; i++ {
		if p[i] < 0x20 {
			return i
		}
	}
	return end
}

// skipNumber skips -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at line[i].
func skipNumber(line []byte, i int) (int, bool) {
	n := len(line)
	digits := func() int {
		j := i
		for i < n && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		return i - j
	}
	if line[i] == '-' {
		i++
	}
	if i < n && line[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0, false
	}
	if i < n && line[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < n && (line[i] == 'e' || line[i] == 'E') {
		i++
		if i < n && (line[i] == '+' || line[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}
