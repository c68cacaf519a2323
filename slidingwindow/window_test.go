package slidingwindow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"streamd/internal/codec"
	"streamd/internal/exact"
	"streamd/synth"
)

var testPhis = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1}

// checkLast asserts every guarantee for the last n values of x.
func checkLast(t *testing.T, w *Window, x []float64, n int64) {
	t.Helper()
	if n > int64(len(x)) {
		n = int64(len(x))
	}
	s, err := w.Last(n)
	if err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, s, x[int64(len(x))-n:], w.Epsilon(), fmt.Sprintf("last %d (%d blocks)", n, w.Blocks()))
}

// checkSnapshot asserts every guarantee of s, a snapshot of the values
// covered.
func checkSnapshot(t *testing.T, s *Snapshot, covered []float64, eps float64, what string) {
	t.Helper()
	n := int64(len(covered))
	key := exact.New(covered)
	if s.Count() != n {
		t.Fatalf("%s: count %d, want %d", what, s.Count(), n)
	}
	if s.Epsilon() != eps {
		t.Fatalf("%s: ε %v, want the window's %v", what, s.Epsilon(), eps)
	}
	if n == 0 {
		return
	}
	if float64(s.MaxRankError()) > eps*float64(n)+1 {
		t.Fatalf("%s: MaxRankError %d > εn", what, s.MaxRankError())
	}
	for _, phi := range testPhis {
		v, lo, hi := s.Quantile(phi)
		if err := key.CheckQuantile(phi, v, eps, lo, hi); err != nil {
			t.Fatalf("%s (exact %v): %v", what, s.Exact(), err)
		}
	}
	sorted := key.Sorted()
	for i := range 20 {
		v := sorted[i*(len(sorted)-1)/19]
		lo, hi := s.Rank(v)
		if err := key.CheckRank(v, lo, hi, eps); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		lo, hi = s.Frequency(v)
		if err := key.CheckFrequency(v, lo, hi, eps); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, support := range []float64{2 * eps, 0.05, 0.2} {
		var got []float64
		for _, e := range s.HeavyHitters(support) {
			got = append(got, e.Value)
		}
		if err := key.CheckHeavyHitters(support, eps, got); err != nil {
			t.Fatalf("%s, support %v: %v", what, support, err)
		}
	}
}

func lastNs(c int64) []int64 {
	ns := []int64{1, 2, 3, 10, 100, 1000, 10000, c / 3, c/2 + 7, c - 1, c}
	var out []int64
	for _, n := range ns {
		if n >= 1 && n <= c {
			out = append(out, n)
		}
	}
	return out
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		eps  float64
		n    int64
		want Mode
	}{
		{0.001, 1 << 20, Exact},
		{0.01, 1 << 20, Exact},
		{0.1, 1 << 20, Blocks},
		{0.05, 1 << 22, Blocks},
		{0.1, 100, Exact},
	} {
		w, err := New(tc.eps, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if w.Mode() != tc.want {
			t.Errorf("New(%v, %d) mode %v, want %v", tc.eps, tc.n, w.Mode(), tc.want)
		}
	}
}

// TestLastN feeds streams in uneven batches and checks last-n answers at
// several points, in both modes.
func TestLastN(t *testing.T) {
	type run struct {
		eps      float64
		capacity int64
		total    int
		orders   []synth.Order
	}
	runs := []run{
		{0.001, 1 << 20, 1 << 18, []synth.Order{synth.Random, synth.Sorted}},
		{0.01, 100000, 250000, nil},
		{0.1, 1 << 20, 3 << 20, []synth.Order{synth.Random, synth.Sorted, synth.Reverse, synth.Sawtooth}},
		{0.1, 5000, 1 << 17, nil},
		{0.05, 1 << 21, 1 << 22, []synth.Order{synth.Random, synth.OrganPipe}},
	}
	if testing.Short() {
		runs[2].total = 3 << 19
		runs = runs[:4]
	}
	for _, r := range runs {
		orders := r.orders
		if orders == nil {
			orders = synth.Orders
		}
		for i, d := range synth.Dists {
			for j, o := range orders {
				if r.total > 1<<18 && j > 1 && i%3 != 0 {
					continue // big runs: every distribution in two orders, a third in all
				}
				x, err := synth.Generate(synth.Spec{Dist: d, Order: o, Seed: 11, Period: max(1, r.total/37)}, r.total)
				if err != nil {
					t.Fatal(err)
				}
				st := exact.Named{Name: fmt.Sprintf("%s/%s/n=%d", d, o, r.total), Values: x}
				t.Run(fmt.Sprintf("%s/ε=%v/N=%d", st.Name, r.eps, r.capacity), func(t *testing.T) {
					w, err := New(r.eps, r.capacity)
					if err != nil {
						t.Fatal(err)
					}
					x := st.Values
					added, next := 0, len(x)/3
					for step := 1; added < len(x); step++ {
						k := min(len(x)-added, 1+step*step*97%9001)
						w.Add(int64(step), x[added:added+k]...)
						added += k
						// Check at about a third, two thirds and the end.
						if added >= next || added == len(x) {
							next += len(x) / 3
							for _, n := range lastNs(r.capacity) {
								checkLast(t, w, x[:added], n)
							}
						}
					}
					if w.Mode() == Blocks && w.Blocks() == 0 {
						t.Error("blocks mode with no blocks")
					}
					t.Logf("mode %v: %d blocks, %d entries, %d bytes for %d values", w.Mode(), w.Blocks(), w.Entries(), w.Bytes(), w.Count())
				})
			}
		}
	}
}

func TestRange(t *testing.T) {
	w, _ := New(0.01, 100)
	if _, err := w.Last(0); err == nil {
		t.Error("Last(0) succeeded")
	}
	if _, err := w.Last(101); err == nil {
		t.Error("Last(101) succeeded")
	}
	s, err := w.Last(50)
	if err != nil || s.Count() != 0 {
		t.Errorf("empty window Last(50) = %v, %v", s, err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		eps float64
		n   int64
	}{{0.001, 1 << 16}, {0.1, 1 << 20}} {
		x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 1}, 3<<20/2)
		w, _ := New(tc.eps, tc.n)
		for i := 0; i < len(x); i += 1000 {
			w.Add(int64(i), x[i:min(i+1000, len(x))]...)
		}
		data, err := w.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d Window
		if err := d.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		for _, n := range lastNs(tc.n) {
			checkLast(t, &d, x, n)
		}
		// Both go on identically.
		more := slices.Repeat([]float64{3, 1, 4, 1, 5}, 20000)
		w.Add(1, more...)
		d.Add(1, more...)
		x = append(x, more...)
		for _, n := range lastNs(tc.n) {
			checkLast(t, &d, x, n)
		}
	}
}

// FuzzUnmarshal fuzzes the decoder with whole encodings, checksum
// included: every window that decodes passes checkDecoded.
func FuzzUnmarshal(f *testing.F) {
	for _, data := range fuzzSeeds() {
		f.Add(data)
	}
	f.Fuzz(checkDecoded)
}

// fuzzSeeds returns the encodings of a few windows of float64 and of
// float32 values, to seed the fuzzers of the decoder.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, tc := range []struct {
		eps float64
		n   int64
		add int
		f32 bool
	}{{0.5, 10, 25, false}, {0.3, 400, 2000, false}, {0.1, 100000, 0, false}, {0.5, 10, 25, true}, {0.3, 400, 2000, true}, {0.2, 64, 3, true}} {
		newWindow := New
		if tc.f32 {
			newWindow = NewFloat32
		}
		w, _ := newWindow(tc.eps, tc.n)
		for i := range tc.add {
			w.Add(int64(i), float64(i%7))
		}
		data, _ := w.MarshalBinary()
		seeds = append(seeds, data)
	}
	return seeds
}

// checkDecoded checks that a window that data decodes to answers its
// queries and takes more values without panicking, and encodes to what
// decodes again. It returns at once if data is not a window.
func checkDecoded(t *testing.T, data []byte) {
	t.Helper()
	var w Window
	if err := w.UnmarshalBinary(data); err != nil {
		return
	}
	if s, err := w.Last(w.Capacity()); err == nil {
		s.Quantile(0.5)
		s.HeavyHitters(0.5)
	}
	enc, err := w.MarshalBinary()
	if err != nil {
		t.Fatalf("encode a decoded window: %v", err)
	}
	var d Window
	if err := d.UnmarshalBinary(enc); err != nil {
		t.Fatalf("decode a window encoded again: %v", err)
	}
	w.Add(0, 1, 2, 3)
}

// TestFootprint fills windows in both modes, in every arrival order and
// with many, skewed or two distinct values, and checks that Bytes never
// passes Footprint: a bound in Exact mode, an estimate in Blocks mode.
func TestFootprint(t *testing.T) {
	cases := []struct {
		eps float64
		n   int64
	}{{0.001, 1 << 14}, {0.1, 5000}, {0.1, 1 << 18}, {0.2, 1 << 19}, {0.05, 1 << 19}}
	if testing.Short() {
		cases = cases[:3]
	}
	for _, tc := range cases {
		fw, _ := New(tc.eps, tc.n)
		foot := fw.Footprint()
		total := int(2 * tc.n)
		for _, d := range []synth.Dist{synth.Uniform, synth.Zipf, synth.TwoValued} {
			for _, o := range []synth.Order{synth.Random, synth.Sorted, synth.Reverse, synth.OrganPipe} {
				x, err := synth.Generate(synth.Spec{Dist: d, Order: o, Seed: 3, Period: total / 7}, total)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := New(tc.eps, tc.n)
				most := 0
				for i := 0; i < len(x); i += 997 {
					w.Add(int64(i), x[i:min(i+997, len(x))]...)
					most = max(most, w.Bytes())
				}
				if int64(most) > foot {
					t.Errorf("ε=%v N=%d %s/%s (mode %v): %d bytes, footprint %d", tc.eps, tc.n, d, o, w.Mode(), most, foot)
				}
			}
		}
	}
}

// TestFloat32Ring: a window made with NewFloat32 answers exactly as one
// made with New for the same float32 values, in every mode, with the same
// encoding, in about half the memory; KeepFloat32 makes a decoded window
// the same again.
func TestFloat32Ring(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		eps float64
		n   int64
	}{{0.01, 5000}, {0.001, 1 << 16}, {0.1, 40000}} {
		w64, _ := New(tc.eps, tc.n)
		w32, _ := NewFloat32(tc.eps, tc.n)
		var t0 int64
		for added := int64(0); added < 3*tc.n; {
			k := 1 + r.IntN(900)
			vals := make([]float32, k)
			wide := make([]float64, k)
			for i := range vals {
				vals[i] = float32(math.Round(r.NormFloat64()*100) / 4)
				wide[i] = float64(vals[i])
			}
			t0 += int64(r.IntN(1000))
			w64.Add(t0, wide...)
			w32.AddFloat32(t0, vals)
			added += int64(k)
		}
		name := fmt.Sprintf("ε=%v N=%d (mode %v)", tc.eps, tc.n, w32.Mode())
		for _, n := range []int64{1, 17, tc.n / 3, tc.n} {
			s64, err1 := w64.Last(n)
			s32, err2 := w32.Last(n)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			for _, phi := range []float64{0, 0.1, 0.5, 0.99, 1} {
				v1, lo1, hi1 := s64.Quantile(phi)
				v2, lo2, hi2 := s32.Quantile(phi)
				if v1 != v2 || lo1 != lo2 || hi1 != hi2 {
					t.Fatalf("%s: last %d, φ %v: %v [%d, %d] with float32 values kept, %v [%d, %d] with float64", name, n, phi, v2, lo2, hi2, v1, lo1, hi1)
				}
			}
		}
		e64, _ := w64.AppendBinary(nil)
		e32, _ := w32.AppendBinary(nil)
		// The float32 ring is encoded at 4 bytes a value: one byte of
		// width and the values differ, the rest is the same.
		if len(e32) != len(e64)-4*int(w32.ring.len()) {
			t.Fatalf("%s: encoded in %d bytes with float32 values kept, %d with float64, want 4 bytes less a value (%d values)", name, len(e32), len(e64), w32.ring.len())
		}
		if b32, b64 := w32.ring.valueBytes()*w32.ring.room(), w64.ring.valueBytes()*w64.ring.room(); w32.Mode() == Exact && 2*b32 != b64 {
			t.Errorf("%s: the float32 ring's values take %d bytes, the float64 one's %d", name, b32, b64)
		}
		var d Window
		if err := d.UnmarshalBinary(e32); err != nil {
			t.Fatal(err)
		}
		if !d.ring.float32 {
			t.Errorf("%s: decoded a float32 ring as float64", name)
		}
		d.KeepFloat32()
		if !d.ring.float32 || d.ring.len() != w32.ring.len() || d.last(nil, d.ring.len())[0] != w32.last(nil, w32.ring.len())[0] {
			t.Errorf("%s: KeepFloat32 after decoding does not give the float32 ring back", name)
		}
		if w32.Footprint() >= w64.Footprint() {
			t.Errorf("%s: footprint %d with float32 values kept, %d with float64", name, w32.Footprint(), w64.Footprint())
		}
	}
}

// TestRingGrows: the ring of raw values starts at the size of the first
// values and doubles up to headLen as values come, then takes chunks that
// double in size, up to its capacity; Growth says by how much it grows.
func TestRingGrows(t *testing.T) {
	for _, f32 := range []bool{false, true} {
		w, err := New(0.001, 1000)
		if f32 {
			w, err = NewFloat32(0.001, 1000)
		}
		if err != nil {
			t.Fatal(err)
		}
		var caps []int64
		for _, n := range []int{1, 63, 1, 100, 400, 1, 2000, 5} {
			before := w.ring.bytes()
			grow := w.Growth(int64(n))
			w.Add(1, make([]float64, n)...)
			if got := int64(w.ring.bytes() - before); got != grow {
				t.Fatalf("float32=%v: %d more values grew the ring by %d bytes, Growth said %d", f32, n, got, grow)
			}
			caps = append(caps, w.ring.room())
		}
		// 565 values: the first chunk's 256, then chunks of 256 and (to
		// the capacity) 488.
		want := []int64{1, 64, 128, 256, 1000, 1000, 1000, 1000}
		if !slices.Equal(caps, want) {
			t.Errorf("float32=%v: ring sizes %v, want %v", f32, caps, want)
		}
	}
}

// TestDecodeVersion2: a window encoded before its ring kept its width
// (version 2: float64 values, testdata/window-v2.bin, written by the
// previous version from a NewFloat32(0.01, 500) window of 1,300 values)
// decodes to the window it was, and encodes again at 4 bytes a value once
// KeepFloat32 is called, as the pipeline does for a float32 stream.
func TestDecodeVersion2(t *testing.T) {
	old, err := os.ReadFile("testdata/window-v2.bin")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewFloat32(0.01, 500)
	for i := range 1300 {
		want.AddFloat32(int64(i/10), []float32{float32(i%97) / 4})
	}
	var d Window
	if err := d.UnmarshalBinary(old); err != nil {
		t.Fatal(err)
	}
	d.KeepFloat32()
	got, _ := d.AppendBinary(nil)
	enc, _ := want.AppendBinary(nil)
	if !bytes.Equal(got, enc) {
		t.Errorf("version 2 decoded and encoded again: %d bytes, want the %d of the window it was", len(got), len(enc))
	}
	if len(enc) >= len(old) {
		t.Errorf("encoded in %d bytes, %d before", len(enc), len(old))
	}
}

// TestChunkedRing fills rings of about a chunk and of several, wrapping
// them, with batches of one value to several chunks: Growth says what each
// batch adds to Bytes, the newest values read back as they were added (and
// so after an encoding and decoding), and a chunk past the first, once
// made, never moves: growing copies none of its values.
func TestChunkedRing(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, f32 := range []bool{false, true} {
		for _, capacity := range []int64{headLen - 1, headLen, headLen + 1, 1000, 2*headLen + 1, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 100, 5 * chunkLen} {
			name := fmt.Sprintf("float32=%v capacity=%d", f32, capacity)
			var w *Window
			if f32 {
				w, _ = NewFloat32(0.001, capacity)
			} else {
				w, _ = New(0.001, capacity)
			}
			var all []float64
			moved := map[int]*float64{}
			moved32 := map[int]*float32{}
			for len(all) < int(3*capacity) {
				n := 1 + r.IntN(7)
				switch r.IntN(4) {
				case 0:
					n = 1 + r.IntN(300)
				case 1:
					n = 1 + r.IntN(int(2*chunkLen))
				}
				vals := make([]float64, n)
				for i := range vals {
					vals[i] = float64(float32(r.NormFloat64()))
				}
				before, grow := w.ring.bytes(), w.Growth(int64(n))
				w.Add(1, vals...)
				all = append(all, vals...)
				if got := int64(w.ring.bytes() - before); got != grow {
					t.Fatalf("%s: %d more values grew the ring by %d bytes, Growth said %d", name, n, got, grow)
				}
				if l := w.ring.len(); l != min(int64(len(all)), capacity) {
					t.Fatalf("%s: ring holds %d values after %d", name, l, len(all))
				}
				if spare := w.ring.room() - w.ring.len(); w.ring.more != nil && spare >= chunkLen {
					t.Fatalf("%s: %d values of room past the %d held", name, spare, w.ring.len())
				}
				if m := w.ring.more; m != nil {
					for j, c := range m.f64 {
						if p, ok := moved[j]; ok && p != &c[:1][0] {
							t.Fatalf("%s: chunk %d moved", name, j+1)
						}
						moved[j] = &c[:1][0]
					}
					for j, c := range m.f32 {
						if p, ok := moved32[j]; ok && p != &c[:1][0] {
							t.Fatalf("%s: chunk %d moved", name, j+1)
						}
						moved32[j] = &c[:1][0]
					}
				}
				checkNewest(t, name, w, all)
			}
			if int64(w.Bytes()) > w.Footprint() && w.Mode() == Exact {
				t.Errorf("%s: %d bytes, footprint %d", name, w.Bytes(), w.Footprint())
			}
			enc, _ := w.AppendBinary(nil)
			var d Window
			if err := d.UnmarshalBinary(enc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkNewest(t, name+" decoded", &d, all)
			again, _ := d.AppendBinary(nil)
			if !bytes.Equal(again, enc) {
				t.Errorf("%s: decoded and encoded again, %d bytes differ from the %d first encoded", name, len(again), len(enc))
			}
			if d.ring.room() != d.ring.len() && d.ring.len() > chunkLen {
				t.Errorf("%s: decoded ring has room for %d values, holds %d", name, d.ring.room(), d.ring.len())
			}
		}
	}
}

// checkNewest checks that the newest values w keeps raw are the last of
// all, oldest first.
func checkNewest(t *testing.T, name string, w *Window, all []float64) {
	t.Helper()
	l := w.ring.len()
	for _, n := range []int64{1, l / 3, l - 1, l} {
		if n <= 0 {
			continue
		}
		got := w.last(nil, n)
		if want := all[int64(len(all))-n:]; !slices.Equal(got, want) {
			t.Fatalf("%s: the newest %d values after %d differ", name, n, len(all))
		}
	}
}

// TestDecodeRingInPlace: decoding a full, wrapped ring of chunks reads its
// values straight into their chunks: what the decoding allocates is about
// what the window then holds, not two more copies of the values.
func TestDecodeRingInPlace(t *testing.T) {
	const capacity = 5*chunkLen + 100
	w, _ := NewFloat32(0.001, capacity)
	all := make([]float64, 3*capacity+17)
	for i := range all {
		all[i] = float64(float32(i%1013) / 8)
	}
	for i := 0; i < len(all); i += 1000 {
		w.Add(int64(i), all[i:min(i+1000, len(all))]...)
	}
	enc, err := w.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	var d Window
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := d.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	checkNewest(t, "decoded", &d, all)
	allocated, held := after.TotalAlloc-before.TotalAlloc, uint64(d.Bytes())
	t.Logf("decoding allocated %d bytes for a window holding %d", allocated, held)
	if allocated > held+held/2 {
		t.Errorf("decoding allocated %d bytes for a window holding %d", allocated, held)
	}
}

// TestDecodeRingNonFinite: an encoded ring holding a NaN or a ±Inf, in any
// chunk, of a ring wrapped or not, float32 or float64, is refused as
// corrupt, though its checksum holds: no value accepted is either.
func TestDecodeRingNonFinite(t *testing.T) {
	const marked = 12345.5 // a value found once in the encoding, then replaced
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, f32 := range []bool{false, true} {
			for _, tc := range []struct{ capacity, n, at int }{
				{100, 50, 10},          // the first chunk
				{5000, 3000, 2000},     // a doubling chunk
				{9000, 20000, 19990},   // a wrapped ring of whole chunks
				{10_000, 10_000, 9999}, // the newest value
			} {
				name := fmt.Sprintf("%v float32=%v capacity=%d n=%d at=%d", bad, f32, tc.capacity, tc.n, tc.at)
				w, _ := New(0.01, int64(tc.capacity))
				if f32 {
					w, _ = NewFloat32(0.01, int64(tc.capacity))
				}
				vals := make([]float64, tc.n)
				for i := range vals {
					vals[i] = float64(i % 1000)
				}
				vals[tc.at] = marked
				w.Add(1, vals...)
				enc, err := w.AppendBinary(nil)
				if err != nil {
					t.Fatal(err)
				}
				var want, forgedValue []byte
				if f32 {
					want = binary.LittleEndian.AppendUint32(nil, math.Float32bits(marked))
					forgedValue = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(bad)))
				} else {
					want = binary.LittleEndian.AppendUint64(nil, math.Float64bits(marked))
					forgedValue = binary.LittleEndian.AppendUint64(nil, math.Float64bits(bad))
				}
				if bytes.Count(enc, want) != 1 {
					t.Fatalf("%s: the marked value is in the encoding %d times", name, bytes.Count(enc, want))
				}
				// The value replaced, and the checksum made again.
				forged := bytes.Replace(enc, want, forgedValue, 1)
				forged = codec.End(forged[:len(forged)-4], 0)
				var d Window
				if err := d.UnmarshalBinary(forged); !errors.Is(err, codec.ErrCorrupt) || !strings.Contains(err.Error(), "NaN or ±Inf") {
					t.Errorf("%s: the ring decoded with %v", name, err)
				}
			}
		}
	}
}
