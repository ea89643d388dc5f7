//go:build amd64 && !purego

#include "textflag.h"

// Byte classes for VPSHUFB nibble lookups: a byte's class is
// loTab[low nibble] & hiTab[high nibble]. Bits 0-2 and 5 mark the bytes
// allowed after a backslash other than the backslash itself (" hi 2;
// b f n hi 6; r t u hi 7; bit 5 /, which JSON.stringify never escapes),
// bits 3-4 the hex digits (0-9 hi 3; A-F hi 4; a-f hi 6).
DATA hiTab<>+0x00(SB)/8, $0x0412001008210000
DATA hiTab<>+0x08(SB)/8, $0x0000000000000000
DATA hiTab<>+0x10(SB)/8, $0x0412001008210000
DATA hiTab<>+0x18(SB)/8, $0x0000000000000000
GLOBL hiTab<>(SB), RODATA|NOPTR, $32

DATA loTab<>+0x00(SB)/8, $0x081a1c1c181f1808
DATA loTab<>+0x08(SB)/8, $0x2002000000000808
DATA loTab<>+0x10(SB)/8, $0x081a1c1c181f1808
DATA loTab<>+0x18(SB)/8, $0x2002000000000808
GLOBL loTab<>(SB), RODATA|NOPTR, $32

DATA quoteC<>+0x00(SB)/8, $0x2222222222222222
DATA quoteC<>+0x08(SB)/8, $0x2222222222222222
DATA quoteC<>+0x10(SB)/8, $0x2222222222222222
DATA quoteC<>+0x18(SB)/8, $0x2222222222222222
GLOBL quoteC<>(SB), RODATA|NOPTR, $32

DATA slashC<>+0x00(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA slashC<>+0x08(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA slashC<>+0x10(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA slashC<>+0x18(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL slashC<>(SB), RODATA|NOPTR, $32

DATA ctlC<>+0x00(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlC<>+0x08(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlC<>+0x10(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctlC<>+0x18(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL ctlC<>(SB), RODATA|NOPTR, $32

DATA uC<>+0x00(SB)/8, $0x7575757575757575
DATA uC<>+0x08(SB)/8, $0x7575757575757575
DATA uC<>+0x10(SB)/8, $0x7575757575757575
DATA uC<>+0x18(SB)/8, $0x7575757575757575
GLOBL uC<>(SB), RODATA|NOPTR, $32

DATA nibC<>+0x00(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibC<>+0x08(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibC<>+0x10(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibC<>+0x18(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibC<>(SB), RODATA|NOPTR, $32

DATA escC<>+0x00(SB)/8, $0x2727272727272727
DATA escC<>+0x08(SB)/8, $0x2727272727272727
DATA escC<>+0x10(SB)/8, $0x2727272727272727
DATA escC<>+0x18(SB)/8, $0x2727272727272727
GLOBL escC<>(SB), RODATA|NOPTR, $32

DATA canonEscC<>+0x00(SB)/8, $0x0707070707070707
DATA canonEscC<>+0x08(SB)/8, $0x0707070707070707
DATA canonEscC<>+0x10(SB)/8, $0x0707070707070707
DATA canonEscC<>+0x18(SB)/8, $0x0707070707070707
GLOBL canonEscC<>(SB), RODATA|NOPTR, $32

DATA hexC<>+0x00(SB)/8, $0x1818181818181818
DATA hexC<>+0x08(SB)/8, $0x1818181818181818
DATA hexC<>+0x10(SB)/8, $0x1818181818181818
DATA hexC<>+0x18(SB)/8, $0x1818181818181818
GLOBL hexC<>(SB), RODATA|NOPTR, $32

// func scanStringAVX2(b []byte, i int, canon bool) int
//
// Registers: SI b's data, DX len(b), DI the block's index, R8 1 when the
// block's first byte is escaped (an odd run of backslashes ended the last
// block), R9 the block's bytes that must be hex digits (from a \u near the
// end of the last block). Per block, as bit masks: BX backslashes, CX the
// escaped bytes that are not backslashes, R10 the errors (control bytes,
// bad escaped bytes, missing hex digits), AX the unescaped quotes and
// with canon the stops. R13 is all ones with canon, else zero; Y7 holds
// the class bits of the bytes allowed after a backslash.
TEXT ·scanStringAVX2(SB), NOSPLIT, $64-48
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), DX
	MOVQ i+24(FP), DI
	CMPQ DX, $32
	JB   fail0
	MOVBLZX canon+32(FP), R13
	NEGL    R13
	VMOVDQU escC<>(SB), Y7
	TESTL   R13, R13
	JZ      consts
	VMOVDQU canonEscC<>(SB), Y7

consts:
	VMOVDQU quoteC<>(SB), Y8
	VMOVDQU slashC<>(SB), Y9
	VMOVDQU ctlC<>(SB), Y10
	VMOVDQU uC<>(SB), Y11
	VMOVDQU nibC<>(SB), Y12
	VMOVDQU hiTab<>(SB), Y13
	VMOVDQU loTab<>(SB), Y14
	VPXOR   Y15, Y15, Y15
	XORQ    R8, R8
	XORQ    R9, R9

loop:
	LEAQ    32(DI), AX
	CMPQ    AX, DX
	JA      tail
	VMOVDQU (SI)(DI*1), Y0

block:
	// Classify the 32 bytes of Y0.
	VPCMPEQB  Y0, Y9, Y1 // backslashes
	VPMOVMSKB Y1, BX
	VPCMPEQB  Y0, Y8, Y2 // quotes
	VPMINUB   Y0, Y10, Y3
	VPCMPEQB  Y0, Y3, Y3 // control bytes
	VPCMPEQB  Y0, Y11, Y4 // 'u'
	VPSRLW    $4, Y0, Y5
	VPAND     Y12, Y5, Y5
	VPSHUFB   Y5, Y13, Y5
	VPAND     Y12, Y0, Y6
	VPSHUFB   Y6, Y14, Y6
	VPAND     Y5, Y6, Y6
	VPAND     Y7, Y6, Y5
	VPCMPEQB  Y15, Y5, Y5 // not allowed after a backslash
	VPAND     hexC<>(SB), Y6, Y6
	VPCMPEQB  Y15, Y6, Y6 // not hex digits

	// The bytes after odd-length runs of backslashes (simdjson's
	// stage 1): runs starting on an even bit end on an odd one after an
	// odd length, and the other way round; R8 flips the sense of a run at
	// bit 0 that continues one from the last block.
	MOVL BX, CX
	SHLL $1, CX
	NOTL CX
	ANDL BX, CX           // starts of runs
	MOVL $0x55555555, AX
	XORL R8, AX           // even-start bits
	MOVL CX, R10
	ANDL AX, R10          // even starts
	NOTL AX
	ANDL AX, CX           // odd starts
	ADDL BX, R10          // even carries
	ADDL BX, CX           // odd carries; CF: an odd run reaches the next block
	MOVL R8, R11
	SBBL R8, R8
	NEGL R8
	ORL  R11, CX
	MOVL BX, AX
	NOTL AX
	ANDL AX, R10          // even-start run ends
	ANDL AX, CX           // odd-start run ends
	MOVL $0xaaaaaaaa, AX
	ANDL AX, R10
	ANDL $0x55555555, CX
	ORL  R10, CX          // escaped bytes that are not backslashes

	VPMOVMSKB Y3, R10     // errors: control bytes,
	VPMOVMSKB Y5, AX
	ANDL      CX, AX
	ORL       AX, R10     // escaped bytes not allowed there,
	VPMOVMSKB Y4, R11
	ANDL      CX, R11     // escaped 'u's
	MOVQ      R11, AX
	SHLQ      $1, AX
	MOVQ      AX, R12
	SHLQ      $1, AX
	ORQ       AX, R12
	SHLQ      $1, AX
	ORQ       AX, R12
	SHLQ      $1, AX
	ORQ       AX, R12
	ORQ       R9, R12     // bytes that must be hex digits
	MOVQ      R12, R9
	SHRQ      $32, R9     // the next block's
	VPMOVMSKB Y6, AX
	ANDL      R12, AX
	ORL       AX, R10     // and missing hex digits.
	ANDL      R13, R11    // with canon, stops: the backslashes of \u
	TESTL     $1, R11
	JNZ       ustart
	SHRL      $1, R11
	VPMOVMSKB Y0, BX
	ANDL      R13, BX
	ORL       BX, R11     // and bytes >= 0x80
	VPMOVMSKB Y2, AX
	NOTL      CX
	ANDL      CX, AX      // unescaped quotes
	ORL       R11, AX
	JNZ       found
	TESTL     R10, R10
	JNZ       fail
	ADDQ      $32, DI
	JMP       loop

found:
	// The first unescaped quote closes the string if no error comes
	// at or before it; so with canon is a stop a place to return to.
	BSFL  AX, CX
	MOVL  AX, R11
	DECL  R11
	XORL  AX, R11         // bits up to the quote
	TESTL R11, R10
	JNZ   fail
	ADDQ  CX, DI
	MOVQ  DI, ret+40(FP)
	VZEROUPPER
	RET

ustart:
	// With canon, the backslash of a \u ended the last block.
	DECQ DI
	MOVQ DI, ret+40(FP)
	VZEROUPPER
	RET

tail:
	// Fewer than 32 bytes left: the last 32 bytes of b go to the stack,
	// followed by 32 zero bytes (control bytes: errors, and no quote),
	// and the block is loaded from the stack at the byte for DI.
	CMPQ    DI, DX
	JAE     fail
	VMOVDQU -32(SI)(DX*1), Y0
	VMOVDQU Y0, 0(SP)
	VMOVDQU Y15, 32(SP)
	MOVQ    DI, AX
	SUBQ    DX, AX
	VMOVDQU 32(SP)(AX*1), Y0
	JMP     block

fail:
	VZEROUPPER

fail0:
	MOVQ $-1, ret+40(FP)
	RET

// func nextSpecialAVX2(b []byte, i int) int
//
// The index of the first '"', '\\' or control byte at or after b[i] in
// the whole 32-byte blocks from i, or the index of the first block that
// would run past the end of b when they hold none.
TEXT ·nextSpecialAVX2(SB), NOSPLIT, $0-40
	MOVQ    b_base+0(FP), SI
	MOVQ    b_len+8(FP), DX
	MOVQ    i+24(FP), DI
	VMOVDQU quoteC<>(SB), Y8
	VMOVDQU slashC<>(SB), Y9
	VMOVDQU ctlC<>(SB), Y10

plain:
	LEAQ      32(DI), AX
	CMPQ      AX, DX
	JA        done
	VMOVDQU   (SI)(DI*1), Y0
	VPCMPEQB  Y0, Y8, Y1
	VPCMPEQB  Y0, Y9, Y2
	VPMINUB   Y0, Y10, Y3
	VPCMPEQB  Y0, Y3, Y3
	VPOR      Y1, Y2, Y1
	VPOR      Y1, Y3, Y1
	VPMOVMSKB Y1, AX
	TESTL     AX, AX
	JNZ       stop
	ADDQ      $32, DI
	JMP       plain

stop:
	BSFL AX, CX
	ADDQ CX, DI

done:
	MOVQ DI, ret+32(FP)
	VZEROUPPER
	RET
