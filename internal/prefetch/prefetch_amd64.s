#include "textflag.h"

// func lines(addr, n uintptr)
TEXT ·lines(SB), NOSPLIT, $0-16
	MOVQ addr+0(FP), AX
	MOVQ n+8(FP), CX
loop:
	TESTQ CX, CX
	JEQ   done
	PREFETCHT0 (AX)
	ADDQ  $64, AX
	DECQ  CX
	JMP   loop
done:
	RET
