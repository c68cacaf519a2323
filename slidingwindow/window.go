// Package slidingwindow answers quantile and frequency queries over the
// last n values of a stream, for any n up to the window's capacity N, with
// rank and count errors within ε·n — not ε·N (count-based windows).
//
// It follows Arasu and Manku, "Approximate counts and quantiles over
// sliding windows" (PODS 2004) — levels of blocks, each block a summary
// with its level's error, old blocks expiring — arranged as Lin, Lu, Xu and
// Yu's n-of-N summaries (ICDE 2004): recent data sits in small blocks and
// older data in geometrically larger ones, so that the block cut by the
// start of any last-n range is small against n.
//
// # Layout
//
// The newest values are kept raw in a ring of R values; a query with n ≤ R
// is answered exactly from it. Older values live in sealed blocks: level-0
// blocks of s0 values, and level-j blocks of s0·2^j values made by joining
// two adjacent level-(j−1) blocks once the joined block's size is at most
// ε·d/8, where d is how far back (in values) its newest value lies. Each
// block holds a GK summary (gksketch) and a count summary (lossy) with
// relative error ε_j = (ε/2)(1 − 1/(2(j+1))) < ε/2, its first and last
// arrival times, and its position. Blocks older than N values expire.
//
// When N is small against 1/ε² (the default N = 2^20 with ε = 0.001 is), the
// blocks would need more memory than the raw values, so R = N and every
// answer is exact; Mode reports which.
//
// # Time windows
//
// Every value has an arrival time, forced monotonic per window (a time
// older than the newest is taken as the newest). Blocks keep the arrival
// times of their first and last values; the raw ring keeps marks — the
// position and the first and last arrival times of a run of values — with
// a new mark at most every R/4096 values (so at most about 4096 marks), and
// one value's time exactly at each mark's start. Since(t) answers over
// every value that arrived at or after t: it starts at the first mark or
// block whose last value arrived at or after t, so it covers every such
// value and possibly some older ones of that mark or block (the slack, at
// most one mark or block, reported), and it reports how many values it
// covers and the exact arrival times of the first and the last.
//
// # Error of a last-n answer (n > R)
//
// The answer covers the open values (exact, from the ring) and the sealed
// blocks inside the range; the block B cut by the range's start is left
// out, so every answer is a value among the last n. The covered set misses
// x < |B| of the last n values. B lies at distance d < n, so
// |B| ≤ max(s0, εd/8), and R = 8·s0/ε gives x ≤ εn/8. Block summaries'
// absolute errors add to at most (ε/2)·n, so the rank error is at most
// (ε/2)n + x/2 + 1 < 0.6·ε·n + 1 (the quantile aims x/2 ranks low), and
// count bounds widen by x. Every answer carries its bounds.
package slidingwindow

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"streamd/gksketch"
	"streamd/internal/radix"
	"streamd/lossy"
)

// Mode says how a Window keeps its values.
type Mode int

// The modes.
const (
	// Exact keeps the last N values raw: every answer is exact.
	Exact Mode = iota
	// Blocks keeps the newest values raw and older ones in block summaries.
	Blocks
)

// ErrRange is returned by queries for n outside [1, Capacity].
var ErrRange = errors.New("slidingwindow: n out of range")

// Window is a count-based sliding window summary of capacity N.
type Window struct {
	eps      float64
	capacity int64
	mode     Mode
	s0       int64 // level-0 block size (Blocks mode)
	pos      int64 // values added so far

	ring ring // the newest values raw

	blocks []block // oldest first
	lastT  int64   // arrival time of the newest value
	firstT int64   // arrival time of the oldest value not yet in a block

	// marks are the arrival times of the values in the ring, oldest first.
	// The newest mark's last time is lastT (markLast), which add keeps
	// in the Window alone, with the newest mark's start: a batch of a
	// thin stream then touches the Window and the ring, and not the
	// marks, which are apart from both.
	marks     []mark
	markStart int64 // start of the newest mark

	bufs *sealBuffers // nil until the first block is sealed
}

// sealBuffers are the buffers that seal sorts and digests a block in,
// kept from one block to the next: a window in Exact mode never needs
// them.
type sealBuffers struct {
	sort []float64
	keys []uint64
	runs []lossy.Run
}

type block struct {
	level       int
	start       int64 // position of its first value
	size        int64
	first, last int64 // arrival times, Unix nanoseconds
	q           gksketch.Summary
	f           *lossy.Summary
}

func (b *block) end() int64 { return b.start + b.size }

// mark records the arrival times of the values from position start up to
// the next mark's start (or the newest value): first is the time of the
// value at start, last that of the mark's newest value.
type mark struct {
	start       int64
	first, last int64
}

// markLast returns the arrival time of the newest value of mark i.
func (w *Window) markLast(i int) int64 {
	if i == len(w.marks)-1 {
		return w.lastT
	}
	return w.marks[i].last
}

// markGap returns how many values the newest mark holds before a batch
// starts a new one: at most about maxMarks marks for a full ring.
func (w *Window) markGap() int64 { return max(1, w.ring.capacity/maxMarks) }

// maxMarks is about the most marks a full ring holds.
const maxMarks = 4096

// NewFloat32 is New for a window of float32 values (a float32 stream's):
// it keeps its raw values as float32, in half the memory. The values given
// to Add must be float32 values.
func NewFloat32(eps float64, n int64) (*Window, error) {
	w, err := New(eps, n)
	if err != nil {
		return nil, err
	}
	w.ring.float32 = true
	return w, nil
}

// KeepFloat32 makes w, a window of float32 values, keep its raw values as
// float32, as NewFloat32 does: for a window decoded from its encoding,
// which does not say.
func (w *Window) KeepFloat32() { w.ring.keepFloat32() }

// New returns an empty window of capacity n (≥ 1) and error ε in (0, 1).
func New(eps float64, n int64) (*Window, error) {
	if !(eps > 0 && eps < 1) {
		return nil, fmt.Errorf("slidingwindow: epsilon %v outside (0, 1)", eps)
	}
	if n < 1 {
		return nil, fmt.Errorf("slidingwindow: capacity %d below 1", n)
	}
	w := &Window{eps: eps, capacity: n}
	w.s0 = max(16, int64(math.Ceil(1/eps)))
	r := int64(math.Ceil(8 * float64(w.s0) / eps))
	if r >= n || blockEntries(eps, n, w.s0, r)*3 >= n {
		w.mode, w.ring.capacity = Exact, n
	} else {
		w.mode, w.ring.capacity = Blocks, r
	}
	return w, nil
}

// blockEntries estimates the tuples and entries Blocks mode would hold.
func blockEntries(eps float64, n, s0, r int64) int64 {
	total := r
	perBlock := int64(4 / eps)
	for s := s0; s <= n; s *= 2 {
		count := min(n/s, int64(8/eps))
		total += count * min(s, perBlock) * 2
	}
	return total
}

// Epsilon reports ε.
func (w *Window) Epsilon() float64 { return w.eps }

// Capacity reports N, the largest n a query may ask for.
func (w *Window) Capacity() int64 { return w.capacity }

// RawCapacity reports R, the most values the window keeps raw: the
// largest last-n (or time-window) range it answers exactly.
func (w *Window) RawCapacity() int64 { return w.ring.capacity }

// Mode reports how w keeps its values.
func (w *Window) Mode() Mode { return w.mode }

// Count reports how many values the window holds: min(added, N).
func (w *Window) Count() int64 { return min(w.pos, w.capacity) }

// Added reports how many values were ever added.
func (w *Window) Added() int64 { return w.pos }

// Blocks reports the number of sealed blocks.
func (w *Window) Blocks() int { return len(w.blocks) }

// Entries reports the raw values, time marks and summary entries held.
func (w *Window) Entries() int {
	e := int(w.ring.len()) + len(w.marks)
	for i := range w.blocks {
		e += w.blocks[i].q.Len() + w.blocks[i].f.Len()
	}
	return e
}

// Bytes reports the memory held by values, entries and the buffers used to
// seal blocks.
func (w *Window) Bytes() int {
	b := w.ring.bytes() + 24*cap(w.marks)
	if bb := w.bufs; bb != nil {
		b += 8*cap(bb.sort) + 8*cap(bb.keys) + 16*cap(bb.runs)
	}
	for i := range w.blocks {
		b += w.blocks[i].q.Bytes() + w.blocks[i].f.Bytes() + blockOverhead
	}
	return b
}

// Growth returns how many bytes more Bytes counts once n more values are
// added, for what grows in steps: the ring of raw values, whose first
// chunk starts at the first values' count and doubles (up to 256 values
// or R) when they do not fit, and which then takes whole chunks. It is
// exact in Exact mode; in Blocks mode Add splits values at block
// boundaries, so the first chunk may double in more steps than one push
// of n would take. What grows beside the ring, its time marks and, in
// Blocks mode, its block summaries, is small against it and left to Bytes
// to measure.
func (w *Window) Growth(n int64) int64 { return w.ring.growth(n) }

// blockOverhead is what Bytes counts for a block besides its entries: the
// block itself and the lossy summary's header.
const blockOverhead = 64

// Footprint returns the bytes w holds once full, as Bytes counts them.
//
// In Exact mode that is vN (v = 8 bytes a value, 4 for NewFloat32), the
// list of the ring's chunks and its time marks, a bound: the ring never
// grows past N values, nor its marks past twice maxMarks.
// In Blocks mode it is an estimate: the ring and the sealing buffers, and
// for each level j (blocks of s_j = s0·2^j values, up to s_j ≤ εn/8, since
// two blocks join only at a distance of 8·s_{j+1}/ε) at most
// min(⌈n/s_j⌉+1, ⌈8/ε⌉+2) blocks — a block stays at level j only while
// 2·s_j > ε·d/8, so a level's blocks lie within 16·s_j/ε values of the
// newest and the level below's within half that — each holding, with the
// room its merge left, min(2·s_j, 2^(j/2)·2/ε) GK tuples and
// min(3·s_j, 8/ε) lossy entries. The per-block sizes are what blocks hold
// in practice (their proven sizes grow as j²/ε and are far larger), so the
// estimate is checked by the tests on every arrival order, and it is not a
// bound: a caller that needs one measures Bytes as the window fills.
func (w *Window) Footprint() int64 {
	eps, n := w.eps, w.capacity
	v := int64(8)
	if w.ring.float32 {
		v = 4
	}
	// The ring's arrival-time marks: at most about maxMarks, in a slice
	// that append grows to at most twice that.
	marks := 24 * 2 * (min(maxMarks, n) + 2)
	if w.mode == Exact {
		return v*n + marks + maxOverhead(n)
	}
	total := v*w.ring.capacity + maxOverhead(w.ring.capacity) + marks + 32*w.s0
	perLevel := int64(math.Ceil(8/eps)) + 2
	top := max(2*w.s0, int64(eps*float64(n)/8))
	for j, s := 0, w.s0; s <= top; j, s = j+1, 2*s {
		count := min((n+s-1)/s+1, perLevel)
		tuples := min(2*s, int64(math.Ceil(math.Pow(2, float64(j)/2)*2/eps)))
		entries := min(3*s, int64(math.Ceil(8/eps)))
		total += count * (24*(tuples+entries) + blockOverhead)
	}
	return total
}

// levelError returns ε_j, the relative error of a level-j block.
func (w *Window) levelError(j int) float64 {
	return w.eps / 2 * (1 - 1/(2*float64(j+1)))
}

// Add appends values, all arriving at time t (Unix nanoseconds; 0 if
// unknown). A t older than the newest value's arrival time is taken as that
// time: arrival times never go back. Values must not be NaN.
func (w *Window) Add(t int64, values ...float64) { add(w, t, values) }

// AddFloat32 is Add for float32 values.
func (w *Window) AddFloat32(t int64, values []float32) { add(w, t, values) }

func add[T float32 | float64](w *Window, t int64, values []T) {
	if len(values) == 0 {
		return
	}
	t = max(t, w.lastT)
	if k := len(w.marks); k == 0 || w.pos-w.markStart >= w.markGap() {
		if k > 0 {
			w.marks[k-1].last = w.lastT // no longer the newest
		}
		w.marks = append(w.marks, mark{start: w.pos, first: t, last: t})
		w.markStart = w.pos
	}
	for len(values) > 0 {
		k := int64(len(values))
		if w.mode == Blocks {
			// Stop at the next level-0 block boundary to seal it.
			k = min(k, w.s0-w.pos%w.s0)
		}
		if w.pos%w.s0 == 0 || w.firstT == 0 {
			w.firstT = t
		}
		w.pos = push(&w.ring, w.pos, values[:k])
		values = values[k:]
		w.lastT = t
		if w.mode == Blocks && w.pos%w.s0 == 0 {
			w.seal()
		}
	}
	// Drop the marks whose values have all left the ring.
	oldest := w.pos - w.ring.len()
	k := 0
	for k+1 < len(w.marks) && w.marks[k+1].start <= oldest {
		k++
	}
	w.marks = w.marks[k:]
}

// AppendNewest appends the newest n values, which must be at most the
// values the window keeps raw (RawLen), to dst, oldest first, widened to
// float64, and returns dst.
func (w *Window) AppendNewest(dst []float64, n int64) []float64 {
	if n < 0 || n > w.ring.len() {
		panic(fmt.Sprintf("slidingwindow: the newest %d of %d raw values", n, w.ring.len()))
	}
	return w.ring.last(dst, n, w.pos)
}

// RawLen reports how many values the window keeps raw: min(Added,
// RawCapacity).
func (w *Window) RawLen() int64 { return w.ring.len() }

// last copies the newest n values (n ≤ the ring's length) into dst,
// oldest first.
func (w *Window) last(dst []float64, n int64) []float64 {
	return w.ring.last(dst[:0], n, w.pos)
}

// seal turns the newest s0 values into a level-0 block, joins blocks that
// have aged enough, and expires blocks older than the capacity.
func (w *Window) seal() {
	if w.bufs == nil {
		w.bufs = new(sealBuffers)
	}
	bb := w.bufs
	bb.sort = w.last(bb.sort, w.s0)
	bb.keys = radix.Float64s(bb.sort, bb.keys)
	e := int64(w.levelError(0) * float64(w.s0))
	b := block{
		level: 0, start: w.pos - w.s0, size: w.s0, first: w.firstT, last: w.lastT,
		q: gksketch.FromSorted(bb.sort, float64(2*e+1)),
	}
	bb.runs = lossy.AppendRuns(bb.runs[:0], bb.sort)
	b.f = lossy.FromRuns(w.eps, w.s0, bb.runs, e)
	w.blocks = append(w.blocks, b)
	w.join()
	w.expire()
}

// join merges adjacent blocks of the same level while the merged block is
// at most ε·d/8 values, d being the distance from the newest value to the
// merged block's newest value.
//
// Blocks run oldest first with levels that never rise, so each level is
// one run of blocks. Within a run all pairs have the same size and the
// oldest pair lies farthest back: if it may not merge, no pair of its level
// may. So join checks only the first pair of each level, lowest level
// first (a merge makes a block of the next level, checked next): O(levels)
// per call, plus the merges.
func (w *Window) join() {
	for level := 0; len(w.blocks) > 0 && level <= w.blocks[0].level; level++ {
		// The run of this level starts at the first block of level ≤ level.
		i := sort.Search(len(w.blocks), func(k int) bool { return w.blocks[k].level <= level })
		for i+1 < len(w.blocks) && w.blocks[i].level == level && w.blocks[i+1].level == level {
			a, b := &w.blocks[i], &w.blocks[i+1]
			if float64(a.size+b.size) > w.eps*float64(w.pos-b.end())/8 {
				break
			}
			w.blocks[i] = w.merged(a, b)
			w.blocks = append(w.blocks[:i+1], w.blocks[i+2:]...)
			// The merged block ends the run of level+1; the next pair of
			// this level starts right after it.
			i++
		}
	}
}

// merged returns the block joining the adjacent blocks a and b of one level.
func (w *Window) merged(a, b *block) block {
	level := a.level + 1
	size := a.size + b.size
	e := int64(w.levelError(level) * float64(size))
	q := gksketch.Merge(&a.q, &b.q)
	q.Compress(e)
	f := a.f.Copy()
	f.MergeCounts(b.f)
	f.Prune(e)
	return block{level: level, start: a.start, size: size, first: a.first, last: b.last, q: q, f: f}
}

// expire drops blocks entirely older than the last N values.
func (w *Window) expire() {
	k := 0
	for k < len(w.blocks) && w.blocks[k].end() <= w.pos-w.capacity {
		k++
	}
	w.blocks = w.blocks[k:]
}
