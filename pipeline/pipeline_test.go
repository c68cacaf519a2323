package pipeline

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/exact"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

// open returns an open pipeline of cfg, with the CPU sorter unless cfg
// names one, closed when the test or benchmark ends.
func open(tb testing.TB, cfg Config) *Pipeline {
	tb.Helper()
	return openRestored(tb, cfg, nil)
}

// openRestored is open for a pipeline restored, before it opens, from
// snapshot (unless it is nil) and then from each of deltas in turn.
func openRestored(tb testing.TB, cfg Config, snapshot []byte, deltas ...[]byte) *Pipeline {
	tb.Helper()
	if cfg.Sorter == nil {
		cfg.Sorter = gpusort.NewCPU(0)
	}
	p, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if snapshot != nil {
		if err := p.Restore(snapshot); err != nil {
			tb.Fatal(err)
		}
	}
	for _, d := range deltas {
		if err := p.RestoreDelta(d); err != nil {
			tb.Fatal(err)
		}
	}
	if err := p.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

func checkStream(t *testing.T, s *Stream, values []float64, eps float64) {
	t.Helper()
	rounded := make([]float64, len(values))
	for i, v := range values {
		rounded[i] = float64(float32(v))
	}
	key := exact.New(rounded)
	v := s.View(true)
	if v.Count() != key.N() {
		t.Fatalf("%s: view counts %d, want %d", s.Name(), v.Count(), key.N())
	}
	for _, phi := range []float64{0, 0.01, 0.5, 0.99, 1} {
		x, lo, hi := v.Quantile(phi)
		if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
	}
	var hh []float64
	for _, e := range v.HeavyHitters(0.05) {
		hh = append(hh, e.Value)
	}
	if err := key.CheckHeavyHitters(0.05, eps, hh); err != nil {
		t.Fatalf("%s: %v", s.Name(), err)
	}
}

// TestReadYourWrites checks, after every Accept, that a view counts every
// value accepted so far — partial window and windows in flight included —
// within ε of the exact answers.
func TestReadYourWrites(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 4}, 50000)
	ctx := context.Background()
	for i := 0; i < len(x); i += 1777 {
		chunk := append([]float64(nil), x[i:min(i+1777, len(x))]...)
		if err := acceptValues(ctx, p, feed.Local, "z", chunk, time.Time{}); err != nil {
			t.Fatal(err)
		}
		s, _ := p.Stream("z")
		checkStream(t, s, x[:min(i+1777, len(x))], 0.01)
	}
	s, _ := p.Stream("z")
	if st := s.Stats(); st.Count != int64(len(x)) {
		t.Errorf("stats count %d, want %d", st.Count, len(x))
	}
}

// TestManyStreams pushes to 10,000 small streams concurrently.
func TestManyStreams(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 64}})
	ctx := context.Background()
	const streams, per = 10000, 100
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < streams; i += 4 {
				vals := make([]float64, per)
				for j := range vals {
					vals[j] = float64((i*7 + j) % 50)
				}
				if err := acceptValues(ctx, p, feed.Local, fmt.Sprintf("s.%d", i), vals, time.Time{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p.Len() != streams {
		t.Fatalf("%d streams, want %d", p.Len(), streams)
	}
	for _, i := range []int{0, 1, 4999, 9999} {
		s, err := p.Stream(fmt.Sprintf("s.%d", i))
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, per)
		for j := range vals {
			vals[j] = float64((i*7 + j) % 50)
		}
		checkStream(t, s, vals, 0.01)
	}
}

func TestStreamLimit(t *testing.T) {
	p := open(t, Config{MaxStreams: 3})
	ctx := context.Background()
	for i := range 3 {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprint("a", i), []float64{1}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	err := acceptValues(ctx, p, feed.Local, "a3", []float64{1}, time.Time{})
	if !errors.Is(err, feed.ErrStreamLimit) {
		t.Fatalf("fourth stream: %v", err)
	}
	p.Reject("a4", feed.Local, feed.ReasonStreamLimit, 1)
	if p.Rejected()[feed.ReasonStreamLimit] != 1 {
		t.Errorf("unattributed rejects %v", p.Rejected())
	}
	if _, err := p.Create("bad name", summary.Config{}); err == nil {
		t.Error("created a stream with a bad name")
	}
}

// blockingSorter holds every batch until released, to test back-pressure.
type blockingSorter struct {
	*gpusort.CPU
	release chan struct{}
}

func (b *blockingSorter) Digest(ctx context.Context, batch *gpusort.Quad, specs *[gpusort.Channels]summary.WindowSpec, out *[gpusort.Channels]summary.Digest) error {
	<-b.release
	return b.CPU.Digest(ctx, batch, specs, out)
}

func TestBackPressure(t *testing.T) {
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	p := open(t, Config{Defaults: summary.Config{WindowSize: 10}, Queue: 2, Sorter: bs, Linger: time.Millisecond})
	t.Cleanup(release) // runs before the pipeline's Close
	accepted := make(chan int, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := range 100 {
			if err := acceptValues(ctx, p, feed.Local, "bp", make([]float64, 10), time.Time{}); err != nil {
				return
			}
			accepted <- i
		}
	}()
	// With the sorter stuck, at most the queue (2), a batch being packed,
	// one waiting to sort and one in each worker (4 windows each), and the
	// one being sent can be accepted.
	deadline := time.After(2 * time.Second)
	n := 0
wait:
	for {
		select {
		case <-accepted:
			n++
		case <-time.After(200 * time.Millisecond):
			break wait
		case <-deadline:
			break wait
		}
	}
	if n >= 100 || n > 2+4+4+p.cfg.Workers*4+1 {
		t.Fatalf("accepted %d windows with the sorter stuck", n)
	}
	release()
	for n < 100 {
		select {
		case <-accepted:
			n++
		case <-time.After(5 * time.Second):
			t.Fatalf("stuck after %d", n)
		}
	}
}

func TestCloseFinishesWindows(t *testing.T) {
	p, _ := New(Config{Defaults: summary.Config{WindowSize: 100}, Sorter: gpusort.NewCPU(0)})
	_ = p.Open(context.Background())
	ctx := context.Background()
	for range 50 {
		_ = acceptValues(ctx, p, feed.Local, "c", make([]float64, 99), time.Time{})
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, _ := p.Stream("c")
	st := s.Stats()
	if st.Count != 4950 || st.Summarised != 4900 {
		t.Errorf("after close: count %d, summarised %d", st.Count, st.Summarised)
	}
	// Accepts after Close are refused, and add nothing.
	if err := acceptValues(ctx, p, feed.Local, "c", []float64{1, 2}, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("accept after close: %v, want ErrClosed", err)
	}
	if n, err := acceptEncoded(ctx, p, "c", 8, make([]byte, 16)); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("accept encoded after close: %d, %v, want ErrClosed", n, err)
	}
	if err := acceptValues(ctx, p, feed.Source{Topic: "t"}, "c", []float64{3}, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("accept partition after close: %v, want ErrClosed", err)
	}
	if v := s.View(true); v.Count() != 4950 {
		t.Errorf("view after close counts %d, want 4950", v.Count())
	}
}

// TestCloseRacesAccepts closes the pipeline while producers of values,
// encoded values and items accept into it: every accept that succeeded is
// counted, and exactly those, in the streams and in a snapshot taken after
// Close; every accept after Close fails with ErrClosed.
func TestCloseRacesAccepts(t *testing.T) {
	p, err := New(Config{Defaults: summary.Config{WindowSize: 100}, Sorter: gpusort.NewCPU(0), Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var (
		wg       sync.WaitGroup
		acked    [3]atomic.Int64 // values, encoded values, items
		refused  atomic.Int64
		closed   atomic.Bool
		accepted = make(chan struct{}, 3)
	)
	frame := make([]byte, 8*37)
	var batch items.Batch
	for range 37 {
		batch.AppendString("x")
	}
	for i, accept := range []func() (int, error){
		func() (int, error) {
			return 37, acceptValues(ctx, p, feed.Local, "v", make([]float64, 37), time.Time{})
		},
		func() (int, error) { return acceptEncoded(ctx, p, "e", 8, frame) },
		func() (int, error) { return 37, acceptItemBatch(ctx, p, feed.Local, "i", &batch, time.Time{}) },
	} {
		wg.Go(func() {
			for first := true; ; first = false {
				after := closed.Load() // this accept starts after Close returned
				n, err := accept()
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("accept: %v, want nil or ErrClosed", err)
					}
					refused.Add(1)
					return
				}
				if after {
					t.Errorf("accept after close: accepted %d", n)
					return
				}
				acked[i].Add(int64(n))
				if first {
					accepted <- struct{}{}
				}
			}
		})
	}
	for range 3 {
		<-accepted
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)
	wg.Wait()
	if refused.Load() != 3 {
		t.Errorf("%d producers refused, want 3", refused.Load())
	}
	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(Config{Defaults: summary.Config{WindowSize: 100}, Sorter: gpusort.NewCPU(0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Restore(data); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"v", "e", "i"} {
		for _, r := range []*Pipeline{p, q} {
			s, err := r.Stream(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Stats().Count; got != acked[i].Load() {
				t.Errorf("stream %s counts %d, want the %d accepted", name, got, acked[i].Load())
			}
		}
	}
}

// TestCloseRacesManyAccepts closes the pipeline while more goroutines
// than sendMu has stripes accept values, values from Kafka partitions
// and items, each into its own stream, and the collector runs again and
// again, emptying the pool of stripes that lockOpen takes its lock from:
// every accept that succeeded is counted, and no value is added once
// Close has returned.
func TestCloseRacesManyAccepts(t *testing.T) {
	const producers = 2*openStripes + 3
	p := open(t, Config{Defaults: summary.Config{WindowSize: 64}, Queue: 2}) // closed below; Close again is a no-op
	ctx := context.Background()
	var (
		producing sync.WaitGroup
		acked     [producers]atomic.Int64
		started   sync.WaitGroup
	)
	stop := make(chan struct{})
	var collecting sync.WaitGroup
	collecting.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	})
	started.Add(producers)
	for g := range producers {
		name := fmt.Sprintf("g%d", g)
		producing.Go(func() {
			for i := 0; ; i++ {
				var err error
				switch g % 3 {
				case 0:
					err = acceptValues(ctx, p, feed.Local, name, []float64{1, 2, 3, 4, 5}, time.Time{})
				case 1:
					err = acceptValues(ctx, p, feed.Source{Topic: "t", Partition: g}, name, []float64{1, 2, 3, 4, 5}, time.Time{})
				default:
					var b items.Batch
					for k := range 5 {
						b.AppendString(fmt.Sprint(k))
					}
					err = acceptItemBatch(ctx, p, feed.Local, name, &b, time.Time{})
				}
				if err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("accept: %v, want nil or ErrClosed", err)
					}
					if i == 0 {
						started.Done()
					}
					return
				}
				acked[g].Add(5)
				if i == 0 {
					started.Done()
				}
			}
		})
	}
	started.Wait()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var atClose [producers]int64
	for g := range producers {
		if s, err := p.Stream(fmt.Sprintf("g%d", g)); err == nil {
			atClose[g] = s.Stats().Count
		}
	}
	producing.Wait()
	close(stop)
	collecting.Wait()
	for g := range producers {
		var count int64
		if s, err := p.Stream(fmt.Sprintf("g%d", g)); err == nil {
			count = s.Stats().Count
		}
		if count != atClose[g] {
			t.Errorf("stream g%d counts %d, %d when Close returned", g, count, atClose[g])
		}
		if want := acked[g].Load(); count != want {
			t.Errorf("stream g%d counts %d, want the %d accepted", g, count, want)
		}
	}
}

// TestSnapshotRestore restores a snapshot taken with windows in flight and
// a partial window into a new pipeline: every value is counted once, the
// answers hold, and the restored windows get sorted.
func TestSnapshotRestore(t *testing.T) {
	bs := &blockingSorter{CPU: gpusort.NewCPU(1), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(bs.release) }) }
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}, Sorter: bs})
	t.Cleanup(release)
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 8}, 5500)
	ctx := context.Background()
	if err := acceptValues(ctx, p, feed.Local, "n", append([]float64(nil), x...), time.Time{}); err != nil {
		t.Fatal(err)
	}
	p.Reject("n", feed.Local, feed.ReasonNaN, 3)
	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := openRestored(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}}, data)
	s, err := q.Stream("n")
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, s, x, 0.01)
	if st := s.Stats(); st.Count != 5500 || st.Rejected[feed.ReasonNaN] != 3 {
		t.Fatalf("restored stats %+v", st)
	}
	// The restored in-flight windows are sorted and summarised.
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Summarised != 5000 {
		if time.Now().After(deadline) {
			t.Fatalf("restored windows not summarised: %+v", s.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	checkStream(t, s, x, 0.01)
	for i := range data {
		if i%97 != 0 {
			continue
		}
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x10
		r, _ := New(Config{Sorter: gpusort.NewCPU(0)})
		if err := r.Restore(bad); err == nil {
			t.Fatalf("corrupt snapshot (byte %d) restored", i)
		}
	}
}

// failingSorter fails every batch, as a GPU that went away would.
type failingSorter struct{ *gpusort.CPU }

func (failingSorter) Digest(context.Context, *gpusort.Quad, *[gpusort.Channels]summary.WindowSpec, *[gpusort.Channels]summary.Digest) error {
	return errors.New("device lost")
}

// TestSorterFailure: batches the sorter fails on are digested on the CPU,
// so every value reaches the summaries and the answers hold.
func TestSorterFailure(t *testing.T) {
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 500}, Sorter: failingSorter{gpusort.NewCPU(1)}})
	x, _ := synth.Generate(synth.Spec{Dist: synth.Pareto, Seed: 9}, 20000)
	if err := acceptValues(context.Background(), p, feed.Local, "f", append([]float64(nil), x...), time.Time{}); err != nil {
		t.Fatal(err)
	}
	s, _ := p.Stream("f")
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Summarised != int64(len(x)) {
		if time.Now().After(deadline) {
			t.Fatalf("summarised %d of %d", s.Stats().Summarised, len(x))
		}
		time.Sleep(time.Millisecond)
	}
	if c := p.Counters(); c.SortErrors == 0 {
		t.Error("no sort error counted")
	}
	checkStream(t, s, x, 0.01)
}

// stagingCPU is the CPU sorter lending window buffers as a GPU back-end
// does (gpusort.Stager), counting those out.
type stagingCPU struct {
	*gpusort.CPU
	mu   sync.Mutex
	lent map[*float32]bool
}

func (s *stagingCPU) StageF32(n int) []float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := make([]float32, n)
	s.lent[&b[0]] = true
	return b
}

func (s *stagingCPU) StageF64(n int) []float64 { return nil }

func (s *stagingCPU) UnstageF32(w []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lent[&w[:1][0]] {
		panic("UnstageF32 of a buffer not lent, or twice")
	}
	delete(s.lent, &w[:1][0])
}

func (s *stagingCPU) UnstageF64(w []float64) {}

func (s *stagingCPU) out() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lent)
}

// TestStagedWindows: with a sorter that lends buffers, windows are filled
// in them, answers stay exact within ε, and every buffer comes back once
// its window is summarised or its stream deleted: only the partial
// windows of the streams left hold one.
func TestStagedWindows(t *testing.T) {
	st := &stagingCPU{CPU: gpusort.NewCPU(0), lent: map[*float32]bool{}}
	p := open(t, Config{Sorter: st, Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 9}, 25500)
	for _, name := range []string{"a", "b", "c"} {
		for i := 0; i < len(x); i += 700 {
			if err := acceptValues(ctx, p, feed.Local, name, slices.Clone(x[i:min(i+700, len(x))]), time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st.out() == 0 {
		t.Fatal("no window was filled in a lent buffer")
	}
	if err := p.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "c"} {
		s, _ := p.Stream(name)
		checkStream(t, s, x, 0.01)
	}
	if n := st.out(); n != 2 {
		t.Errorf("%d lent buffers out after close, want 2 (the partial windows of a and c)", n)
	}
}

// TestWorkers: however many sort workers digest batches at once — and so
// in whatever order the windows of one stream reach its summaries — every
// answer stays within ε of the exact one, for one hot stream and several.
func TestWorkers(t *testing.T) {
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 11}, 120000)
	for _, workers := range []int{1, 3, 16} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			p := open(t, Config{Workers: workers, Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000}})
			ctx := context.Background()
			var wg sync.WaitGroup
			for _, name := range []string{"hot", "a", "b"} {
				// Four producers feed each stream at once, as connections do.
				for part := range 4 {
					wg.Go(func() {
						for i := part * 1000; i < len(x); i += 4000 {
							if err := acceptValues(ctx, p, feed.Local, name, slices.Clone(x[i:i+1000]), time.Time{}); err != nil {
								t.Error(err)
								return
							}
						}
					})
				}
			}
			wg.Wait()
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"hot", "a", "b"} {
				s, err := p.Stream(name)
				if err != nil {
					t.Fatal(err)
				}
				checkStream(t, s, x, 0.01)
			}
		})
	}
}

// TestAcceptSpecials feeds values with NaN, ±Inf, values beyond the range
// of float32, −0 and values too small for float32 through Accept and
// acceptEncoded (float32 and float64 frames) into float32 and float64
// streams, and checks the statistics and rejects against the exact ones
// and the quantiles within ε: nothing non-finite is ever stored.
func TestAcceptSpecials(t *testing.T) {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 3.5e38, math.Copysign(0, -1), 1e-50, -1e-50}
	r := rand.New(rand.NewPCG(5, 6))
	var in []float64
	for range 3000 {
		if r.IntN(5) == 0 {
			in = append(in, specials[r.IntN(len(specials))])
		} else {
			in = append(in, math.Round(r.NormFloat64()*1e3))
		}
	}
	const eps = 0.01
	ctx := context.Background()
	for _, f64 := range []bool{false, true} {
		for _, size := range []int{0, 4, 8} { // 0: Accept
			name := fmt.Sprintf("f64=%v/size=%d", f64, size)
			t.Run(name, func(t *testing.T) {
				p := open(t, Config{})
				s, err := p.Create("s", summary.Config{Epsilon: eps, WindowSize: 256, Float64: f64})
				if err != nil {
					t.Fatal(err)
				}
				var kept []float64
				var nan, inf uint64
				for _, v := range in {
					if size == 4 {
						v = float64(float32(v))
					}
					if !f64 {
						v = float64(float32(v))
					}
					switch {
					case math.IsNaN(v):
						nan++
					case math.IsInf(v, 0):
						inf++
					default:
						kept = append(kept, v+0)
					}
				}
				for i := 0; i < len(in); i += 97 {
					chunk := in[i:min(i+97, len(in))]
					if size == 0 {
						err = acceptValues(ctx, p, feed.Local, "s", slices.Clone(chunk), time.Time{})
					} else {
						var data []byte
						for _, v := range chunk {
							if size == 4 {
								data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
							} else {
								data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
							}
						}
						_, err = acceptEncoded(ctx, p, "s", size, data)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				var sum float64
				for _, v := range kept {
					sum += v
				}
				st := s.Stats()
				if st.Count != int64(len(kept)) || st.Sum != sum || st.Min != slices.Min(kept) || st.Max != slices.Max(kept) {
					t.Errorf("stats count %d sum %v min %v max %v, want %d %v %v %v",
						st.Count, st.Sum, st.Min, st.Max, len(kept), sum, slices.Min(kept), slices.Max(kept))
				}
				if st.Rejected[feed.ReasonNaN] != nan || st.Rejected[feed.ReasonInf] != inf {
					t.Errorf("rejected %v, want %d NaN, %d Inf", st.Rejected, nan, inf)
				}
				key := exact.New(kept)
				v := s.View(false)
				for _, phi := range []float64{0, 0.01, 0.25, 0.5, 0.75, 0.99, 1} {
					x, lo, hi := v.Quantile(phi)
					if math.IsInf(x, 0) || math.IsNaN(x) {
						t.Fatalf("quantile %v is %v", phi, x)
					}
					if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
						t.Errorf("quantile %v: %v", phi, err)
					}
				}
			})
		}
	}
}

// TestViewWhileIngesting queries a stream while one producer feeds it in
// order: views are built with the stream's lock released, yet each must be
// a consistent snapshot — counting exactly the first n values for its
// count n, within ε of their exact answers — for the local part alone and
// with Kafka partitions beside it.
func TestViewWhileIngesting(t *testing.T) {
	for _, kafka := range []bool{false, true} {
		t.Run(fmt.Sprintf("kafka=%v", kafka), func(t *testing.T) {
			const eps = 0.01
			p := open(t, Config{Defaults: summary.Config{Epsilon: eps, WindowSize: 2000}})
			x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 7}, 200000)
			for i := range x {
				x[i] = float64(float32(x[i]))
			}
			ctx := context.Background()
			if _, err := p.Create("s", summary.Config{Epsilon: eps, WindowSize: 2000}); err != nil {
				t.Fatal(err)
			}
			var before []float64 // in a Kafka partition's part: answers merge the parts' views
			if kafka {
				before = x[len(x)-5000:]
				x = x[:len(x)-5000]
				if err := acceptValues(ctx, p, feed.Source{Topic: "t", Partition: 3}, "s", slices.Clone(before), time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < len(x); i += 700 {
					if err := acceptValues(ctx, p, feed.Local, "s", slices.Clone(x[i:min(i+700, len(x))]), time.Time{}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			s := mustStream(t, p, "s")
			views := 0
			for running := true; running; views++ {
				select {
				case <-done:
					running = false
				default:
				}
				v := s.View(views%2 == 0)
				n := v.Count() - int64(len(before))
				if v.Count() == 0 {
					continue
				}
				key := exact.New(append(slices.Clone(before), x[:n]...))
				for _, phi := range []float64{0.1, 0.5, 0.9} {
					x, lo, hi := v.Quantile(phi)
					if err := key.CheckQuantile(phi, x, eps, lo, hi); err != nil {
						t.Fatalf("view %d of %d values: %v", views, n, err)
					}
				}
			}
			if v := s.View(true); v.Count() != int64(len(before)+len(x)) {
				t.Fatalf("final view counts %d of %d", v.Count(), len(before)+len(x))
			}
			t.Logf("%d views while ingesting", views)
		})
	}
}
