//go:build amd64 && !purego

package jsonscan

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// hasAVX2: the CPU has AVX2 and the OS saves the YMM registers (x/sys/cpu checks both, XGETBV
// included); without it classify is classifyGo.
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func classifyBlocksAVX2(p *byte, nblocks int, nl, q, bs *uint64) (hi, ctl uint32)

// classify: see classifyGo, which it equals (TestClassify); with AVX2, 64 bytes per
// instruction group and the newlines taken from per-block bit masks.
func classify(p []byte, nls []int) (high, ctl bool, _ []int) { return classifyIndex(p, nls, nil) }

// classifyIndex is classify that also fills ix (when not nil) with the quote and backslash
// bitmaps of p, made in the same pass: ix.ok then says whether they may be used (AVX2, and p
// clean: no control byte but '\n'). Without AVX2 ix.ok is false (the bit-by-bit version would
// cost more than it saves).
func classifyIndex(p []byte, nls []int, ix *chunkIndex) (high, ctl bool, _ []int) {
	if !hasAVX2 {
		if ix != nil {
			ix.ok = false
		}
		return classifyGo(p, nls)
	}
	var nlm, sq, sb [64]uint64
	if ix != nil {
		ix.size(len(p))
	}
	off := 0
	for len(p)-off >= 64 {
		nb := min((len(p)-off)/64, len(nlm))
		qd, bd := &sq[0], &sb[0]
		if ix != nil {
			qd, bd = &ix.q[off/64], &ix.b[off/64]
		}
		hi, c := classifyBlocksAVX2(&p[off], nb, &nlm[0], qd, bd)
		high = high || hi != 0
		ctl = ctl || c != 0
		if !ctl {
			for k, m := range nlm[:nb] {
				for m != 0 {
					nls = append(nls, off+k*64+bits.TrailingZeros64(m))
					m &= m - 1
				}
			}
		}
		off += nb * 64
	}
	var qw, bw uint64
	for j, c := range p[off:] {
		switch {
		case c >= 0x80:
			high = true
		case c == '"':
			qw |= 1 << j
		case c == '\\':
			bw |= 1 << j
		case c < 0x20 && !ctl:
			if c != '\n' {
				ctl = true
			} else {
				nls = append(nls, off+j)
			}
		}
	}
	if ix != nil {
		if off < len(p) {
			ix.q[off/64], ix.b[off/64] = qw, bw
		}
		ix.ok = !ctl
	}
	return high, ctl, nls
}
