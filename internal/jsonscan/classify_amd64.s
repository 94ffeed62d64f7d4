//go:build amd64 && !purego

#include "textflag.h"

// func classifyBlocksAVX2(p *byte, nblocks int, nl, q, bs *uint64) (hi, ctl uint32)
//
// For each 64-byte block k of p[:64*nblocks]: nl[k], q[k] and bs[k] get a bit per '\n', '"'
// and '\\' byte of the block (bit j: byte 64*k+j). hi is the byte mask (VPMOVMSKB) of the OR
// of all blocks: non-zero when a byte >= 0x80 was seen. ctl is non-zero when a byte < 0x20
// other than '\n' was seen.
TEXT ·classifyBlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ nblocks+8(FP), CX
	MOVQ nl+16(FP), DI
	MOVQ q+24(FP), R9
	MOVQ bs+32(FP), R10
	MOVL $0x1f, AX
	MOVQ AX, X3
	VPBROADCASTB X3, Y3 // 0x1f in every byte
	MOVL $0x0a, AX
	MOVQ AX, X4
	VPBROADCASTB X4, Y4 // '\n' in every byte
	MOVL $0x22, AX
	MOVQ AX, X6
	VPBROADCASTB X6, Y6 // '"' in every byte
	MOVL $0x5c, AX
	MOVQ AX, X7
	VPBROADCASTB X7, Y7 // '\\' in every byte
	VPXOR Y5, Y5, Y5    // OR of all bytes
	XORQ R8, R8         // control bytes other than '\n'
	TESTQ CX, CX
	JZ done

loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y8
	VPOR Y0, Y5, Y5
	VPOR Y8, Y5, Y5

	// control bytes (b <= 0x1f), '\n' included
	VPMINUB Y3, Y0, Y1
	VPCMPEQB Y0, Y1, Y1
	VPMINUB Y3, Y8, Y9
	VPCMPEQB Y8, Y9, Y9
	VPMOVMSKB Y1, AX
	VPMOVMSKB Y9, DX
	SHLQ $32, DX
	ORQ DX, AX

	// '\n'
	VPCMPEQB Y4, Y0, Y2
	VPCMPEQB Y4, Y8, Y10
	VPMOVMSKB Y2, BX
	VPMOVMSKB Y10, DX
	SHLQ $32, DX
	ORQ DX, BX
	MOVQ BX, (DI)
	XORQ BX, AX
	ORQ AX, R8

	// '"'
	VPCMPEQB Y6, Y0, Y2
	VPCMPEQB Y6, Y8, Y10
	VPMOVMSKB Y2, BX
	VPMOVMSKB Y10, DX
	SHLQ $32, DX
	ORQ DX, BX
	MOVQ BX, (R9)

	// '\\'
	VPCMPEQB Y7, Y0, Y2
	VPCMPEQB Y7, Y8, Y10
	VPMOVMSKB Y2, BX
	VPMOVMSKB Y10, DX
	SHLQ $32, DX
	ORQ DX, BX
	MOVQ BX, (R10)

	ADDQ $64, SI
	ADDQ $8, DI
	ADDQ $8, R9
	ADDQ $8, R10
	DECQ CX
	JNZ loop

done:
	VPMOVMSKB Y5, AX
	VZEROUPPER
	MOVL AX, hi+40(FP)
	MOVQ R8, DX
	SHRQ $32, DX
	ORQ DX, R8
	MOVL R8, ctl+44(FP)
	RET
