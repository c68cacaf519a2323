package items

import (
	"encoding/binary"
	"testing"
)

// The SipHash-2-4 test vectors of the reference implementation: key
// 00 01 … 0f, message 00 01 … (n−1) for n = 0, 1, ….
var sipVectors = []uint64{
	0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a,
	0x85676696d7fb7e2d, 0xcf2794e0277187b7, 0x18765564cd99a68d,
	0xcbc9466e58fee3ce, 0xab0200f58b01d137, 0x93f5f5799a932462,
	0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
	0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee,
	0xa129ca6149be45e5, 0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794,
}

func TestSipHashVectors(t *testing.T) {
	var key Key
	for i := range key {
		key[i] = byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:8]), binary.LittleEndian.Uint64(key[8:])
	msg := make([]byte, len(sipVectors))
	for i := range msg {
		msg[i] = byte(i)
	}
	for n, want := range sipVectors {
		if got := sipHash24(k0, k1, msg[:n]); got != want {
			t.Errorf("SipHash-2-4 of %d bytes = %#x, want %#x", n, got, want)
		}
	}
}
