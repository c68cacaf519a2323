#include "textflag.h"

// func lines(addr, n uintptr)
TEXT ·lines(SB), NOSPLIT, $0-16
	MOVD addr+0(FP), R0
	MOVD n+8(FP), R1
loop:
	CBZ  R1, done
	PRFM (R0), PLDL1KEEP
	ADD  $64, R0
	SUB  $1, R1
	B    loop
done:
	RET
