package slidingwindow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"streamd/internal/codec"
)

// timeModel is the reference a window's time windows are checked against:
// every value added, its arrival time as the window sees it (never going
// back, 0 before the first), and the positions where the window starts a
// time mark — a batch starts one when none is held or the newest holds
// markGap values or more.
type timeModel struct {
	x     []float64
	times []int64
	marks []int64
	gap   int64
}

func newTimeModel(w *Window) *timeModel {
	return &timeModel{gap: max(1, w.RawCapacity()/maxMarks)}
}

// add records a batch that arrived at t, as Window.Add takes it.
func (m *timeModel) add(t int64, vals []float64) {
	if len(vals) == 0 {
		return
	}
	pos := int64(len(m.x))
	if pos > 0 {
		t = max(t, m.times[pos-1])
	}
	t = max(t, 0)
	if k := len(m.marks); k == 0 || pos-m.marks[k-1] >= m.gap {
		m.marks = append(m.marks, pos)
	}
	m.x = append(m.x, vals...)
	for range vals {
		m.times = append(m.times, t)
	}
}

// feedBoth adds a batch to the model and the window, as float32 values
// when the window keeps them.
func (m *timeModel) feedBoth(w *Window, t int64, vals []float64) {
	if w.ring.float32 {
		f := make([]float32, len(vals))
		for i, v := range vals {
			f[i] = float32(v)
			vals[i] = float64(f[i])
		}
		w.AddFloat32(t, f)
	} else {
		w.Add(t, vals...)
	}
	m.add(t, vals)
}

// randomBatch returns a batch of values for rng's next batch: mostly a
// few values, at times one or many.
func randomValues(rng *rand.Rand) []float64 {
	var k int
	switch rng.IntN(8) {
	case 0:
		k = 1
	case 1:
		k = 200 + rng.IntN(2000)
	default:
		k = 1 + rng.IntN(40)
	}
	x := make([]float64, k)
	for i := range x {
		x[i] = float64(rng.IntN(1000)) / 8
	}
	return x
}

// randomTime returns the arrival time of the next batch after now: often
// the same, at times later, earlier (taken as now) or 0 (unknown).
func randomTime(rng *rand.Rand, now int64) int64 {
	switch rng.IntN(12) {
	case 0:
		return 0
	case 1:
		return now - 1 - rng.Int64N(5000)
	case 2, 3, 4:
		return now
	default:
		return now + 1 + rng.Int64N(3000)
	}
}

// cutoffs returns the cutoffs worth asking about: around the arrival
// times at the start and end of every mark the model has, the first and
// newest times, and random ones.
func (m *timeModel) cutoffs(rng *rand.Rand, random int) []int64 {
	pos := int64(len(m.times))
	if pos == 0 {
		return []int64{0, 1}
	}
	newest := m.times[pos-1]
	cs := []int64{0, 1, m.times[0], newest - 1, newest, newest + 1}
	for i, s := range m.marks {
		end := pos
		if i+1 < len(m.marks) {
			end = m.marks[i+1]
		}
		if rng.IntN(4) == 0 || i+3 > len(m.marks) {
			cs = append(cs, m.times[s], m.times[s]+1, m.times[end-1], m.times[end-1]+1)
		}
	}
	for range random {
		cs = append(cs, m.times[0]+rng.Int64N(newest-m.times[0]+2))
	}
	return cs
}

// checkSince checks w.Since(cutoff) against the model. Every answer must
// cover each value held that arrived at or after cutoff, no more older
// ones than its slack, count them and give the arrival times of the first
// and last exactly, and say Truncated when values in range have left.
// For a window in Exact mode, which keeps every value in its ring, the
// answer is pinned down entirely by the marks: it starts at the first
// mark whose newest value arrived at or after cutoff.
func (m *timeModel) checkSince(t *testing.T, w *Window, cutoff int64, what string) {
	t.Helper()
	pos := int64(len(m.x))
	snap, span := w.Since(cutoff)
	n := snap.Count()
	what = fmt.Sprintf("%s: since %d after %d values", what, cutoff, pos)
	first := pos // the first position that arrived at or after cutoff
	for first > 0 && m.times[first-1] >= cutoff {
		first--
	}
	if first == pos {
		if n != 0 || span != (Span{}) {
			t.Fatalf("%s: nothing in range, got %d values, span %+v", what, n, span)
		}
		return
	}
	held := w.Count()
	start := pos - n
	if first < pos-held {
		if !span.Truncated || start > pos-held {
			t.Fatalf("%s: covers from %d, span %+v; values in range expired before %d", what, start, span, pos-held)
		}
	} else {
		if start > first || first-start > span.OlderMax {
			t.Fatalf("%s: covers %d values from %d with slack %d; %d arrived at or after the cutoff", what, n, start, span.OlderMax, pos-first)
		}
		if span.First != m.times[start] {
			t.Fatalf("%s: span first %d, want %d", what, span.First, m.times[start])
		}
	}
	if span.Last != m.times[pos-1] {
		t.Fatalf("%s: span last %d, want %d", what, span.Last, m.times[pos-1])
	}
	if w.Mode() == Exact {
		wantN, want := m.exactSince(held, cutoff)
		if n != wantN || span != want {
			t.Fatalf("%s: %d values, span %+v; want %d, %+v", what, n, span, wantN, want)
		}
		if !snap.Exact() {
			t.Fatalf("%s: not exact", what)
		}
		covered := slices.Sorted(slices.Values(m.x[start:]))
		if lo, _, _ := snap.Quantile(0); lo != covered[0] {
			t.Fatalf("%s: minimum %v, want %v", what, lo, covered[0])
		}
		if hi, _, _ := snap.Quantile(1); hi != covered[n-1] {
			t.Fatalf("%s: maximum %v, want %v", what, hi, covered[n-1])
		}
	}
}

// exactSince returns what Since(cutoff) covers in a window in Exact mode
// that holds the newest held values: the marks are those the model
// started, less those whose values have all left, and the answer starts
// at the first mark whose newest value arrived at or after cutoff.
func (m *timeModel) exactSince(held, cutoff int64) (int64, Span) {
	pos := int64(len(m.x))
	oldest := pos - held
	ms := m.marks
	for len(ms) > 1 && ms[1] <= oldest {
		ms = ms[1:]
	}
	end := func(i int) int64 {
		if i+1 < len(ms) {
			return ms[i+1]
		}
		return pos
	}
	k := 0
	for m.times[end(k)-1] < cutoff {
		k++
	}
	start, first := ms[k], m.times[ms[k]]
	span := Span{First: first, Last: m.times[pos-1]}
	if k == 0 && oldest > 0 {
		span.Truncated = start < oldest || first >= cutoff
		start = oldest
	}
	if first < cutoff {
		span.OlderMax = end(k) - ms[k] - 1
	}
	return pos - start, span
}

// checkMarksModel checks that w holds the model's marks, less those whose
// values have all left its ring, each with the arrival times of its first
// and newest value, and that Entries counts them.
func (m *timeModel) checkMarksModel(t *testing.T, w *Window, what string) {
	t.Helper()
	pos := int64(len(m.x))
	oldest := pos - w.RawLen()
	ms := m.marks
	for len(ms) > 1 && ms[1] <= oldest {
		ms = ms[1:]
	}
	if len(w.marks) != len(ms) {
		t.Fatalf("%s: %d marks, want %d", what, len(w.marks), len(ms))
	}
	for i, s := range ms {
		end := pos
		if i+1 < len(ms) {
			end = ms[i+1]
		}
		got := mark{start: w.marks[i].start, first: w.marks[i].first, last: w.markLast(i)}
		if want := (mark{start: s, first: m.times[s], last: m.times[end-1]}); got != want {
			t.Fatalf("%s: mark %d of %d is %+v, want %+v", what, i, len(ms), got, want)
		}
	}
	e := int(w.RawLen()) + len(ms)
	for i := range w.blocks {
		e += w.blocks[i].q.Len() + w.blocks[i].f.Len()
	}
	if w.Entries() != e {
		t.Fatalf("%s: %d entries, want %d raw values, %d marks and the blocks' %d", what, w.Entries(), w.RawLen(), len(ms), e-int(w.RawLen())-len(ms))
	}
}

// A modelCase is a window to feed values until it has held so many.
type modelCase struct {
	eps      float64
	capacity int64
	values   int
	float32  bool
}

// String names c for its subtest.
func (c modelCase) String() string {
	return fmt.Sprintf("eps=%v,n=%d,float32=%v", c.eps, c.capacity, c.float32)
}

// window returns the empty window of c.
func (c modelCase) window(t *testing.T) *Window {
	t.Helper()
	newWindow := New
	if c.float32 {
		newWindow = NewFloat32
	}
	w, err := newWindow(c.eps, c.capacity)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestSinceModel feeds windows of capacities around and below the 4096
// marks a ring holds, multiples of it and far above it, in both modes,
// batches of one value to thousands at times that stay, go on, go back
// and are unknown (0), and checks every time window, after batch after
// batch, against the reference: the values and their arrival times.
func TestSinceModel(t *testing.T) {
	for _, c := range []modelCase{
		{0.01, 1, 200, false},
		{0.01, 2, 300, false},
		{0.01, 100, 3000, false},
		{0.01, 4095, 12000, false},
		{0.01, 4096, 12000, true},
		{0.01, 4097, 12000, false},
		{0.01, 8191, 20000, false},
		{0.01, 8192, 20000, false},
		{0.01, 12288, 24000, true},
		{0.01, 50000, 20000, false},
		{0.001, 1 << 20, 40000, false},
		{1e-5, 1 << 32, 40000, false},
		{0.2, 50000, 54000, false},
		{0.1, 1 << 22, 6000, true},
		{0.03, 1 << 24, 14000, false},
		{0.02, 1 << 30, 24000, false},
	} {
		t.Run(c.String(), func(t *testing.T) {
			w := c.window(t)
			m := newTimeModel(w)
			rng := rand.New(rand.NewPCG(uint64(c.capacity), 7))
			now := int64(1_000_000)
			for batch := 0; len(m.x) < c.values; batch++ {
				now = max(now, randomTime(rng, now))
				t0 := randomTime(rng, now)
				m.feedBoth(w, t0, randomValues(rng))
				if rng.IntN(16) != 0 {
					continue
				}
				what := fmt.Sprintf("batch %d", batch)
				m.checkMarksModel(t, w, what)
				for _, cutoff := range m.cutoffs(rng, 4) {
					m.checkSince(t, w, cutoff, what)
				}
				if w.Mode() == Exact && int64(w.Bytes()) > w.Footprint() {
					t.Fatalf("%s: %d bytes, above the footprint %d", what, w.Bytes(), w.Footprint())
				}
			}
		})
	}
}

// TestSinceDecodedTwin feeds two windows the same batches; one is encoded
// and decoded again at random points — right after a mark starts, in the
// middle of one, with its marks trimmed to one — and both must go on
// exactly alike: the same encoding, the same entries and the same answer
// to every time window, which the model checks too.
func TestSinceDecodedTwin(t *testing.T) {
	for _, c := range []modelCase{
		{0.01, 1, 100, false},
		{0.01, 3, 300, false},
		{0.01, 4095, 10000, false},
		{0.01, 8192, 20000, true},
		{0.01, 12289, 20000, false},
		{0.001, 1 << 20, 30000, true},
		{0.2, 50000, 8000, false},
		{0.03, 1 << 24, 12000, false},
		{0.02, 1 << 30, 24000, true},
	} {
		t.Run(c.String(), func(t *testing.T) {
			w, d := c.window(t), c.window(t)
			m := newTimeModel(w)
			rng := rand.New(rand.NewPCG(uint64(c.capacity), 11))
			now := int64(5_000_000)
			decodes := 0
			for batch := 0; len(m.x) < c.values; batch++ {
				now = max(now, randomTime(rng, now))
				t0 := randomTime(rng, now)
				vals := randomValues(rng)
				m.feedBoth(w, t0, slices.Clone(vals))
				if c.float32 {
					f := make([]float32, len(vals))
					for i, v := range vals {
						f[i] = float32(v)
					}
					d.AddFloat32(t0, f)
				} else {
					d.Add(t0, vals...)
				}
				what := fmt.Sprintf("batch %d, %d decodings", batch, decodes)
				if rng.IntN(6) == 0 {
					data := sameEncoding(t, w, d, what)
					d = new(Window)
					if err := d.UnmarshalBinary(data); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if c.float32 {
						d.KeepFloat32()
					}
					decodes++
				}
				if rng.IntN(12) != 0 {
					continue
				}
				sameEncoding(t, w, d, what)
				m.checkMarksModel(t, d, what)
				if w.Entries() != d.Entries() || w.Count() != d.Count() || w.Added() != d.Added() {
					t.Fatalf("%s: decoded twin holds %d entries of %d values (%d added), the other %d of %d (%d)",
						what, d.Entries(), d.Count(), d.Added(), w.Entries(), w.Count(), w.Added())
				}
				for _, cutoff := range m.cutoffs(rng, 4) {
					m.checkSince(t, d, cutoff, what)
					sameSince(t, w, d, cutoff, what)
				}
			}
			if decodes == 0 {
				t.Fatal("never decoded")
			}
			if w.Mode() == Blocks && w.Blocks() == 0 {
				t.Fatal("no blocks sealed")
			}
		})
	}
}

// sameEncoding checks that w and d encode alike and returns d's encoding.
func sameEncoding(t *testing.T, w, d *Window, what string) []byte {
	t.Helper()
	a, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("%s: the decoded twin encodes in %d bytes, unlike the other's %d", what, len(b), len(a))
	}
	return b
}

// sameSince checks that w and d answer the time window since cutoff
// alike.
func sameSince(t *testing.T, w, d *Window, cutoff int64, what string) {
	t.Helper()
	s1, span1 := w.Since(cutoff)
	s2, span2 := d.Since(cutoff)
	if s1.Count() != s2.Count() || span1 != span2 || s1.Exact() != s2.Exact() || s1.MaxRankError() != s2.MaxRankError() {
		t.Fatalf("%s: since %d, the decoded twin covers %d values, %+v; the other %d, %+v", what, cutoff, s2.Count(), span2, s1.Count(), span1)
	}
	for _, phi := range []float64{0, 0.1, 0.5, 0.9, 1} {
		v1, lo1, hi1 := s1.Quantile(phi)
		v2, lo2, hi2 := s2.Quantile(phi)
		if v1 != v2 || lo1 != lo2 || hi1 != hi2 {
			t.Fatalf("%s: since %d, quantile %v: decoded twin %v [%d, %d], the other %v [%d, %d]", what, cutoff, phi, v2, lo2, hi2, v1, lo1, hi1)
		}
	}
}

// appendVersion1 appends the version-1 encoding of w, a window in Exact
// mode: its times were those of its newest value and of the first value
// of its current run of s0 values, and it kept no marks.
func appendVersion1(dst []byte, w *Window) []byte {
	start := len(dst)
	dst = codec.Begin(dst, magic, 1)
	dst = codec.AppendFloat64(dst, w.eps)
	dst = binary.AppendUvarint(dst, uint64(w.capacity))
	dst = binary.AppendUvarint(dst, uint64(w.pos))
	dst = binary.AppendVarint(dst, w.firstT)
	dst = binary.AppendVarint(dst, w.lastT)
	dst = binary.AppendUvarint(dst, uint64(w.RawLen()))
	for _, v := range w.AppendNewest(nil, w.RawLen()) {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	dst = binary.AppendUvarint(dst, 0) // blocks
	return codec.End(dst, start)
}

// TestSinceAfterVersion1 decodes version-1 windows, whose marks are made
// from their two times, and feeds them more: a batch goes on with the
// newest mark, that of the current run of s0 values, until it holds
// markGap values, as it would have in the window encoded.
func TestSinceAfterVersion1(t *testing.T) {
	for _, c := range []struct {
		eps      float64
		capacity int64
		pos      int64 // values before the encoding
		newMark  bool  // whether the batch after it starts a mark
	}{
		// s0 = 1000 values, a mark every 256: the run from 2000 holds 100.
		{0.001, 1 << 20, 2100, false},
		{0.001, 1 << 20, 2255, false},
		{0.001, 1 << 20, 2256, true},
		// s0 = 100 values, a mark for every batch; 50 values expired.
		{0.01, 4000, 4050, true},
	} {
		t.Run(fmt.Sprint(c.capacity, "/", c.pos), func(t *testing.T) {
			w, err := New(c.eps, c.capacity)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, c.pos)
			for i := range x {
				x[i] = float64(i % 71)
			}
			for i := int64(0); i < c.pos; i += 10 {
				w.Add(1000+i, x[i:min(i+10, c.pos)]...)
			}
			var d Window
			if err := d.UnmarshalBinary(appendVersion1(nil, w)); err != nil {
				t.Fatal(err)
			}
			open := c.pos - c.pos%w.s0 // the current run of s0 values
			now := w.lastT + 500
			d.Add(now, 7, 8, 9)
			pos := c.pos + 3
			snap, span := d.Since(now)
			wantN, want := int64(3), Span{First: now, Last: now}
			if !c.newMark {
				wantN, want = pos-open, Span{First: w.firstT, Last: now, OlderMax: pos - open - 1}
			}
			if snap.Count() != wantN || span != want {
				t.Fatalf("since the batch after decoding: %d values, %+v; want %d, %+v", snap.Count(), span, wantN, want)
			}
		})
	}
}
