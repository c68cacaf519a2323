package slidingwindow

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// ring holds a window's newest values raw: the last len() of them, the
// value at position p at index p mod capacity once it is full. A window of
// float32 values keeps them as float32, in half the memory.
//
// The values lie in chunks: a first chunk of up to headLen values, which
// starts at the size of the first values and doubles as they come; then
// chunks that double in size, from headLen values up to chunkLen; then
// chunks of chunkLen values each (the last one to the capacity). Each chunk
// past the first is allocated whole as it is reached and never moves. So
// a ring holds at most about twice its values, as one doubling slice
// would, but growing copies no value past the first headLen: a ring that
// grew by doubling one slice copied each value once more on the way, from
// memory long out of the cache, and left the old slices to the collector.
type ring struct {
	f64      []float64 // the first chunk
	f32      []float32
	more     *moreChunks // the chunks after the first; nil until it is full
	float32  bool
	capacity int64
}

// moreChunks holds the chunks of a ring after its first.
type moreChunks struct {
	f64 [][]float64
	f32 [][]float32
}

// headShift sets headLen, the most values of a ring's first chunk, the
// one that grows by copying: 256, 1 KiB of float32 values, as much as most
// thin streams hold. chunkShift sets chunkLen, the values of each chunk
// from index chunkLen on: 4096, 16 KiB of float32 values, a small step of
// memory for a ring of 2^20. Between them lie doublingChunks chunks of
// 256, 512, 1024 and 2048 values.
const (
	headShift      = 8
	headLen        = 1 << headShift
	chunkShift     = 12
	chunkLen       = 1 << chunkShift
	doublingChunks = chunkShift - headShift
)

// chunkOf reports the chunk that holds index i: 0 for the first.
func chunkOf(i int64) int64 {
	switch {
	case i < headLen:
		return 0
	case i < chunkLen:
		return int64(bits.Len64(uint64(i >> headShift)))
	}
	return doublingChunks + i>>chunkShift
}

// chunkStart reports the index of chunk j's first value.
func chunkStart(j int64) int64 {
	switch {
	case j == 0:
		return 0
	case j <= doublingChunks:
		return headLen << (j - 1)
	}
	return (j - doublingChunks) << chunkShift
}

// moreBytes is what a ring counts for its moreChunks besides the chunks.
const moreBytes = 48

// len reports how many values the ring holds.
func (r *ring) len() int64 {
	if r.more != nil {
		return headLen + tailLen(r.more.f64) + tailLen(r.more.f32)
	}
	return int64(len(r.f64) + len(r.f32))
}

// tailLen reports how many values the chunks after the first hold.
func tailLen[E float32 | float64](tail [][]E) int64 { return tailSize(tail, false) }

// room reports how many values the ring has room for without growing.
func (r *ring) room() int64 {
	n := int64(cap(r.f64) + cap(r.f32))
	if r.more != nil {
		n += tailSize(r.more.f64, true) + tailSize(r.more.f32, true)
	}
	return n
}

// tailSize reports how many values the chunks after the first hold, or
// with room have room for: every chunk but the last is full.
func tailSize[E float32 | float64](tail [][]E, room bool) int64 {
	k := len(tail)
	if k == 0 {
		return 0
	}
	last := len(tail[k-1])
	if room {
		last = cap(tail[k-1])
	}
	return chunkStart(int64(k)) - headLen + int64(last)
}

// valueBytes reports the bytes of one value as the ring keeps it.
func (r *ring) valueBytes() int64 {
	if r.float32 {
		return 4
	}
	return 8
}

// bytes reports the memory the ring holds: its values' room, and past the
// first chunk the list of the others.
func (r *ring) bytes() int {
	b := r.valueBytes() * r.room()
	if r.more != nil {
		b += moreBytes + 24*int64(cap(r.more.f64)+cap(r.more.f32))
	}
	return int(b)
}

// maxTail reports the most chunks after the first a ring of capacity
// values holds.
func maxTail(capacity int64) int64 {
	return chunkOf(max(0, capacity-1))
}

// growTail returns the capacity of the list of chunks after the first once
// it holds one more than now, holding n: it doubles, up to the most there
// can be.
func growTail(n, capacity int64) int64 {
	return min(maxTail(capacity), max(4, 2*n))
}

// maxOverhead reports the most bytes a ring of capacity values counts
// besides its values: the list of its chunks past the first.
func maxOverhead(capacity int64) int64 {
	if capacity <= headLen {
		return 0
	}
	return moreBytes + 24*maxTail(capacity)
}

// growth returns how many bytes more the ring holds once it keeps n more
// values, pushed at once: its first chunk doubles (at least to what they
// need, at most to headLen or its capacity) when they do not fit, and
// starts at the size of the first values, so that a stream of a few
// values holds only those; past it, the ring takes whole chunks.
func (r *ring) growth(n int64) int64 {
	need := min(r.len()+n, r.capacity)
	have := r.room()
	if need <= have {
		return 0
	}
	v := r.valueBytes()
	head := int64(cap(r.f64) + cap(r.f32))
	if need <= headLen {
		return (min(r.capacity, headLen, max(need, 2*head)) - head) * v
	}
	// The first chunk fills to headLen; chunks 1 to kt follow it, each
	// whole.
	grown := (headLen - head) * v
	kt := chunkOf(need - 1)
	var k0, c0 int64
	if r.more != nil {
		k0 = int64(len(r.more.f64) + len(r.more.f32))
		c0 = int64(cap(r.more.f64) + cap(r.more.f32))
	} else {
		grown += moreBytes
	}
	grown += (min(r.capacity, chunkStart(kt+1)) - chunkStart(k0+1)) * v
	c := c0
	for c < kt {
		c = growTail(c, r.capacity)
	}
	return grown + 24*(c-c0)
}

// push appends vals, the values at positions pos, pos+1, … of the window,
// and returns the position after them.
func push[T float32 | float64](r *ring, pos int64, vals []T) int64 {
	var tail32 [][]float32
	var tail64 [][]float64
	if r.float32 {
		r.f32, tail32, pos = pushTo(r.f32, r.tail32(), r.capacity, pos, vals)
	} else {
		r.f64, tail64, pos = pushTo(r.f64, r.tail64(), r.capacity, pos, vals)
	}
	if tail32 != nil || tail64 != nil {
		m := r.moreChunks()
		m.f32, m.f64 = tail32, tail64
	}
	return pos
}

// extended returns a ring that holds r's values, then vals pushed at
// position pos (r's), leaving the values r holds as they are. It shares
// r's chunks when vals fit in the room past r's values, where pushing
// writes only past what r holds (the list of chunks is copied: pushing
// may lengthen its last); else pushing overwrites r's oldest values, and
// it copies r's chunks first.
func extended[E float32 | float64](r *ring, pos int64, vals []E) ring {
	e := *r
	if r.more != nil {
		e.more = &moreChunks{f64: cloneCap(r.more.f64), f32: cloneCap(r.more.f32)}
	}
	if r.len()+int64(len(vals)) > r.capacity {
		e.f64, e.f32 = cloneCap(r.f64), cloneCap(r.f32)
		if e.more != nil {
			for i, c := range e.more.f64 {
				e.more.f64[i] = cloneCap(c)
			}
			for i, c := range e.more.f32 {
				e.more.f32[i] = cloneCap(c)
			}
		}
	}
	push(&e, pos, vals)
	return e
}

// cloneCap returns a copy of s of s's capacity, nil for nil: a ring's
// layout follows its chunks' capacities.
func cloneCap[S ~[]E, E any](s S) S {
	if s == nil {
		return nil
	}
	c := make(S, len(s), cap(s))
	copy(c, s)
	return c
}

// tail32 and tail64 return the ring's chunks after the first, if any.
func (r *ring) tail32() [][]float32 {
	if r.more == nil {
		return nil
	}
	return r.more.f32
}

func (r *ring) tail64() [][]float64 {
	if r.more == nil {
		return nil
	}
	return r.more.f64
}

// moreChunks returns the ring's chunks after the first, made if need be.
func (r *ring) moreChunks() *moreChunks {
	if r.more == nil {
		r.more = new(moreChunks)
	}
	return r.more
}

func pushTo[E, T float32 | float64](head []E, tail [][]E, capacity, pos int64, vals []T) ([]E, [][]E, int64) {
	for len(vals) > 0 {
		if n, limit := int64(len(head)), min(capacity, headLen); n < limit {
			k := min(int64(len(vals)), limit-n)
			if need := n + k; need > int64(cap(head)) {
				grown := make([]E, n, min(limit, max(need, 2*int64(cap(head)))))
				copy(grown, head)
				head = grown
			}
			head = head[:n+k]
			convert(head[n:], vals[:k])
			vals = vals[k:]
			pos += k
			continue
		}
		if l := headLen + tailLen(tail); l < capacity {
			j := len(tail) - 1
			if j < 0 || len(tail[j]) == cap(tail[j]) {
				if len(tail) == cap(tail) {
					grown := make([][]E, len(tail), growTail(int64(cap(tail)), capacity))
					copy(grown, tail)
					tail = grown
				}
				// l is where chunk len(tail)+1 starts.
				next := chunkStart(int64(len(tail)) + 2)
				tail = append(tail, make([]E, 0, min(next, capacity)-l))
				j++
			}
			c := tail[j]
			n := len(c)
			k := min(len(vals), cap(c)-n)
			c = c[:n+k]
			convert(c[n:], vals[:k])
			tail[j] = c
			vals = vals[k:]
			pos += int64(k)
			continue
		}
		// Full: overwrite the oldest values.
		dst := at(head, tail, pos%capacity)
		k := min(len(vals), len(dst))
		convert(dst[:k], vals[:k])
		vals = vals[k:]
		pos += int64(k)
	}
	return head, tail, pos
}

// at returns the values from index i to the end of its chunk.
func at[E float32 | float64](head []E, tail [][]E, i int64) []E {
	if i < headLen {
		return head[i:]
	}
	j := chunkOf(i)
	return tail[j-1][i-chunkStart(j):]
}

// eachRun calls fn with the values from index from to index to (not
// included), a chunk's run at a time.
func eachRun[E float32 | float64](head []E, tail [][]E, from, to int64, fn func([]E)) {
	for from < to {
		run := at(head, tail, from)
		run = run[:min(int64(len(run)), to-from)]
		fn(run)
		from += int64(len(run))
	}
}

// eachOldestFirst calls fn with the newest n values (n ≤ the ring's
// length) of a ring at position pos, oldest first, a run at a time.
func eachOldestFirst[E float32 | float64](head []E, tail [][]E, capacity, n, pos int64, fn func([]E)) {
	l := int64(len(head)) + tailLen(tail)
	if l < capacity {
		eachRun(head, tail, l-n, l, fn)
		return
	}
	start := (pos - n) % capacity
	if start+n <= capacity {
		eachRun(head, tail, start, start+n, fn)
		return
	}
	eachRun(head, tail, start, capacity, fn)
	eachRun(head, tail, 0, start+n-capacity, fn)
}

// convert copies src into dst, which is as long, converting each value.
func convert[E, T float32 | float64](dst []E, src []T) {
	switch s := any(src).(type) {
	case []float64:
		if d, ok := any(dst).([]float64); ok {
			copy(d, s)
			return
		}
	case []float32:
		if d, ok := any(dst).([]float32); ok {
			copy(d, s)
			return
		}
	}
	for i, v := range src {
		dst[i] = E(v)
	}
}

// last appends the newest n values (n ≤ len()) to dst, oldest first; pos
// is the window's position.
func (r *ring) last(dst []float64, n, pos int64) []float64 {
	dst = slices.Grow(dst, int(n))
	if r.float32 {
		return appendOldestFirst(dst, r.f32, r.tail32(), r.capacity, n, pos)
	}
	return appendOldestFirst(dst, r.f64, r.tail64(), r.capacity, n, pos)
}

// appendOldestFirst appends the newest n values of the ring of chunks
// head and tail, of capacity values at position pos, widened, oldest
// first.
func appendOldestFirst[E float32 | float64](dst []float64, head []E, tail [][]E, capacity, n, pos int64) []float64 {
	eachOldestFirst(head, tail, capacity, n, pos, func(run []E) { dst = appendWide(dst, run) })
	return dst
}

// appendWide appends src, widened to float64, to dst.
func appendWide[E float32 | float64](dst []float64, src []E) []float64 {
	if s, ok := any(src).([]float64); ok {
		return append(dst, s...)
	}
	n := len(dst)
	dst = append(dst, make([]float64, len(src))...)
	convert(dst[n:], src)
	return dst
}

// appendEncoded appends the width of the ring's values (4 or 8 bytes), its
// length as a uvarint and its values, oldest first, little-endian at their
// precision, for a window at position pos (the encoding's width and ring);
// or, with since ≥ 0, past the oldest value it holds, since and the
// values from position since on, preceded by their count (version 4).
func (r *ring) appendEncoded(dst []byte, pos, since int64) []byte {
	if r.float32 {
		return appendValues(dst, r.f32, r.tail32(), r.capacity, r.len(), pos, since)
	}
	return appendValues(dst, r.f64, r.tail64(), r.capacity, r.len(), pos, since)
}

// appendValues appends the width of E, then the newest n values of the
// ring of chunks head and tail, or with since ≥ 0 since and the values
// from position since on (see appendEncoded), preceded by their count.
func appendValues[E float32 | float64](dst []byte, head []E, tail [][]E, capacity, n, pos, since int64) []byte {
	switch any(head).(type) {
	case []float32:
		dst = append(dst, 4)
	default:
		dst = append(dst, 8)
	}
	if since >= 0 {
		dst = binary.AppendUvarint(dst, uint64(since))
		n = pos - since
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	bulk := hostLittleEndian()
	eachOldestFirst(head, tail, capacity, n, pos, func(run []E) { dst = appendRun(dst, run, bulk) })
	return dst
}

// appendRun appends the values of run to dst, little-endian at their
// precision. With bulk, it copies their memory whole, which is their
// encoding on a little-endian host (hostLittleEndian).
func appendRun[E float32 | float64](dst []byte, run []E, bulk bool) []byte {
	if bulk {
		return append(dst, bytesOf(run)...)
	}
	k := len(dst)
	switch run := any(run).(type) {
	case []float32:
		dst = slices.Grow(dst, 4*len(run))[:k+4*len(run)]
		b := dst[k:]
		for i, v := range run {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case []float64:
		dst = slices.Grow(dst, 8*len(run))[:k+8*len(run)]
		b := dst[k:]
		for i, v := range run {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	}
	return dst
}

// readRun reads the values of run from b, as appendRun wrote them (bulk
// likewise), and reports whether they are all finite.
func readRun[E float32 | float64](run []E, b []byte, bulk bool) bool {
	if bulk {
		copy(bytesOf(run), b)
	} else {
		switch run := any(run).(type) {
		case []float32:
			for i := range run {
				run[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case []float64:
			for i := range run {
				run[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		}
	}
	finite := true
	for _, v := range run {
		finite = finite && v-v == 0
	}
	return finite
}

// hostLittleEndian reports whether this machine keeps its values
// little-endian, as the encoding does: its values' bytes then are their
// encoding, copied whole.
func hostLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// bytesOf returns the memory of vals as bytes, in the host's order.
func bytesOf[E float32 | float64](vals []E) []byte {
	if len(vals) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals)*int(unsafe.Sizeof(vals[0])))
}

// keepFloat32 turns a ring of float64 values that are all float32 values
// into one that keeps them as float32.
func (r *ring) keepFloat32() {
	if r.float32 {
		return
	}
	r.f32 = narrow(r.f64)
	r.f64 = nil
	if r.more != nil {
		r.more.f32 = make([][]float32, len(r.more.f64), cap(r.more.f64))
		for i, c := range r.more.f64 {
			r.more.f32[i] = narrow(c)
		}
		r.more.f64 = nil
	}
	r.float32 = true
}

// narrow returns a float32 copy of c, as long and with as much room.
func narrow(c []float64) []float32 {
	n := make([]float32, len(c), cap(c))
	convert(n, c)
	return n
}
