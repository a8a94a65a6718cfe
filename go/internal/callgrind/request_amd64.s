#include "textflag.h"

// func request(args *[6]uint64, def uint64) uint64
//
// Valgrind's client-request sequence for amd64 (valgrind.h): AX points at the request and
// its arguments, DX holds the default and returns the answer. The four rotations of DI add
// up to 128 bits and XCHGQ BX, BX changes nothing, so natively the sequence is a no-op that
// returns the default; valgrind recognises it and answers the request.
TEXT ·request(SB), NOSPLIT, $0-24
	MOVQ args+0(FP), AX
	MOVQ def+8(FP), DX
	ROLQ $3, DI
	ROLQ $13, DI
	ROLQ $61, DI
	ROLQ $51, DI
	XCHGQ BX, BX
	MOVQ DX, ret+16(FP)
	RET
