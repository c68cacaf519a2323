package prefetch

import (
	"testing"
	"unsafe"
)

func TestLineSpan(t *testing.T) {
	for _, c := range []struct {
		addr, n, first, count uintptr
	}{
		{0, 1, 0, 1},
		{0, 64, 0, 1},
		{0, 65, 0, 2},
		{63, 1, 0, 1},
		{63, 2, 0, 2},
		{64, 64, 64, 1},
		{100, 352, 64, 7},  // a block of 352 bytes, unaligned: lines 64 to 448
		{128, 192, 128, 3}, // a sliding window, aligned
		{130, 192, 128, 4},
	} {
		first, count := lineSpan(c.addr, c.n)
		if first != c.first || count != c.count {
			t.Errorf("lineSpan(%d, %d) = %d, %d; want %d, %d", c.addr, c.n, first, count, c.first, c.count)
		}
	}
}

// TestRangeNeverFaults prefetches memory of every kind, none at all
// included: a prefetch is a hint, and must not fault where a load would.
func TestRangeNeverFaults(t *testing.T) {
	buf := make([]byte, 4096)
	Range(unsafe.Pointer(&buf[0]), uintptr(len(buf)))
	Range(unsafe.Pointer(&buf[17]), 1)
	var local [3]int64
	Range(unsafe.Pointer(&local), unsafe.Sizeof(local))
	Range(nil, 0)
	Range(nil, 256) // address 0: unmapped
	// The top of a 47-bit user address space, and past it. Not a
	// constant, so that the test builds where uintptr has 32 bits: the
	// conversion keeps the low bits there (and lines does nothing).
	top := uint64(1)<<47 - lineSize
	lines(uintptr(top), 2)
}

func BenchmarkRange(b *testing.B) {
	buf := make([]byte, 1<<16)
	for i := 0; b.Loop(); i++ {
		Range(unsafe.Pointer(&buf[(i*448)%(len(buf)-448)]), 352)
	}
}
