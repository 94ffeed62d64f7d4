package jsonscan

import (
	"bytes"
	"math/bits"
	"slices"
)

// The whole-record lexer (fastRecord): a JSON Lines record that lies whole in one Write is
// read in one tight pass over its bytes — strings skipped with the vectorised searches of
// nextStop, values no pattern reaches into skipped with valueEnd, the pattern nodes followed
// only along the members that lead somewhere — instead of the byte-at-a-time push states of
// the full lexer, which must be able to stop and resume anywhere in the input. It finds
// exactly the captures the full lexer would, in the same order; it hands them out only once
// the record turned out valid. Anything it does not accept outright (invalid JSON, a key with
// a backslash where a pattern needs the key, an object whose keys are captured, a captured
// string longer than the capture limit) makes it give up, and the full lexer reads the record
// from its first byte as if it had never been tried: the records reported are the same either
// way (TestPrefilterSameRecords, TestPrefilterFixtures, FuzzPrefilterAgreesWithFullScan).

// fastFrame is an open container of the record fastRecord reads whose node is not nil
// (containers below a nil node are skipped whole).
type fastFrame struct {
	obj   bool
	node  *node
	start int64 // absolute offset of the '{' or '['
	index int   // array: the index of the current element
	// object: the node of the current member's value and its key's bytes in the line
	child         *node
	keyAt, keyEnd int
}

// fastCap is a capture fastRecord found, handed out when the record ends valid: its token
// line[at:end] and its path and container starts, s.fpath[lo:hi] and s.fstarts[lo:hi].
type fastCap struct {
	pattern int
	at, end int
	lo, hi  int
}

// skipWS returns the index of the first byte of line at or after i that is not whitespace:
// ' ', and '\t' and '\r' too in a chunk that is not clean (a clean one holds neither).
func skipWS(line []byte, i int, clean bool) int {
	for i < len(line) {
		c := line[i]
		if c > ' ' {
			return i // the common case, one compare: no whitespace byte is above ' '
		}
		if c != ' ' && (clean || (c != '\t' && c != '\r')) {
			return i
		}
		i++
	}
	return i
}

// fastRecord reads line (one JSON Lines record without its '\n', starting at absolute offset
// base) and reports whether it is blank and whether it read it: then the record is valid JSON
// and its captures have been handed out (streamed, or added to s.rec.Captures) exactly as the
// full lexer would. ok false: nothing was handed out, and the full lexer must read the record.
func (s *Scanner) fastRecord(line []byte, base int64) (blank, ok bool) {
	clean := s.clean
	n := len(line)
	i := skipWS(line, 0, clean)
	if i == n {
		return true, true
	}
	s.fstack, s.fcaps, s.fpath, s.fstarts = s.fstack[:0], s.fcaps[:0], s.fpath[:0], s.fstarts[:0]
	x := s.fx
	nd := s.top // the node of the value at line[i]
	for {
		if i >= n {
			return false, false
		}
		c := line[i]
		if c <= ' ' { // (compact JSON has no whitespace: one compare of the byte the switch reads)
			if i = skipWS(line, i, clean); i >= n {
				return false, false
			}
			c = line[i]
		}
		switch {
		case c == '"' && (nd == nil || nd.capture < 0):
			// A string no pattern captures: skipped (as valueEnd would, without its call).
			j, good := skipStringLenient(line, i+1, clean, x)
			if !good {
				return false, false
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			// A number, never captured: skipped (as valueEnd would).
			j, good := skipNumber(line, i)
			if !good {
				return false, false
			}
			i = j
		case nd == nil || (c != '"' && c != '{' && c != '['):
			// No pattern reaches into it (or a literal, never captured): skipped.
			var end int
			var good bool
			var st []byte
			if x != nil {
				end, good, st = skipIndexed(line, i, s.maxDepth-len(s.fstack), s.vstack, x)
			} else {
				end, _, good, st = valueEnd(line, i, nil, s.maxDepth-len(s.fstack), s.vstack, clean, true, x)
			}
			s.vstack = st
			if !good {
				return false, false
			}
			i = end
		case c == '"':
			j, good := skipStringLenient(line, i+1, clean, x)
			if !good {
				return false, false
			}
			if nd.capture >= 0 {
				if j-i > s.maxCap {
					return false, false // TooLong: the full lexer says so
				}
				s.fastCapture(line, nd.capture, i, j)
			}
			i = j
		default: // '{' or '['
			if len(s.fstack) >= s.maxDepth || (c == '{' && nd.keyCapID >= 0) {
				return false, false
			}
			// (the frame written field by field: as one struct, it was copied with a write
			// barrier over all of it while the collector marks)
			if len(s.fstack) < cap(s.fstack) {
				s.fstack = s.fstack[:len(s.fstack)+1]
			} else {
				s.fstack = append(s.fstack, fastFrame{})
			}
			f := &s.fstack[len(s.fstack)-1]
			f.obj, f.node, f.start, f.index = c == '{', nd, base+int64(i), 0
			f.child, f.keyAt, f.keyEnd = nil, 0, 0
			i = skipWS(line, i+1, clean)
			if c == '{' {
				if i < n && line[i] == '}' {
					i++
					s.fstack = s.fstack[:len(s.fstack)-1]
					break
				}
				j, closed, good := s.fastMembers(line, i, f)
				if !good {
					return false, false
				}
				if closed {
					i = j
					s.fstack = s.fstack[:len(s.fstack)-1]
					break
				}
				i, nd = j, f.child
				continue
			}
			if i < n && line[i] == ']' {
				i++
				s.fstack = s.fstack[:len(s.fstack)-1]
				break
			}
			nd = nd.anyElem
			continue
		}
		// What follows the value (written out here, not called: one call less for every value
		// of a record): containers closed, then the next member or element, whose value is
		// read at the loop's top.
	next:
		for {
			i = skipWS(line, i, clean)
			if len(s.fstack) == 0 {
				if i != n {
					return false, false // data after the value
				}
				s.fastDeliver(line, base)
				return false, true
			}
			if i >= n {
				return false, false
			}
			f := &s.fstack[len(s.fstack)-1]
			c := line[i]
			if c == ',' {
				if !f.obj {
					f.index++
					i, nd = i+1, f.node.anyElem
					break next
				}
				j, closed, good := s.fastMembers(line, i+1, f)
				if !good {
					return false, false
				}
				if closed {
					i = j
					s.fstack = s.fstack[:len(s.fstack)-1]
					continue
				}
				i, nd = j, f.child
				break next
			}
			if (f.obj && c == '}') || (!f.obj && c == ']') {
				i++
				s.fstack = s.fstack[:len(s.fstack)-1]
				continue
			}
			return false, false
		}
	}
}

// fastMembers reads the members of the object of frame f from the key token at line[i]
// (after whitespace). A member whose value no pattern reaches into (f's node has no child for
// its key) is read whole here — key, colon, value, the ',' or '}' after it — and the next one
// read, without going back to fastRecord's loop (most members of a dense record: a key that is
// no pattern's, a string, number or small object after it). It returns at the first member a
// pattern reaches into, with f's child and key set and the index after its colon (closed
// false), or at the object's end with the index after its '}' (closed true). A key with a
// backslash in an object whose node wants keys, or longer than the capture limit there, is
// left to the full lexer (ok false), as is anything invalid.
func (s *Scanner) fastMembers(line []byte, i int, f *fastFrame) (_ int, closed, ok bool) {
	n := len(line)
	clean, x := s.clean, s.fx
	nd := f.node
	want := nd.wantsKeys()
	for {
		if i >= n {
			return 0, false, false
		}
		if line[i] != '"' {
			if i = skipWS(line, i, clean); i >= n || line[i] != '"' {
				return 0, false, false
			}
		}
		start := i + 1
		var j int
		var child *node
		if want {
			// x.stringEnd(start, n), its common case written out as in skipStringLenient: k is
			// the closing quote, in the line, when the bitmaps settle it (no backslash before it)
			k := -1
			if x != nil {
				p := x.at + start
				if w := p >> 6; uint(w) < uint(len(x.q)) && uint(w) < uint(len(x.b)) {
					sh := uint(p) & 63
					if m := x.q[w] >> sh; m != 0 {
						t := bits.TrailingZeros64(m)
						if (x.b[w]>>sh)&(1<<t-1) == 0 && start+t < n {
							k = start + t
						}
					} else if e, good := x.stringEndFar(p, w, n); good {
						k = e - 1
					}
				}
			}
			if k < 0 {
				q := -1
				nl := -1
				if clean {
					nl = n
				}
				if k = nextStop(line, start, &q, nl); k >= n || line[k] != '"' {
					return 0, false, false // a backslash, a control byte or the end of the line
				}
			}
			if k+1-i > s.maxCap {
				return 0, false, false // a key longer than the capture limit
			}
			j = k + 1
			if l := k - start; !nd.litLen(l) {
				child = nd.anyKey // childKey's answer, without its call
			} else if nd.ktabOK && l <= 16 && cap(line)-start >= 8 {
				child = nd.lookupWords(keyWords(line[start:k])) // childKey's answer, inline
			} else {
				child = nd.childKey(line[start:k])
			}
			if child != nil {
				f.child, f.keyAt, f.keyEnd = child, start, k
			}
		} else {
			var good bool
			if j, good = skipStringLenient(line, start, clean, x); !good {
				return 0, false, false
			}
		}
		if j >= n || line[j] != ':' { // (no whitespace before the colon: no call to skip it)
			if j = skipWS(line, j, clean); j >= n || line[j] != ':' {
				return 0, false, false
			}
		}
		i = j + 1
		if child != nil {
			return i, false, true
		}
		// The value no pattern reaches into: skipped here, as fastRecord's loop would.
		if i >= n {
			return 0, false, false
		}
		c := line[i]
		if c <= ' ' {
			if i = skipWS(line, i, clean); i >= n {
				return 0, false, false
			}
			c = line[i]
		}
		switch {
		case c == '"':
			// skipStringLenient's first step written out (no call for a string ending in the
			// word it starts in)
			if x != nil {
				k := x.at + i + 1
				if w := k >> 6; uint(w) < uint(len(x.q)) && uint(w) < uint(len(x.b)) {
					sh := uint(k) & 63
					if m := x.q[w] >> sh; m != 0 {
						if t := bits.TrailingZeros64(m); (x.b[w]>>sh)&(1<<t-1) == 0 && i+1+t < n {
							i += t + 2
							break
						}
					}
				}
			}
			var good bool
			if i, good = skipStringLenient(line, i+1, clean, x); !good {
				return 0, false, false
			}
		case c == '-' || (c >= '0' && c <= '9'):
			var good bool
			if i, good = skipNumber(line, i); !good {
				return 0, false, false
			}
		default:
			var end int
			var good bool
			var st []byte
			if x != nil {
				end, good, st = skipIndexed(line, i, s.maxDepth-len(s.fstack), s.vstack, x)
			} else {
				end, _, good, st = valueEnd(line, i, nil, s.maxDepth-len(s.fstack), s.vstack, clean, true, x)
			}
			s.vstack = st
			if !good {
				return 0, false, false
			}
			i = end
		}
		// then ',' and the next key, or the object's end
		if i >= n {
			return 0, false, false
		}
		if c = line[i]; c <= ' ' {
			if i = skipWS(line, i, clean); i >= n {
				return 0, false, false
			}
			c = line[i]
		}
		if c == '}' {
			return i + 1, true, true
		}
		if c != ',' {
			return 0, false, false
		}
		i++
	}
}

// fastCapture notes a captured string token line[at:end] with the path of the value being
// read (as pathInto builds it). The path and its container starts are written into room made
// for all of them at once (not appended element by element: every append wrote the slice's
// header back, twice per container of every capture).
func (s *Scanner) fastCapture(line []byte, id, at, end int) {
	lo, d := len(s.fpath), len(s.fstack)
	s.fpath = slices.Grow(s.fpath, d)[:lo+d]
	s.fstarts = slices.Grow(s.fstarts[:lo], d)[:lo+d]
	path, starts := s.fpath[lo:lo+d], s.fstarts[lo:lo+d]
	for k := range s.fstack[:d] {
		f := &s.fstack[k]
		starts[k] = f.start
		switch {
		case !f.obj:
			path[k] = Elem{Index: f.index}
		case f.child != nil && f.child.label != "":
			path[k] = Elem{Key: f.child.label, Index: -1} // a literal edge: no allocation
		default:
			path[k] = Elem{Key: string(line[f.keyAt:f.keyEnd]), Index: -1}
		}
	}
	s.fcaps = append(s.fcaps, fastCap{pattern: id, at: at, end: end, lo: lo, hi: lo + d})
}

// fastDeliver hands out the captures of a record fastRecord read, as addCapture does.
// Streamed, each is written into s.capBuf field by field (as one struct, it was built on the
// stack and copied over with a write barrier over all of it while the collector marks).
func (s *Scanner) fastDeliver(line []byte, base int64) {
	if s.onCapture != nil {
		c := &s.capBuf
		for _, fc := range s.fcaps {
			c.Pattern, c.Offset, c.Len, c.Line, c.limit = fc.pattern, base+int64(fc.at), int64(fc.end-fc.at), s.line, s.maxCap
			c.Key, c.TooLong, c.Stable = false, false, true
			c.Raw, c.Path, c.Starts = line[fc.at:fc.end], s.fpath[fc.lo:fc.hi], s.fstarts[fc.lo:fc.hi]
			s.onCapture(c)
		}
		return
	}
	for _, fc := range s.fcaps {
		c := Capture{Pattern: fc.pattern, Offset: base + int64(fc.at), Len: int64(fc.end - fc.at), Line: s.line, limit: s.maxCap}
		c.Raw = append([]byte(nil), line[fc.at:fc.end]...)
		c.Path = append(make(Path, 0, fc.hi-fc.lo), s.fpath[fc.lo:fc.hi]...)
		c.Starts = append(make([]int64, 0, fc.hi-fc.lo), s.fstarts[fc.lo:fc.hi]...)
		s.rec.Captures = append(s.rec.Captures, c)
	}
}

// skipStringLenient is skipString that also accepts "\u" escapes (four hex digits): for
// values whose text no pattern looks at. x (nil: none) is the string index of a clean line.
func skipStringLenient(line []byte, i int, clean bool, x *strIndex) (int, bool) {
	if x != nil {
		// x.stringEnd, its common case written out here (it is too large to be inlined, and
		// this is the call for most strings of a record)
		k := x.at + i
		w := k >> 6
		if uint(w) < uint(len(x.q)) && uint(w) < uint(len(x.b)) {
			sh := uint(k) & 63
			if m := x.q[w] >> sh; m != 0 {
				t := bits.TrailingZeros64(m)
				if (x.b[w]>>sh)&(1<<t-1) == 0 && i+t < len(line) {
					return i + t + 1, true
				}
			} else if x.b[w]>>sh == 0 && uint(w+1) < uint(len(x.q)) && uint(w+1) < uint(len(x.b)) {
				// the closing quote in the next word (a string of up to 64 bytes crossing a
				// word's end, as half the ids and times of a record do)
				if m := x.q[w+1]; m != 0 {
					t := bits.TrailingZeros64(m)
					if j := i + (64 - int(sh)) + t; x.b[w+1]&(1<<t-1) == 0 && j < len(line) {
						return j + 1, true
					}
				}
			}
			// a backslash, or the closing quote further on: the bitmaps still decide
			return x.skipBody(line, i)
		}
	}
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
		i++
		if i >= len(line) {
			return 0, false
		}
		switch line[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+4 >= len(line) || !isHex(line[i+1]) || !isHex(line[i+2]) || !isHex(line[i+3]) || !isHex(line[i+4]) {
				return 0, false
			}
			i += 5
		default:
			return 0, false
		}
	}
}

// skipIndexed is valueEnd(line, i, nil, maxDepth, stack, true, true, x) for a line of a clean
// chunk with its string index x (not nil): it skips the JSON value at line[i] (no whitespace
// before it) that no pattern reaches into and returns the index just past it, or ok false where
// valueEnd would. Written for that one case — no needles, strings ended in the bitmaps inline,
// a member's key and colon read in the loop instead of by key — as most values a dense record's
// patterns do not reach into are read here (the fields of tool results and usage counts).
func skipIndexed(line []byte, i int, maxDepth int, stack []byte, x *strIndex) (end int, ok bool, _ []byte) {
	stack = stack[:0]
	n := len(line)
	xq, xb, at := x.q, x.b, x.at
	for {
		// a value at line[i]
		if i >= n {
			return 0, false, stack
		}
		c := line[i]
		if c == ' ' {
			if i = skipWS(line, i, true); i >= n {
				return 0, false, stack
			}
			c = line[i]
		}
		switch {
		case c == '"':
			// skipStringLenient(line, i+1, true, x), its common case written out
			k := at + i + 1
			w := k >> 6
			if uint(w) < uint(len(xq)) && uint(w) < uint(len(xb)) {
				sh := uint(k) & 63
				if m := xq[w] >> sh; m != 0 {
					if t := bits.TrailingZeros64(m); (xb[w]>>sh)&(1<<t-1) == 0 && i+1+t < n {
						i += t + 2
						break
					}
				}
			}
			j, good := x.skipBody(line, i+1)
			if !good {
				return 0, false, stack
			}
			i = j
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return 0, false, stack
			}
			if i = skipWS(line, i+1, true); i >= n {
				return 0, false, stack
			}
			if c == '{' {
				if line[i] == '}' {
					i++
					break
				}
				stack = append(stack, '{')
				if i = skipKeyIndexed(line, i, x); i < 0 {
					return 0, false, stack
				}
				continue
			}
			if line[i] == ']' {
				i++
				break
			}
			stack = append(stack, '[')
			continue
		case c == '-' || (c >= '0' && c <= '9'):
			j, good := skipNumber(line, i)
			if !good {
				return 0, false, stack
			}
			i = j
		case c == 't':
			if !bytes.HasPrefix(line[i:], []byte("true")) {
				return 0, false, stack
			}
			i += 4
		case c == 'f':
			if !bytes.HasPrefix(line[i:], []byte("false")) {
				return 0, false, stack
			}
			i += 5
		case c == 'n':
			if !bytes.HasPrefix(line[i:], []byte("null")) {
				return 0, false, stack
			}
			i += 4
		default:
			return 0, false, stack
		}
		// after a value: close containers or go on with the next member / element
		for {
			if len(stack) == 0 {
				return i, true, stack
			}
			if i >= n {
				return 0, false, stack
			}
			c := line[i]
			if c == ' ' {
				if i = skipWS(line, i, true); i >= n {
					return 0, false, stack
				}
				c = line[i]
			}
			top := stack[len(stack)-1]
			if c == ',' {
				i++
				if top == '{' {
					if i = skipKeyIndexed(line, i, x); i < 0 {
						return 0, false, stack
					}
				}
				break
			}
			if (top == '{' && c == '}') || (top == '[' && c == ']') {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			return 0, false, stack
		}
	}
}

// skipKeyIndexed is key(line, &i, nil, true, true, x) for skipIndexed: it reads `"key" :` at
// line[i] (whitespace allowed around it) and returns the index after the colon, -1 where key
// fails.
func skipKeyIndexed(line []byte, i int, x *strIndex) int {
	n := len(line)
	if i >= n {
		return -1
	}
	if line[i] != '"' {
		if i = skipWS(line, i, true); i >= n || line[i] != '"' {
			return -1
		}
	}
	j := -1
	k := x.at + i + 1
	w := k >> 6
	if uint(w) < uint(len(x.q)) && uint(w) < uint(len(x.b)) {
		sh := uint(k) & 63
		if m := x.q[w] >> sh; m != 0 {
			if t := bits.TrailingZeros64(m); (x.b[w]>>sh)&(1<<t-1) == 0 && i+1+t < n {
				j = i + t + 2
			}
		}
	}
	if j < 0 {
		var good bool
		if j, good = x.skipBody(line, i+1); !good {
			return -1
		}
	}
	if j < n && line[j] == ':' {
		return j + 1
	}
	if j = skipWS(line, j, true); j >= n || line[j] != ':' {
		return -1
	}
	return j + 1
}
