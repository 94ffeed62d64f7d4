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
func classifyBlocksAVX2(p *byte, nblocks int, masks *uint32) (hi, ctl uint32)

// classify: see classifyGo, which it equals (TestClassify); with AVX2, 32 bytes per
// instruction group and the newlines taken from per-block bit masks.
func classify(p []byte, nls []int) (high, ctl bool, _ []int) {
	if !hasAVX2 {
		return classifyGo(p, nls)
	}
	var masks [128]uint32
	off := 0
	for len(p)-off >= 32 {
		nb := min((len(p)-off)/32, len(masks))
		hi, c := classifyBlocksAVX2(&p[off], nb, &masks[0])
		high = high || hi != 0
		ctl = ctl || c != 0
		if !ctl {
			for k, m := range masks[:nb] {
				for m != 0 {
					nls = append(nls, off+k*32+bits.TrailingZeros32(m))
					m &= m - 1
				}
			}
		}
		off += nb * 32
	}
	for _, c := range p[off:] {
		high = high || c >= 0x80
	}
	if !ctl {
		ctl, nls = ctlBytes(p[off:], off, nls)
	}
	return high, ctl, nls
}
