package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"streamd/corrsum"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/membudget"
	"streamd/items"
	"streamd/summary"
)

// exactSide returns the number of pairs with x ≤ t (atLeast false) or
// x ≥ t and the sum of their y, and the sum of |y| of all pairs.
func exactSide(x, y []float64, t float64, atLeast bool) (count int64, sum float64) {
	for i, v := range x {
		if (!atLeast && v <= t) || (atLeast && v >= t) {
			count++
			sum += y[i]
		}
	}
	return count, sum
}

// checkPairAnswer checks a against the exact answer over the pairs x, y
// (integer y, so that every sum is exact): both sides' bounds bracket the
// exact count and sum within ε·N and ε·Σ|y|, a quantile's threshold has a
// true rank within ⌊(εN+1)/2⌋ of ⌈φN⌉, and the totals are exact.
func checkPairAnswer(t *testing.T, x, y []float64, a PairAnswer) {
	t.Helper()
	n := int64(len(x))
	var absY, sumY float64
	for _, v := range y {
		absY += math.Abs(v)
		sumY += v
	}
	if a.Totals.Count != n || a.Totals.SumY != sumY || a.Totals.SumAbsY != absY {
		t.Fatalf("totals %+v, want count %d, Σy %v, Σ|y| %v", a.Totals, n, sumY, absY)
	}
	eps := a.Epsilon
	for _, side := range []struct {
		b       corrsum.Bounds
		atLeast bool
	}{{a.AtMost, false}, {a.AtLeast, true}} {
		c, s := exactSide(x, y, a.Threshold, side.atLeast)
		b := side.b
		if b.Threshold != a.Threshold {
			t.Fatalf("bounds of threshold %v in an answer for %v", b.Threshold, a.Threshold)
		}
		if c < b.CountLo || c > b.CountHi || float64(b.CountHi-b.CountLo) > eps*float64(n) {
			t.Fatalf("%+v (at least %v): count %d outside [%d, %d] or wider than εN = %v", a.Query, side.atLeast, c, b.CountLo, b.CountHi, eps*float64(n))
		}
		if s < b.SumLo || s > b.SumHi || b.SumHi-b.SumLo > eps*absY*(1+1e-9) {
			t.Fatalf("%+v (at least %v): sum %v outside [%v, %v] or wider than εΣ|y| = %v", a.Query, side.atLeast, s, b.SumLo, b.SumHi, eps*absY)
		}
	}
	if a.Query.Agg == corrsum.AggQuantile {
		below, _ := exactSide(x, y, math.Nextafter(a.Aggregate, math.Inf(-1)), false)
		atOrBelow, _ := exactSide(x, y, a.Aggregate, false)
		want := int64(math.Ceil(a.Query.Phi * float64(n)))
		slack := int64((eps*float64(n) + 1) / 2)
		if atOrBelow < want-slack || below+1 > want+slack {
			t.Fatalf("φ %v: value %v of ranks (%d, %d], want %d ± %d", a.Query.Phi, a.Aggregate, below, atOrBelow, want, slack)
		}
	}
}

// pairQueries are the aggregate queries the tests ask: quantiles, the
// minimum, the maximum and twice the mean.
func pairQueries() []corrsum.Query {
	return []corrsum.Query{
		{Agg: corrsum.AggQuantile, Phi: 0.5, Factor: 1},
		{Agg: corrsum.AggQuantile, Phi: 0.99, Factor: 1},
		{Agg: corrsum.AggQuantile, Phi: 0, Factor: 1},
		{Agg: corrsum.AggMin, Factor: 1},
		{Agg: corrsum.AggMax, Factor: 1},
		{Agg: corrsum.AggMean, Factor: 2},
	}
}

func TestPairStream(t *testing.T) {
	const eps, w = 0.01, 500
	rng := rand.New(rand.NewPCG(1, 2))
	n := 5321 // ten full windows and a partial one
	base := make([]float64, n)
	yb := make([]float64, n)
	for i := range base {
		base[i] = float64(rng.IntN(300)) // duplicates at every threshold
		yb[i] = float64(rng.IntN(2001) - 1000)
	}
	sorted := slices.Clone(base)
	slices.Sort(sorted)
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	for _, order := range []struct {
		name string
		x    []float64
	}{{"random", base}, {"sorted", sorted}, {"reversed", reversed}} {
		t.Run(order.name, func(t *testing.T) {
			ctx := context.Background()
			p := open(t, Config{Defaults: summary.Config{Epsilon: eps, WindowSize: w}})
			s, err := p.Create("lat", summary.Config{Pairs: true})
			if err != nil {
				t.Fatal(err)
			}
			x := slices.Clone(order.x)
			y := slices.Clone(yb)
			for i := 0; i < n; i += 777 {
				j := min(i+777, n)
				if n, err := p.Accept(ctx, &feed.Batch{Stream: "lat", Pairs: feed.Pairs{X: slices.Clone(x[i:j]), Y: slices.Clone(y[i:j])}}); n != j-i || err != nil {
					t.Fatalf("accept %d pairs: %d, %v", j-i, n, err)
				}
			}
			check := func(s *Stream) {
				t.Helper()
				checkPairStream(t, s, x, y, -1, 0, 150, 150.5, 299, 1000)
				st := s.Stats()
				if st.Count != int64(n) || st.Summarised != int64(n/w*w) || st.Min != sorted[0] || st.Max != sorted[n-1] {
					t.Fatalf("stats %+v", st.Stats)
				}
			}
			check(s)
			data, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			q, err := New(Config{Sorter: gpusort.NewCPU(0)})
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Restore(data); err != nil {
				t.Fatal(err)
			}
			r, err := q.Stream("lat")
			if err != nil {
				t.Fatal(err)
			}
			if !r.IsPairs() || !r.Config().Pairs {
				t.Fatal("restored stream is not a pair stream")
			}
			check(r)
		})
	}
}

// TestPairKinds: pairs create a pair stream, no pairs none; a pair
// stream takes no values or items, and other streams take no pairs.
func TestPairKinds(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 4}})
	if n, err := p.Accept(ctx, &feed.Batch{Stream: "xy", Pairs: feed.Pairs{X: []float64{}, Y: []float64{}}}); n != 0 || err != nil || p.Len() != 0 {
		t.Fatalf("no pairs: %d, %v, %d streams", n, err, p.Len())
	}
	if n, err := p.Accept(ctx, &feed.Batch{Stream: "xy", Pairs: feed.Pairs{X: []float64{3, 1, 2, 5, 4}, Y: []float64{-1, 2, 3, 4, 5}}}); n != 5 || err != nil {
		t.Fatalf("accept pairs: %d, %v", n, err)
	}
	s, err := p.Stream("xy")
	if err != nil || !s.IsPairs() || !s.Config().Pairs || !s.Config().Float64 || !p.IsPairStream("xy") {
		t.Fatalf("pairs made %v, %v", s, err)
	}
	a, err := s.CorrelatedAt(3)
	if err != nil || a.AtMost.CountLo != 3 || a.AtMost.CountHi != 3 || a.AtMost.SumLo != 4 || a.AtLeast.SumHi != 8 {
		t.Fatalf("x ≤ 3 and x ≥ 3: %+v, %v", a, err)
	}
	var list items.Batch
	list.AppendString("a")
	for _, b := range []*feed.Batch{
		{Stream: "xy", Values: []float64{1}},
		{Stream: "xy", Float32: []float32{1}, Moments: feed.Measure([]float32{1})},
		{Stream: "xy", Items: &list},
	} {
		if _, err := p.Accept(ctx, b); !errors.Is(err, ErrWrongKind) {
			t.Errorf("%+v to a pair stream: %v", b, err)
		}
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "v", Values: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "i", Items: &list}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"v", "i"} {
		if _, err := p.Accept(ctx, &feed.Batch{Stream: name, Pairs: feed.Pairs{X: []float64{1}, Y: []float64{2}}}); !errors.Is(err, ErrWrongKind) {
			t.Errorf("pairs to stream %s: %v", name, err)
		}
		st, _ := p.Stream(name)
		if _, err := st.Correlated(corrsum.Query{Agg: corrsum.AggMin, Factor: 1}); !errors.Is(err, ErrWrongKind) {
			t.Errorf("correlated sum of stream %s: %v", name, err)
		}
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "xy", Pairs: feed.Pairs{X: []float64{1}}}); !errors.Is(err, ErrPairLengths) {
		t.Fatalf("pairs of different lengths: %v", err)
	}
	if st := s.Stats(); st.Count != 5 || st.Min != 1 || st.Max != 5 || st.Sum != 15 {
		t.Fatalf("stats %+v", st.Stats)
	}
}

// TestPairConcurrent: queries and stats of a pair stream while pairs
// arrive from several goroutines see a consistent summary, and the final
// answer counts every pair.
func TestPairConcurrent(t *testing.T) {
	ctx := context.Background()
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 300}})
	const senders, per = 4, 2000
	done := make(chan error, senders)
	for g := range senders {
		go func() {
			for i := 0; i < per; i += 100 {
				x, y := make([]float64, 100), make([]float64, 100)
				for j := range x {
					x[j], y[j] = float64((g*per+i+j)%97), 1
				}
				if _, err := p.Accept(ctx, &feed.Batch{Stream: "c", Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for finished := 0; finished < senders; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
			if s, err := p.Stream("c"); err == nil {
				if a, err := s.Correlated(corrsum.Query{Agg: corrsum.AggQuantile, Phi: 0.5, Factor: 1}); err == nil && a.AtMost.CountHi > a.Totals.Count {
					t.Fatalf("answer %+v", a)
				}
				s.Stats()
			}
		}
	}
	s, err := p.Stream("c")
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.CorrelatedAt(1000)
	if err != nil || a.Totals.Count != senders*per || a.AtMost.CountLo != senders*per || a.AtMost.SumLo != senders*per {
		t.Fatalf("final answer %+v, %v", a, err)
	}
}

// pairSorter is a CPU sorter whose pair sorts are counted, and fail when
// fail is set (as a lost GPU's would), leaving the windows unsorted.
type pairSorter struct {
	*gpusort.CPU
	fail  bool
	calls atomic.Int64
}

func (s *pairSorter) SortPairs(ctx context.Context, x, y []float64) error {
	s.calls.Add(1)
	if s.fail {
		return errors.New("lost the GPU")
	}
	return s.CPU.SortPairs(ctx, x, y)
}

// TestPairsSortedBySorter: full pair windows go to the pipeline's sorter
// when it sorts pairs, and to the CPU when it fails; the answers are exact
// either way.
func TestPairsSortedBySorter(t *testing.T) {
	const eps, w, n = 0.01, 400, 4321
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = float64(rng.IntN(500))
		y[i] = float64(rng.IntN(101) - 50)
	}
	for _, fail := range []bool{false, true} {
		sorter := &pairSorter{CPU: gpusort.NewCPU(1), fail: fail}
		p := open(t, Config{Sorter: sorter, Defaults: summary.Config{Epsilon: eps, WindowSize: w}})
		if got, err := p.Accept(context.Background(), &feed.Batch{Stream: "p", Pairs: feed.Pairs{X: slices.Clone(x), Y: slices.Clone(y)}}); got != n || err != nil {
			t.Fatalf("fail %v: accept: %d, %v", fail, got, err)
		}
		if got := sorter.calls.Load(); got != n/w {
			t.Errorf("fail %v: %d pair sorts, want one per full window, %d", fail, got, n/w)
		}
		s, err := p.Stream("p")
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range pairQueries() {
			a, err := s.Correlated(q)
			if err != nil {
				t.Fatal(err)
			}
			checkPairAnswer(t, x, y, a)
		}
	}
}

// TestPairsHugeKeepAccepted: pairs of the largest magnitudes the value
// rule keeps, among ordinary ones, in windows, never make a window the
// summary refuses: every pair Accept counts is in the answers. (Pairs of
// x near 10^308 used to make the window's sum of x overflow, and the
// whole window, earlier batches' pairs included, was dropped.)
func TestPairsHugeKeepAccepted(t *testing.T) {
	const w = 100
	p := open(t, Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: w}})
	ctx := context.Background()
	var sent, accepted int
	var keptX []float64
	for i := range 10 {
		x := make([]float64, 30)
		y := make([]float64, 30)
		for j := range x {
			x[j], y[j] = float64(i*30+j), 1
		}
		if i%3 == 2 { // huge pairs, some beyond the rule
			x[0], y[0] = math.MaxFloat64, 1
			x[1], y[1] = feed.MaxPair, -feed.MaxPair
			x[2], y[2] = -feed.MaxPair, feed.MaxPair
		}
		sent += len(x)
		kx, ky, _, _ := feed.CleanPairs(x, y)
		keptX = append(keptX, kx...)
		n, err := p.Accept(ctx, &feed.Batch{Stream: "p", Pairs: feed.Pairs{X: kx, Y: ky}})
		if err != nil {
			t.Fatal(err)
		}
		accepted += n
	}
	s, err := p.Stream("p")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Count != int64(accepted) || accepted != len(keptX) {
		t.Fatalf("%d pairs sent, %d kept by the rule, %d accepted, the stream counts %d (rejects %v)", sent, len(keptX), accepted, st.Count, st.Rejected)
	}
	a, err := s.CorrelatedAt(100)
	if err != nil {
		t.Fatal(err)
	}
	if a.Totals.Count != int64(accepted) {
		t.Errorf("the summary holds %d pairs, %d accepted", a.Totals.Count, accepted)
	}
}

// TestPairStreamsChargeWhatTheyHold: a pair stream reserves what a value
// stream does and is charged what it holds, so a budget that holds one
// pair stream at its bounds holds many small ones; a batch whose growth
// the budget cannot hold is refused whole, and every pair accepted is
// still counted and answered within ε; what the answers cache is charged.
func TestPairStreamsChargeWhatTheyHold(t *testing.T) {
	cfg := summary.Config{Pairs: true, Epsilon: 0.01, WindowSize: 1024, SlidingWindow: 4096}
	fp := StreamFootprint(cfg)
	if fp.Reserve > 16<<10 || fp.Worst <= fp.Reserve {
		t.Fatalf("footprint %+v: want a reserve of a few KiB and a larger worst case", fp)
	}
	p := open(t, Config{MaxMemory: fp.Worst})
	ctx := context.Background()
	pairs := func(n int) feed.Pairs {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i*7919%n), float64(i%5)
		}
		return feed.Pairs{X: x, Y: y}
	}
	const small = 40
	for i := range small {
		name := fmt.Sprint("small", i)
		if _, err := p.Create(name, cfg); err != nil {
			t.Fatalf("create stream %d of %d pairs: %v (memory %+v)", i, small, err, p.Memory())
		}
		if n, err := p.Accept(ctx, &feed.Batch{Stream: name, Pairs: pairs(100)}); n != 100 || err != nil {
			t.Fatalf("%s: accepted %d, %v", name, n, err)
		}
	}
	// Fill windows of one stream until the budget refuses a batch.
	accepted := 0
	var refused error
	var before membudget.Stats
	for range 1000 {
		before = p.Memory()
		n, err := p.Accept(ctx, &feed.Batch{Stream: "small0", Pairs: pairs(cfg.WindowSize)})
		accepted += n
		if err != nil {
			refused = err
			break
		}
	}
	m := p.Memory()
	if !errors.Is(refused, ErrMemoryBudget) {
		t.Fatalf("after %d pairs: %v, want a refusal for the memory budget", accepted, refused)
	}
	if accepted%cfg.WindowSize != 0 {
		t.Errorf("accepted %d pairs: part of a batch", accepted)
	}
	s := p.lookup("small0")
	if got := s.PairTotals().Count; got != int64(100+accepted) {
		t.Errorf("small0 counts %d pairs, want %d", got, 100+accepted)
	}
	// The pairs accepted, and none of the refused batch, answer within ε.
	held := pairs(100)
	x, y := held.X, held.Y
	for range accepted / cfg.WindowSize {
		b := pairs(cfg.WindowSize)
		x, y = append(x, b.X...), append(y, b.Y...)
	}
	for _, q := range pairQueries() {
		a, err := s.Correlated(q)
		if err != nil {
			t.Fatal(err)
		}
		checkPairAnswer(t, x, y, a)
	}
	for _, c := range []float64{-1, 0, 17, 500.5, float64(cfg.WindowSize)} {
		a, err := s.CorrelatedAt(c)
		if err != nil {
			t.Fatal(err)
		}
		checkPairAnswer(t, x, y, a)
	}
	s.mu.Lock()
	holds := s.summaryBytes()
	s.mu.Unlock()
	if st := s.Stats(); st.Memory != fp.Reserve+max(holds-fp.Summaries, 0) {
		t.Errorf("small0 charged %d, want its reserve %d and what it holds past its share (%d)", st.Memory, fp.Reserve, holds)
	}
	// The refused batch charged nothing; what was charged before it was
	// within the limit but for the summary's growth past its window's
	// charge, measured after the window, which the budget never refuses.
	if m.Used != before.Used || m.Windows != 0 {
		t.Errorf("memory %+v after the refused batch, %+v before: want the same, and no window charged", m, before)
	}
}
