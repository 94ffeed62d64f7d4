//go:build amd64 && !purego

#include "textflag.h"

// func classifyBlocksAVX2(p *byte, nblocks int, masks *uint32) (hi, ctl uint32)
//
// For each 32-byte block k of p[:32*nblocks]: masks[k] gets a bit per '\n' byte. hi is the
// byte mask (VPMOVMSKB) of the OR of all blocks: non-zero when a byte >= 0x80 was seen. ctl is
// the OR over the blocks of the masks of bytes < 0x20 other than '\n'.
TEXT ·classifyBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ nblocks+8(FP), CX
	MOVQ masks+16(FP), DI
	MOVL $0x1f, AX
	MOVQ AX, X3
	VPBROADCASTB X3, Y3 // 0x1f in every byte
	MOVL $0x0a, AX
	MOVQ AX, X4
	VPBROADCASTB X4, Y4 // '\n' in every byte
	VPXOR Y5, Y5, Y5    // OR of all bytes
	XORL R8, R8         // control bytes other than '\n'
	TESTQ CX, CX
	JZ done

loop:
	VMOVDQU (SI), Y0
	VPOR Y0, Y5, Y5
	VPMINUB Y3, Y0, Y1  // min(b, 0x1f)
	VPCMPEQB Y0, Y1, Y1 // b <= 0x1f
	VPCMPEQB Y4, Y0, Y2 // b == '\n'
	VPMOVMSKB Y1, AX
	VPMOVMSKB Y2, BX
	MOVL BX, (DI)
	XORL BX, AX
	ORL AX, R8
	ADDQ $32, SI
	ADDQ $4, DI
	DECQ CX
	JNZ loop

done:
	VPMOVMSKB Y5, AX
	VZEROUPPER
	MOVL AX, hi+24(FP)
	MOVL R8, ctl+28(FP)
	RET
