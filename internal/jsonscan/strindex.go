package jsonscan

import (
	"math/bits"

	"github.com/sessionfix/sessionfix/internal/freelist"
)

// The string index: where a string ends, found in bitmaps instead of byte by byte.
//
// classifyIndex, in the one vector pass over each chunk it already makes (UTF-8 need, control
// bytes, newlines), also notes every '"' and every '\\' of the chunk as one bit per byte
// (the stage 1 of simdjson, without its escape arithmetic). In a clean chunk (no control byte
// but '\n', and a line holds no '\n') a string token is then valid and ends at the first '"'
// after its opening quote whenever no '\\' comes before that quote: a few word operations per
// string instead of a loop over its bytes. A string holding a backslash — and anything the
// bitmaps cannot settle (a quote past the end of the line) — is read by the byte loop, as
// before; so every answer is the byte loop's (TestStringIndexAgrees, FuzzStringIndex).

// chunkIndex holds the bitmaps of the chunk being written: bit j of q[k] is set when byte
// 64k+j of the chunk is '"', of b[k] when it is '\\'. ok says they were made for this chunk
// and the chunk is clean; otherwise they must not be used.
type chunkIndex struct {
	q, b []uint64
	ok   bool
}

// maxIndexChunk is the largest chunk whose bitmaps are made (a quarter of its size). A JSONL
// store is written in 512 KiB chunks (engine/jsonl's scanBufSize); a SQLite value is written whole
// and then its newline, so its bitmaps were never read (a record must end in the chunk) yet made
// and kept as large as the largest value — 25 MiB for a 100 MiB tool output. Past this size the
// byte loops read the chunk, as they do with the index off.
const maxIndexChunk = 4 << 20

// indexBufs holds the bitmaps of closed Scanners (q and b) for the next one: a store scan
// makes a Scanner per file, and a 1 MiB chunk's bitmaps are 256 KiB. A free list of a few
// (one is in use per scan in flight, about one per worker), not a sync.Pool, which a garbage
// collection empties (in two): fix --apply on make bench's dense corpus, held to
// cmd/sessionfix's memory limit, collects every few MB, and most scans allocated their bitmaps
// again (5 MB a run).
var indexBufs = make(chan [2][]uint64, 2)

// freeNLs holds the newline lists (Scanner.nls) of closed Scanners for the next one, as
// indexBufs the bitmaps: each Scanner otherwise grew its own to a chunk's lines (a store scan
// makes one per file: 10 MB allocated a scan of the dense bench corpus). Lists longer than
// maxKeptNLs are left to the collector.
var freeNLs = freelist.List[int]{Max: 4}

const maxKeptNLs = 1 << 16

// size makes q and b hold the words of an n-byte chunk (contents left to classifyIndex, which
// writes every word).
func (ix *chunkIndex) size(n int) {
	w := (n + 63) / 64
	if cap(ix.q) < w {
		var p [2][]uint64
		select {
		case p = <-indexBufs:
		default:
		}
		if cap(p[0]) >= w && cap(p[1]) >= w {
			ix.q, ix.b = p[0], p[1]
		} else {
			ix.q, ix.b = make([]uint64, w, w+w/4), make([]uint64, w, w+w/4)
		}
	}
	ix.q, ix.b = ix.q[:w], ix.b[:w]
}

// release hands the bitmaps over to the next Scanner (Close); ix holds none afterwards.
func (ix *chunkIndex) release() {
	if cap(ix.q) > 0 {
		select {
		case indexBufs <- [2][]uint64{ix.q[:0], ix.b[:0]}:
		default:
		}
	}
	*ix = chunkIndex{}
}

// strIndex is a clean chunk's bitmaps seen from the line being read, which starts at index at
// of the chunk. A nil *strIndex means none: the byte loops decide.
type strIndex struct {
	q, b []uint64
	at   int
}

// stringEnd returns the index just past the closing quote of the string whose body starts at
// line[i] (n is len(line)) and true, when that quote lies in the line and no backslash comes
// before it. false: the bitmaps do not settle it (a backslash, or no quote in the line), the
// caller reads the string byte by byte. The common case — the quote in the same 64-bit word —
// is small enough to be inlined; a string running into the next word goes on in stringEndFar.
func (x *strIndex) stringEnd(i, n int) (int, bool) {
	k := x.at + i
	w := k >> 6
	if uint(w) >= uint(len(x.q)) || uint(w) >= uint(len(x.b)) {
		return 0, false
	}
	sh := uint(k) & 63
	m := x.q[w] >> sh
	if m == 0 {
		return x.stringEndFar(k, w, n)
	}
	t := bits.TrailingZeros64(m)
	if (x.b[w]>>sh)&(1<<t-1) != 0 || i+t >= n {
		return 0, false
	}
	return i + t + 1, true
}

// stringEndFar is stringEnd for a string body starting at chunk index k, in word w, whose
// closing quote is not in word w.
func (x *strIndex) stringEndFar(k, w, n int) (int, bool) {
	if x.b[w]>>(uint(k)&63) != 0 {
		return 0, false
	}
	lim := x.at + n
	for {
		w++
		at := w << 6
		if w >= len(x.q) || w >= len(x.b) || at >= lim {
			return 0, false
		}
		m, b := x.q[w], x.b[w]
		if m == 0 {
			if b != 0 {
				return 0, false
			}
			continue
		}
		t := bits.TrailingZeros64(m)
		if b&(1<<t-1) != 0 {
			return 0, false
		}
		e := at + t
		if e >= lim {
			return 0, false
		}
		return e - x.at + 1, true
	}
}

// skipBody returns skipStringLenient(line, i, true, nil)'s answer — the index just past the
// closing quote of the string whose body starts at line[i], and whether the string is valid —
// for a line of a clean chunk (no control byte), reading the bitmaps instead of the bytes: from
// each quote or backslash straight to the next one (64 bytes of plain text per word looked
// at), checking the escape that follows each backslash in the line (one of "\/bfnrt, or u and
// four hex digits, as the byte loop does). It is the slow path of skipStringLenient's index
// case: a string holding a backslash, or running past the word it starts in.
func (x *strIndex) skipBody(line []byte, i int) (int, bool) {
	n := len(line)
	lim := x.at + n // chunk index of the line's end
	k := x.at + i   // chunk index of the next byte to read
	xq := x.q
	xb := x.b
	if len(xb) < len(xq) {
		xq = xq[:len(xb)]
	}
	xb = xb[:len(xq)] // (one bounds check below for both)
	for {
		if k >= lim {
			return 0, false // the line ends inside the string
		}
		w := k >> 6
		if uint(w) >= uint(len(xq)) {
			return skipStringLenient(line, k-x.at, true, nil) // (never: the line is in the chunk)
		}
		sh := uint(k) & 63
		mq := xq[w] >> sh
		m := mq | xb[w]>>sh
		if m == 0 {
			k = (w + 1) << 6
			continue
		}
		t := uint(bits.TrailingZeros64(m))
		p := k + int(t)
		if p >= lim {
			return 0, false
		}
		if mq&(1<<t) != 0 {
			return p - x.at + 1, true
		}
		e := p - x.at + 1 // a backslash at p: the escape's letter is line[e]
		if uint(e) >= uint(n) {
			return 0, false
		}
		switch line[e] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			k = p + 2
		case 'u':
			if e+4 >= n || !isHex(line[e+1]) || !isHex(line[e+2]) || !isHex(line[e+3]) || !isHex(line[e+4]) {
				return 0, false
			}
			k = p + 6
		default:
			return 0, false
		}
	}
}
