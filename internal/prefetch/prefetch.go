// Package prefetch asks the processor to bring memory into its caches
// ahead of use.
//
// A loop that visits many objects scattered in memory, each a cache miss,
// waits for one miss after another: the processor cannot look far enough
// ahead to start the next object's miss while it works on this one.
// Prefetching the objects of the next few visits first lets it fetch them
// side by side, and the visits then find them in the cache.
//
// Go has no prefetch outside its runtime; this package issues the
// processor's instruction on amd64 and arm64, and does nothing elsewhere.
// A prefetch is a hint: it never faults, whatever the address, and reads
// nothing the program sees, so it is no memory access in the sense of the
// Go memory model or of the race detector. It may be given the address of
// memory another goroutine is writing.
package prefetch

import "unsafe"

// lineSize is the cache line size assumed: 64 bytes, that of the amd64
// and most arm64 processors. Where lines are larger, Range asks for some
// lines more than once, which costs little.
const lineSize = 64

// Range asks for the cache lines that hold the n bytes at p, from the
// first. It is best kept to the few lines that the next use reads, since
// each line asked for takes room in the cache and the processor's queue
// of misses.
func Range(p unsafe.Pointer, n uintptr) {
	if n == 0 {
		return
	}
	first, count := lineSpan(uintptr(p), n)
	lines(first, count)
}

// lineSpan returns the address of the first cache line that holds the n
// bytes at addr, n > 0, and how many lines hold them.
func lineSpan(addr, n uintptr) (first, count uintptr) {
	first = addr &^ (lineSize - 1)
	last := (addr + n - 1) &^ (lineSize - 1)
	return first, (last-first)/lineSize + 1
}
