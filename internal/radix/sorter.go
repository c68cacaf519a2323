package radix

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// A Sorter sorts float32 and float64 keys like Float32s and Float64s (or
// SortedFloat32s and SortedFloat64s), with the digit width that sorted
// fastest on this machine for inputs of about the same size. The best
// width depends on the cores: on some, the 2048 buckets of 11-bit digits
// cost three times as much per key as the 256 of 8-bit digits, which then
// win despite their extra pass; on others 11-bit digits win at every size
// that fits in cache.
//
// The width is measured once per key type and size class (the power of two
// at or above len(x)), at the first sort of that class: both widths sort
// the same normally distributed keys of that size (at most 2^21), in
// turns, 3 to 16 times, and the faster by its best time is kept. A
// measurement sorts about 2^20 keys with each width for classes up to
// 2^18 keys (10 to 30 ms for float32 keys), and three times the class
// size above, up to about 100 ms for float32 and 250 ms for float64 keys
// at 2^21 keys and above.
//
// The zero Sorter measures; [NewSorterWidth] returns one that does not. A
// Sorter is safe for concurrent use and must not be copied after first
// use.
type Sorter struct {
	fixed    Width
	widths32 [33]measured
	widths64 [33]measured
}

// measured is the width chosen for one size class.
type measured struct {
	once sync.Once
	w    Width
}

// NewSorter returns a Sorter that measures the best width at first use of
// each size class. It is the same as a new zero Sorter.
func NewSorter() *Sorter { return new(Sorter) }

// NewSorterWidth returns a Sorter that always sorts with digits of width
// w, which must be Width8 or Width11.
func NewSorterWidth(w Width) *Sorter {
	if w != Width8 && w != Width11 {
		panic("radix: digit width must be 8 or 11")
	}
	return &Sorter{fixed: w}
}

// Float32s sorts x as the package function Float32s does, with the width
// that s chose for len(x) keys (measuring it first at the first use of
// the size class), and returns the scratch buffer for reuse.
func (s *Sorter) Float32s(x []float32, scratch []uint32) []uint32 {
	_, scratch = s.SortedFloat32s(x, x, scratch)
	return scratch
}

// Float64s sorts x as the package function Float64s does, with the width
// that s chose for len(x) keys.
func (s *Sorter) Float64s(x []float64, scratch []uint64) []uint64 {
	_, scratch = s.SortedFloat64s(x, x, scratch)
	return scratch
}

// SortedFloat32s writes src sorted into dst as the package function
// SortedFloat32s does, with the width that s chose for len(src) keys, and
// returns dst and the scratch buffer for reuse.
func (s *Sorter) SortedFloat32s(dst, src []float32, scratch []uint32) ([]float32, []uint32) {
	if len(src) <= pdqMax32 {
		return sorted32(dst, src, scratch, Width11)
	}
	return sorted32(dst, src, scratch, s.Width32(len(src)))
}

// SortedFloat64s is SortedFloat32s for float64 values.
func (s *Sorter) SortedFloat64s(dst, src []float64, scratch []uint64) ([]float64, []uint64) {
	if len(src) <= pdqMax64 {
		return sorted64(dst, src, scratch, Width11)
	}
	return sorted64(dst, src, scratch, s.Width64(len(src)))
}

// Width32 returns the digit width s sorts n float32 keys with, measuring
// it first if n is the first size of its class.
func (s *Sorter) Width32(n int) Width {
	if s.fixed != 0 {
		return s.fixed
	}
	m := &s.widths32[sizeClass(n)]
	m.once.Do(func() { m.w = measure32(measureSize(n)) })
	return m.w
}

// Width64 is Width32 for float64 keys.
func (s *Sorter) Width64(n int) Width {
	if s.fixed != 0 {
		return s.fixed
	}
	m := &s.widths64[sizeClass(n)]
	m.once.Do(func() { m.w = measure64(measureSize(n)) })
	return m.w
}

// sizeClass returns k such that 2^(k−1) < n ≤ 2^k, for n ≥ 1.
func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

// maxMeasured is the largest number of keys a measurement sorts: sizes
// beyond it are all far out of the cores' own caches.
const maxMeasured = 1 << 21

// measureSize returns the number of keys that measure the class of n.
func measureSize(n int) int { return min(1<<sizeClass(n), maxMeasured) }

// measureRounds returns how many times each width sorts n keys in a
// measurement: enough for about 2^20 keys, at least 3 and at most 16.
func measureRounds(n int) int { return min(max(1<<20/n, 3), 16) }

// measure32 times both widths on the same n float32 keys and returns the
// faster.
func measure32(n int) Width {
	rng := rand.New(rand.NewPCG(uint64(n), 32))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 1e3)
	}
	dst := make([]float32, n)
	scratch := make([]uint32, n)
	clear(dst) // fault their pages in before the timing
	clear(scratch)
	return faster(measureRounds(n), func(w Width) {
		sorted32(dst, src, scratch, w)
	})
}

// measure64 is measure32 for float64 keys.
func measure64(n int) Width {
	rng := rand.New(rand.NewPCG(uint64(n), 64))
	src := make([]float64, n)
	for i := range src {
		src[i] = rng.NormFloat64() * 1e3
	}
	dst := make([]float64, n)
	scratch := make([]uint64, n)
	clear(dst)
	clear(scratch)
	return faster(measureRounds(n), func(w Width) {
		sorted64(dst, src, scratch, w)
	})
}

// faster runs sort with each width in turns, rounds times, and returns
// the width of the shortest run. The runs are timed by the CPU time of the
// goroutine's thread (on Linux; elsewhere by the wall clock), so that time
// taken by other processes and goroutines does not count, and the shortest
// leaves out the first round's page faults and the runs that other work
// on the machine slowed down through the shared caches.
func faster(rounds int, sort func(Width)) Width {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := newClock()
	widths := [2]Width{Width8, Width11}
	best := [2]time.Duration{1<<63 - 1, 1<<63 - 1}
	for range rounds {
		for i, w := range widths {
			start := now()
			sort(w)
			if d := now() - start; d < best[i] {
				best[i] = d
			}
		}
	}
	if best[0] < best[1] {
		return Width8
	}
	return Width11
}

// wallClock returns a clock of the time since the call.
func wallClock() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}
