package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamd/feed"
	"streamd/slidingwindow"
	"streamd/summary"
	"streamd/synth"
)

// TestManySmallStreamsFit: at the default configuration, thousands of
// streams of a few hundred values each fit a budget that would hold only
// a handful at their worst case, and every value of every stream is
// counted; a big stream beside them is answered within ε too.
func TestManySmallStreamsFit(t *testing.T) {
	const streams, each = 5000, 200
	limit := int64(64 << 20)
	p := open(t, Config{MaxMemory: limit})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Seed: 5}, streams*each)
	for i := range streams {
		if err := acceptValues(ctx, p, feed.Local, fmt.Sprint("s", i), x[i*each:(i+1)*each], time.Time{}); err != nil {
			t.Fatalf("stream %d of %d: %v (%+v)", i+1, streams, err, p.Memory())
		}
	}
	m := p.Memory()
	t.Logf("%d streams of %d values: %+v", streams, each, m)
	if m.Used > limit || m.Refused != 0 {
		t.Errorf("memory %+v, limit %d", m, limit)
	}
	for _, i := range []int{0, 1, streams / 2, streams - 1} {
		s := mustStream(t, p, fmt.Sprint("s", i))
		checkStream(t, s, x[i*each:(i+1)*each], s.Config().Epsilon)
	}
	for i := range streams {
		if st := mustStream(t, p, fmt.Sprint("s", i)).Stats(); st.Count != each {
			t.Fatalf("stream %d counts %d values, want %d", i, st.Count, each)
		}
	}
	// A big stream grows within what is left, all its values counted.
	big, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Seed: 6}, 3*(1<<16)+123)
	for i := 0; i < len(big); i += 10000 {
		if err := acceptValues(ctx, p, feed.Local, "big", big[i:min(i+10000, len(big))], time.Time{}); err != nil {
			t.Fatalf("big stream at %d values: %v (%+v)", i, err, p.Memory())
		}
	}
	s := mustStream(t, p, "big")
	checkStream(t, s, big, s.Config().Epsilon)
}

// TestChargeFollowsValues: a stream's charge is its small reservation
// and what its first buffers hold past its share, then grows with its
// values; it is always exactly its reservation, what its buffers and
// summaries hold past their share of it, and its windows in flight.
func TestChargeFollowsValues(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 20000}
	p := open(t, Config{Defaults: cfg, MaxMemory: 1 << 30})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 7}, 30000)
	var first, firstHeld, last int64
	for i := 0; i < len(x); i += 100 {
		if err := acceptValues(ctx, p, feed.Local, "g", x[i:i+100], time.Time{}); err != nil {
			t.Fatal(err)
		}
		charged, held, inflight := checkCharge(t, p, "g", i+100)
		if i == 0 {
			first, firstHeld = charged, held
		}
		last = charged - inflight
	}
	s := mustStream(t, p, "g")
	if fp := s.account.Footprint(); first != fp.Reserve+max(firstHeld-fp.Summaries, 0) || firstHeld > 1024 || first > 4<<10 {
		t.Errorf("after 100 values: charged %d, want the reservation %d and the %d bytes of the first buffers past its share, a few KiB", first, fp.Reserve, firstHeld)
	}
	// The sliding window alone keeps its last 20,000 values raw.
	if last < 4*cfg.SlidingWindow {
		t.Errorf("after %d values: charged %d without the windows in flight, less than the %d bytes of the raw sliding window", len(x), last, 4*cfg.SlidingWindow)
	}
	checkStream(t, s, x, cfg.Epsilon)
}

// checkCharge checks that stream name of p, after n values, is charged
// exactly its reservation, what its buffers and summaries hold past their
// share of it, and its windows in flight. It returns the charge, the bytes
// the stream holds, and the bytes of its windows in flight.
func checkCharge(t *testing.T, p *Pipeline, name string, n int) (charged, held, inflight int64) {
	t.Helper()
	s := mustStream(t, p, name)
	s.mu.Lock()
	held, windows := s.summaryBytes(), len(s.local.inflight)
	fp := s.account.Footprint()
	charged = s.account.Charged()
	s.mu.Unlock()
	inflight = int64(windows) * fp.Window
	if want := fp.Reserve + max(held-fp.Summaries, 0) + inflight; charged != want {
		t.Fatalf("after %d values: charged %d, want %d (reserve %d, holding %d, %d windows in flight)", n, charged, want, fp.Reserve, held, windows)
	}
	return charged, held, inflight
}

// TestRefusedGrowthRefusesTheBatch: when the budget cannot hold the growth
// that a batch needs and nothing in flight would free memory, the batch is
// refused whole, with an error that the inputs count as memory_budget, and
// nothing of it is kept; once memory is freed, the same batch is accepted
// and every value is answered.
func TestRefusedGrowthRefusesTheBatch(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}
	p := open(t, Config{Defaults: cfg, MaxMemory: 400 << 10})
	ctx := context.Background()
	if _, err := p.Create("s", cfg); err != nil {
		t.Fatal(err)
	}
	var fillers int
	for ; ; fillers++ {
		if _, err := p.Create(fmt.Sprint("f", fillers), cfg); err != nil {
			break
		}
	}
	x, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 8}, 1500)
	before := p.Memory()
	_, err := p.Accept(ctx, &feed.Batch{Stream: "s", Values: x})
	if r, ok := feed.RefusalReason(err); !ok || r != feed.ReasonMemoryBudget {
		t.Fatalf("a batch that fills a window past the budget (%d streams beside): %v, want a memory_budget refusal", fillers, err)
	}
	s := mustStream(t, p, "s")
	if st := s.Stats(); st.Count != 0 {
		t.Fatalf("after a refused batch the stream counts %d values, want 0", st.Count)
	}
	if snap, err := s.Last(1); err == nil && snap.Count() != 0 {
		t.Fatalf("after a refused batch the sliding window holds %d values, want 0", snap.Count())
	}
	if after := p.Memory(); after.Used != before.Used {
		t.Fatalf("a refused batch changed the charges: %+v, before %+v", after, before)
	}
	for i := range fillers {
		if err := p.Delete(fmt.Sprint("f", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Accept(ctx, &feed.Batch{Stream: "s", Values: x}); err != nil {
		t.Fatalf("with memory freed: %v", err)
	}
	checkStream(t, s, x, cfg.Epsilon)
}

// TestSmallBatchesCharged: batches of a few values, most of which fit the
// buffers a stream holds and take the short way in, with a sliding window
// of blocks that the batches seal, leave the stream charged exactly its
// reservation and what it holds past its share, after every batch.
func TestSmallBatchesCharged(t *testing.T) {
	cfg := summary.Config{Epsilon: 0.05, WindowSize: 500, SlidingWindow: 1 << 20}
	p := open(t, Config{Defaults: cfg, MaxMemory: 1 << 30})
	ctx := context.Background()
	x, _ := synth.Generate(synth.Spec{Dist: synth.Uniform, Seed: 8}, 20000)
	vals, _, _ := feed.AppendFloat32(nil, x)
	for i, n := 0, 1; i < len(vals); i, n = i+n, n%7+1 {
		part := vals[i:min(i+n, len(vals))]
		if _, err := p.Accept(ctx, &feed.Batch{Stream: "g", Float32: part, Moments: feed.Measure(part), At: time.Unix(0, int64(i))}); err != nil {
			t.Fatal(err)
		}
		checkCharge(t, p, "g", i+len(part))
	}
	s := mustStream(t, p, "g")
	if s.recent.Mode() != slidingwindow.Blocks || s.recent.Blocks() == 0 {
		t.Fatalf("sliding window in mode %v with %d blocks, want blocks", s.recent.Mode(), s.recent.Blocks())
	}
	checkStream(t, s, x, cfg.Epsilon)
}
