//go:build gpu

package compute

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"streamd/gksketch"
	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
	"streamd/summary"
)

func newComputeAlg(alg Algorithm) func() (gpusort.Sorter, error) {
	return func() (gpusort.Sorter, error) { return NewWithConfig(Config{Algorithm: alg}) }
}

// The shared tables run on each algorithm forced; the measured choice
// between them (the default, "compute") is tested by TestComputeMeasured.
func TestComputeBitonic(t *testing.T)       { sorttest.Sorter(t, newComputeAlg(Bitonic)) }
func TestComputeBitonicDigest(t *testing.T) { sorttest.Digester(t, newComputeAlg(Bitonic)) }
func TestComputeRadix(t *testing.T)         { sorttest.Sorter(t, newComputeAlg(Radix)) }
func TestComputeRadixDigest(t *testing.T)   { sorttest.Digester(t, newComputeAlg(Radix)) }

func TestComputeInfo(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Log(c.Info())
	if _, err := NewWithConfig(Config{Algorithm: 7}); err == nil {
		t.Error("NewWithConfig accepted an unknown algorithm")
	}
}

// newAuto is the "auto" back-end of the registry with $STREAMD_GL unset:
// Auto over a compute back-end on an EGL context, or the CPU alone.
func newAuto() *gpusort.Auto {
	c, err := New()
	if err != nil {
		return gpusort.NewAuto(nil, err, gpusort.NewCPU(0))
	}
	return gpusort.NewAuto(c, nil, gpusort.NewCPU(0))
}

func TestAutoGPU(t *testing.T) {
	sorttest.Sorter(t, func() (gpusort.Sorter, error) { return newAuto(), nil })
}

func TestAutoConcurrentGPU(t *testing.T) {
	a := newAuto()
	defer a.Close()
	if err := a.GPUErr(); err != nil {
		t.Fatal(err)
	}
	if info := a.Info(); !strings.Contains(info, "radix ranking") {
		t.Errorf("Info = %q, want the GPU's renderer and radix ranking", info)
	}
	sorttest.AutoConcurrent(t, a)
}

// digestCase is a batch and the specs to digest it under, with the
// expected digests computed on the CPU from a copy of its windows.
type digestCase struct {
	b     gpusort.Quad
	specs [gpusort.Channels]summary.WindowSpec
	want  [gpusort.Channels]summary.Digest
}

// newDigestCase makes a batch of windows of the given lengths (float64
// when key64), each filled by a pattern, through alloc32 or alloc64 (nil:
// ordinary memory), and its expected digests.
func newDigestCase(r *rand.Rand, lens [gpusort.Channels]int, key64 bool, thr int64,
	alloc32 func(int) []float32, alloc64 func(int) []float64) *digestCase {
	patterns := sorttest.Patterns()
	dc := new(digestCase)
	for i, n := range lens {
		x := make([]float32, n)
		patterns[r.IntN(len(patterns))].Fill(r, x)
		dc.specs[i] = summary.WindowSpec{
			Spacing:   summary.SampleSpacing(0.01, max(n, 1)),
			Threshold: thr,
			Known:     []float64{-8, 0, 3, 42.5},
		}
		if key64 {
			w := make([]float64, n)
			if alloc64 != nil {
				if s := alloc64(n); s != nil {
					w = s
				}
			}
			for j, v := range x {
				w[j] = float64(v) * (1 + 1e-12*float64(j%3))
			}
			dc.b.F64[i] = w
			ref := slices.Clone(w)
			sorttest.KeyOrder64(ref)
			summary.DigestSorted(ref, dc.specs[i], &dc.want[i])
		} else {
			w := make([]float32, n)
			if alloc32 != nil {
				if s := alloc32(n); s != nil {
					w = s
				}
			}
			copy(w, x)
			dc.b.F32[i] = w
			ref := slices.Clone(w)
			sorttest.KeyOrder(ref)
			summary.DigestSorted(ref, dc.specs[i], &dc.want[i])
		}
	}
	return dc
}

// check digests dc with d and compares every window with the CPU's.
func (dc *digestCase) check(t *testing.T, d gpusort.Digester, name string) {
	t.Helper()
	var out [gpusort.Channels]summary.Digest
	if err := d.Digest(context.Background(), &dc.b, &dc.specs, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range gpusort.Channels {
		sorttest.CheckDigest(t, fmt.Sprintf("%s ch%d", name, i), &out[i], &dc.want[i])
	}
}

// TestComputeMeasured checks the measured choice: each size class is
// calibrated once, on random keys, and its digests are right whichever
// sort won.
func TestComputeMeasured(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(7, 8))
	for _, key64 := range []bool{false, true} {
		for _, n := range []int{1000, 1 << 15} {
			for rep := range 2 {
				dc := newDigestCase(r, [gpusort.Channels]int{n, n - 1, n / 2, 3}, key64, 3, nil, nil)
				dc.check(t, c, fmt.Sprintf("f64=%v n=%d rep %d", key64, n, rep))
			}
		}
	}
	choices := c.Choices()
	if len(choices) != 4 {
		t.Fatalf("%d size classes calibrated, want 4: %+v", len(choices), choices)
	}
	for _, ch := range choices {
		t.Logf("f64=%v N=%d: %v (bitonic %.3g keys/s, radix %.3g keys/s)", ch.Key64, ch.N, ch.Algorithm, ch.BitonicRate, ch.RadixRate)
		if ch.Err != nil || ch.BitonicRate <= 0 || ch.RadixRate <= 0 {
			t.Errorf("calibration of f64=%v N=%d: %+v", ch.Key64, ch.N, ch)
		}
		want := Bitonic
		if ch.RadixRate > ch.BitonicRate {
			want = Radix
		}
		if ch.Algorithm != want {
			t.Errorf("f64=%v N=%d: chose %v at bitonic %.3g, radix %.3g keys/s", ch.Key64, ch.N, ch.Algorithm, ch.BitonicRate, ch.RadixRate)
		}
	}
}

// unstageAll hands b's windows back to c, and fails t if c still has
// staging memory lent.
func unstageAll(t *testing.T, c *Sorter, b *gpusort.Quad) {
	t.Helper()
	for i := range gpusort.Channels {
		c.UnstageF32(b.F32[i])
		c.UnstageF64(b.F64[i])
	}
	if lent, _ := c.Staged(); lent != 0 {
		t.Fatalf("%d bytes still lent after every window was handed back", lent)
	}
}

// TestComputeStaged fills windows in place in staging memory and digests
// and sorts them, mixed with windows in ordinary memory, float32 and
// float64; the staging memory is bounded, handed back and lent again.
func TestComputeStaged(t *testing.T) {
	const limit = 1 << 20
	for _, alg := range []Algorithm{Bitonic, Radix} {
		t.Run(alg.String(), func(t *testing.T) {
			c, err := NewWithConfig(Config{Algorithm: alg, StagingBytes: limit})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r := rand.New(rand.NewPCG(9, 10))
			staged := 0
			alloc32 := func(n int) []float32 {
				if staged%3 == 2 {
					staged++
					return nil // every third window in ordinary memory
				}
				staged++
				return c.StageF32(n)
			}
			alloc64 := func(n int) []float64 { return c.StageF64(n) }
			for _, key64 := range []bool{false, true} {
				for _, lens := range [][gpusort.Channels]int{{5000, 4096, 1, 0}, {20000, 19999, 3000, 2048}} {
					dc := newDigestCase(r, lens, key64, 0, alloc32, alloc64)
					for i := range gpusort.Channels {
						if key64 {
							_, _, ok := c.pool.locate(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dc.b.F64[i]))), 8*lens[i]))
							if want := 8*lens[i] >= stagedCopyMin; ok != want {
								t.Fatalf("float64 window %d of %d values: in staging memory %v, want %v", i, lens[i], ok, want)
							}
						}
					}
					dc.check(t, c, fmt.Sprintf("f64=%v lens=%v", key64, lens))
					// Digest leaves the windows as they were: digest
					// them again, then sort them in place.
					dc.check(t, c, fmt.Sprintf("f64=%v lens=%v again", key64, lens))
					sorttest.SortBatch(t, c, fmt.Sprintf("sort f64=%v lens=%v", key64, lens), &dc.b)
					unstageAll(t, c, &dc.b)
				}
			}
			// Partial windows in staged buffers, as an idle stream's flush
			// leaves them: a window under stagedCopyMin that lies in
			// staging memory is copied through the up buffer.
			part32 := func(n int) []float32 { return c.StageF32(max(n, stagedCopyMin/4))[:n] }
			part64 := func(n int) []float64 { return c.StageF64(max(n, stagedCopyMin/8))[:n] }
			for _, key64 := range []bool{false, true} {
				lens := [gpusort.Channels]int{100, 4096, 1, 20000}
				dc := newDigestCase(r, lens, key64, 2, part32, part64)
				for i, n := range lens {
					var b []byte
					if key64 {
						b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dc.b.F64[i]))), 8*n)
					} else {
						b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dc.b.F32[i]))), 4*n)
					}
					if _, _, ok := c.pool.locate(b); !ok {
						t.Fatalf("f64=%v window %d of %d values is not in staging memory", key64, i, n)
					}
				}
				dc.check(t, c, fmt.Sprintf("partial f64=%v lens=%v", key64, lens))
				sorttest.SortBatch(t, c, fmt.Sprintf("sort partial f64=%v lens=%v", key64, lens), &dc.b)
				unstageAll(t, c, &dc.b)
			}
			// The bound: lend until the pool says no, then hand one back
			// and get it again.
			var lent [][]float32
			for {
				w := c.StageF32(20000)
				if w == nil {
					break
				}
				lent = append(lent, w)
				if len(lent) > limit/80000+1 {
					t.Fatalf("lent %d windows of 80000 bytes from %d bytes", len(lent), limit)
				}
			}
			if len(lent) == 0 {
				t.Fatal("no staging memory lent")
			}
			if got, mapped := c.Staged(); got > limit || mapped > limit {
				t.Fatalf("%d bytes lent, %d mapped, over the bound %d", got, mapped, limit)
			}
			c.UnstageF32(lent[0][:0])
			c.UnstageF32(make([]float32, 10)) // not staged: ignored
			c.UnstageF32(nil)
			if w := c.StageF32(20000); w == nil || &w[0] != &lent[0][0] {
				t.Fatal("a handed-back buffer was not lent again")
			}
			if c.StageF32(0) != nil || c.StageF64(-1) != nil {
				t.Fatal("lent an empty buffer")
			}
			c.UnstageF32(lent[0])
			if c.StageF32(stagedCopyMin/4-1) != nil || c.StageF64(stagedCopyMin/8-1) != nil {
				t.Fatal("lent staging memory for a window under stagedCopyMin")
			}
		})
	}
	c, err := NewWithConfig(Config{StagingBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.StageF32(stagedCopyMin) != nil {
		t.Error("lent staging memory with StagingBytes < 0")
	}
	c.Close()
	c, err = New()
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c.StageF32(stagedCopyMin) != nil {
		t.Error("lent staging memory after Close")
	}
}

// TestComputeConcurrent digests batches from several goroutines at once,
// half of them staged, so that batches overlap in the two slots; every
// digest must be the CPU's.
func TestComputeConcurrent(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const workers, batches = 4, 6
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for k := range batches {
				var a32 func(int) []float32
				var a64 func(int) []float64
				if k%2 == 1 {
					a32, a64 = c.StageF32, c.StageF64
				}
				n := 1000 + r.IntN(1<<14)
				dc := newDigestCase(r, [gpusort.Channels]int{n, n / 3, r.IntN(n), n}, w%2 == 1, int64(r.IntN(3)), a32, a64)
				var out [gpusort.Channels]summary.Digest
				if err := c.Digest(context.Background(), &dc.b, &dc.specs, &out); err != nil {
					errc <- err
					return
				}
				for i := range gpusort.Channels {
					if summary.DiffDigests(&out[i], &dc.want[i]) != "" {
						errc <- fmt.Errorf("worker %d batch %d window %d: digest differs from the CPU's", w, k, i)
						return
					}
					c.UnstageF32(dc.b.F32[i])
					c.UnstageF64(dc.b.F64[i])
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestComputeUnmapped runs both algorithms as without persistent mapping
// (GL < 4.4): uploads and readbacks through glBufferSubData and
// glGetBufferSubData, no staging memory.
func TestComputeUnmapped(t *testing.T) {
	for _, alg := range []Algorithm{Bitonic, Radix} {
		c, err := NewWithConfig(Config{Algorithm: alg, unmapped: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.StageF32(stagedCopyMin) != nil {
			t.Error("lent staging memory without persistent mapping")
		}
		r := rand.New(rand.NewPCG(12, 13))
		for _, key64 := range []bool{false, true} {
			dc := newDigestCase(r, [gpusort.Channels]int{3000, 1 << 15, 7, 0}, key64, 0, nil, nil)
			dc.check(t, c, fmt.Sprintf("%v f64=%v", alg, key64))
			sorttest.SortBatch(t, c, fmt.Sprintf("%v sort f64=%v", alg, key64), &dc.b)
		}
		c.Close()
	}
}

// TestComputeManyRuns digests windows with more runs than fit in mapped
// memory (threshold 0: a run slot per key), which are read back from GPU
// memory instead.
func TestComputeManyRuns(t *testing.T) {
	const runsMax = 1 << 16
	c, err := NewWithConfig(Config{Algorithm: Radix, runsMax: runsMax})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(14, 15))
	n := runsMax/2 + 1
	dc := newDigestCase(r, [gpusort.Channels]int{n, n, 5, n}, false, 0, nil, nil)
	dc.check(t, c, "threshold 0")
	dc = newDigestCase(r, [gpusort.Channels]int{n, n, 5, n}, true, -1, nil, nil)
	dc.check(t, c, "threshold -1, float64")
}

// TestAutoStaged digests staged windows through Auto from two goroutines,
// so that both its GPU and its CPU side may see them.
func TestAutoStaged(t *testing.T) {
	a := newAuto()
	defer a.Close()
	if err := a.GPUErr(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 16))
			for k := range 4 {
				n := 20000 + k // staged: over stagedCopyMin
				dc := newDigestCase(r, [gpusort.Channels]int{n, n, n, n}, false, 2, a.StageF32, a.StageF64)
				var out [gpusort.Channels]summary.Digest
				if err := a.Digest(context.Background(), &dc.b, &dc.specs, &out); err != nil {
					errc <- err
					return
				}
				for i := range gpusort.Channels {
					if summary.DiffDigests(&out[i], &dc.want[i]) != "" {
						errc <- fmt.Errorf("worker %d batch %d window %d: digest differs from the CPU's", w, k, i)
						return
					}
					a.UnstageF32(dc.b.F32[i])
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	g, c, gn, cn := a.Rates()
	t.Logf("gpu %.3g keys/s over %d batches, cpu %.3g keys/s over %d batches", g, gn, c, cn)
}

// TestStagingSizes lends windows of growing sizes from a pool that holds
// few of the largest, handing each size back before the next in a
// scrambled order: returned ranges must merge so that the larger windows
// fit, and at the end every segment is one free range again.
func TestStagingSizes(t *testing.T) {
	const limit = 3 * 16 << 19
	c, err := NewWithConfig(Config{StagingBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(17, 18))
	for lg := 15; lg <= 19; lg++ { // windows over stagedCopyMin
		var ws [][]float32
		for k := range 8 {
			w := c.StageF32(1<<lg - k) // sizes not multiples of the alignment too
			if w == nil {
				lent, mapped := c.Staged()
				t.Fatalf("2^%d, window %d: no room (%d bytes lent, %d mapped of %d)", lg, k, lent, mapped, limit)
			}
			for i := range w {
				w[i] = float32(k)
			}
			ws = append(ws, w)
		}
		for k, w := range ws {
			for i := range w {
				if w[i] != float32(k) {
					t.Fatalf("2^%d: window %d overlaps another", lg, k)
				}
			}
		}
		r.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
		for _, w := range ws {
			c.UnstageF32(w)
			c.UnstageF32(w) // a second hand-back is ignored
		}
	}
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	for i, seg := range c.pool.segs {
		if len(seg.free) != 1 || seg.free[0] != (stagingRange{0, len(seg.buf.bytes)}) {
			t.Errorf("segment %d: free ranges %v after every window came back", i, seg.free)
		}
	}
}

// TestComputeRadixRankings runs the shared sorter and digester tests with
// keys ranked in shared memory on a GPU that would rank them with subgroup
// operations, so that both rankings are tested there (elsewhere
// TestComputeRadix runs the shared-memory one already).
func TestComputeRadixRankings(t *testing.T) {
	c, err := NewWithConfig(Config{Algorithm: Radix})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(c.Info())
	subgroups := c.subgroups
	c.Close()
	if !subgroups {
		t.Skip("this GPU ranks in shared memory only, which TestComputeRadix covers")
	}
	shared := func() (gpusort.Sorter, error) {
		return NewWithConfig(Config{Algorithm: Radix, noSubgroups: true})
	}
	sorttest.Sorter(t, shared)
	sorttest.Digester(t, shared)
}

// TestComputeRadixTiles sorts and digests windows at the radix sort's tile
// boundaries, and long enough (more than radixRowsMax tiles) for its scan
// to run one work group per digit instead of one per channel.
func TestComputeRadixTiles(t *testing.T) {
	c, err := NewWithConfig(Config{Algorithm: Radix})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(19, 20))
	for _, key64 := range []bool{false, true} {
		tile := radixTile(key64)
		for _, lens := range [][gpusort.Channels]int{
			{tile - 1, tile, tile + 1, 2*tile + 1},
			{radixRowsMax*tile + 1, 5, 0, tile + 3},
		} {
			name := fmt.Sprintf("f64=%v lens=%v", key64, lens)
			dc := newDigestCase(r, lens, key64, 1, nil, nil)
			dc.check(t, c, name)
			sorttest.SortBatch(t, c, name, &dc.b)
		}
	}
}

// TestComputeTooLarge: windows of a key width that do not fit the GPU's
// storage blocks are sorted and digested on the CPU, those that fit on the
// GPU, in one batch; every result equals the CPU's.
func TestComputeTooLarge(t *testing.T) {
	c, err := NewWithConfig(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 5000
	c.maxStorage = gpusort.Channels * n * 4 * 2 // float32 windows fit, float64 ones do not
	r := rand.New(rand.NewPCG(11, 12))
	newBatch := func() *gpusort.Quad {
		var b gpusort.Quad
		for i := range gpusort.Channels {
			if i%2 == 0 {
				b.F32[i] = make([]float32, n)
				for j := range b.F32[i] {
					b.F32[i][j] = float32(r.IntN(300))
				}
			} else {
				b.F64[i] = make([]float64, n)
				for j := range b.F64[i] {
					b.F64[i][j] = r.NormFloat64()
				}
			}
		}
		return &b
	}
	ctx := context.Background()
	var specs [gpusort.Channels]summary.WindowSpec
	for i := range specs {
		specs[i] = summary.WindowSpec{Spacing: 10, Threshold: 20}
	}
	b := newBatch()
	var got, want [gpusort.Channels]summary.Digest
	if err := c.Digest(ctx, b, &specs, &got); err != nil {
		t.Fatal(err)
	}
	if err := gpusort.NewCPU(0).Digest(ctx, b, &specs, &want); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		sorttest.CheckDigest(t, fmt.Sprintf("digest ch%d", i), &got[i], &want[i])
	}
	sorted := gpusort.Quad{}
	for i := range gpusort.Channels {
		sorted.F32[i], sorted.F64[i] = slices.Sorted(slices.Values(b.F32[i])), slices.Sorted(slices.Values(b.F64[i]))
	}
	if err := c.Sort(ctx, b); err != nil {
		t.Fatal(err)
	}
	for i := range gpusort.Channels {
		if !slices.Equal(b.F32[i], sorted.F32[i]) || !slices.Equal(b.F64[i], sorted.F64[i]) {
			t.Fatalf("window %d not sorted", i)
		}
	}
}

// TestRankCache checks that the cached sample ranks are gksketch's, that
// sampleSize bounds them, that the cache holds at most rankCacheMax
// shapes while still answering, and that once it has met more it holds
// the shapes met next.
func TestRankCache(t *testing.T) {
	var rc rankCache
	for _, l := range []int64{0, 1, 2, 3, 7, 100, 4095, 4096, 65536} {
		for _, h := range []float64{1, 1.5, 2, 20.48, 100, 1e9, math.NaN()} {
			if !(h >= 1) && l > 0 {
				continue // gksketch.SampleRanks wants h ≥ 1
			}
			want := slices.Collect(gksketch.SampleRanks(l, h))
			for range 2 {
				if got := rc.get(l, h); !slices.Equal(got, want) {
					t.Fatalf("l=%d h=%g: ranks %v, want %v", l, h, got, want)
				}
			}
			if n := sampleSize(l, h); len(want) > n {
				t.Errorf("l=%d h=%g: sampleSize %d, below the %d ranks", l, h, n, len(want))
			}
		}
	}
	for l := range int64(2 * rankCacheMax) {
		if got, want := rc.get(l+1, 3), slices.Collect(gksketch.SampleRanks(l+1, 3)); !slices.Equal(got, want) {
			t.Fatalf("l=%d: ranks %v, want %v", l+1, got, want)
		}
	}
	if n := rc.n.Load(); n > rankCacheMax {
		t.Errorf("cache holds %d shapes, want at most %d", n, rankCacheMax)
	}
	// After more odd shapes than it holds, a shape first met now is held
	// (its first store may be the one that starts the cache over): its
	// windows share one slice.
	rc.get(8192, 20.48)
	a, b := rc.get(8192, 20.48), rc.get(8192, 20.48)
	if &a[0] != &b[0] {
		t.Error("a shape met twice after the cache filled up: its ranks are not shared")
	}
}

// TestParallelCopy checks that parallelCopy copies every byte of a mix of
// small and large copies, the shorter side bounding each.
func TestParallelCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sizes := range [][]int{nil, {0}, {1}, {16 << 10}, {copyShare}, {copyShare + 1, 7}, {5 << 20, 3, 16 << 10, 16 << 10, 1 << 20}} {
		var jobs []copyJob
		var want [][]byte
		for k, n := range sizes {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(r.Uint32())
			}
			dst := make([]byte, n+k%2) // a longer dst keeps its last byte
			jobs = append(jobs, copyJob{dst, src})
			want = append(want, append(slices.Clone(src), make([]byte, k%2)...))
		}
		dsts := make([][]byte, len(jobs))
		for i, j := range jobs {
			dsts[i] = j.dst
		}
		parallelCopy(jobs)
		for i := range dsts {
			if !slices.Equal(dsts[i], want[i]) {
				t.Fatalf("sizes %v: copy %d differs", sizes, i)
			}
		}
	}
}
