package pipeline

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

// feedPartitions accepts x into stream name, value i from partition i mod
// parts of topic "t" (and the local inputs for every seventh value), in
// batches of 100. It returns the values of each source.
func feedPartitions(t *testing.T, p *Pipeline, name string, x []float64, parts int) map[feed.Source][]float64 {
	t.Helper()
	by := make(map[feed.Source][]float64)
	for i, v := range x {
		src := feed.Source{Topic: "t", Partition: i % parts}
		if i%7 == 0 {
			src = feed.Local
		}
		by[src] = append(by[src], v)
	}
	ctx := context.Background()
	for src, vals := range by {
		for i := 0; i < len(vals); i += 100 {
			batch := slices.Clone(vals[i:min(i+100, len(vals))])
			var err error
			if src == feed.Local {
				err = acceptValues(ctx, p, feed.Local, name, batch, time.Time{})
			} else {
				err = acceptValues(ctx, p, src, name, batch, time.Time{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return by
}

// union returns the values of the sources of by that keep accepts.
func union[T any](by map[feed.Source][]T, keep func(feed.Source) bool) []T {
	var out []T
	for src, vals := range by {
		if keep(src) {
			out = append(out, vals...)
		}
	}
	return out
}

// TestPartitions: a stream keeps each partition's values apart; its
// answers cover the local part and the partitions owned, within ε; a
// partition's state moves to another pipeline whole, and a snapshot keeps
// the parts and which are released.
func TestPartitions(t *testing.T) {
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: 1000, SlidingWindow: 5000}}
	p := open(t, cfg)
	x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sorted, Seed: 11}, 60000)
	by := feedPartitions(t, p, "z", x, 4)
	s, _ := p.Stream("z")
	checkStream(t, s, x, 0.01)
	if got := len(s.Parts(false, nil)); got != 5 {
		t.Fatalf("%d parts, want 5", got)
	}

	p.OwnPartitions([]feed.Source{tpOf(0), tpOf(3)})
	owned := union(by, func(src feed.Source) bool { return src == feed.Local || src == tpOf(0) || src == tpOf(3) })
	checkStream(t, s, owned, 0.01)
	if st := s.Stats(); st.Count != int64(len(owned)) {
		t.Fatalf("stats count %d, want %d", st.Count, len(owned))
	}
	if last, err := s.Last(5000); err != nil || last.Count() != 5000 {
		t.Fatalf("last 5000: %v", err)
	}

	// Hand partition 1 to another pipeline, which has stale values of its
	// own for it, and values of partition 2.
	states, err := p.PartitionState(tpOf(1))
	if err != nil || len(states) != 1 {
		t.Fatalf("partition state: %d parts, %v", len(states), err)
	}
	q := open(t, cfg)
	ctx := context.Background()
	stale := []float64{1e9, 1e9, 1e9}
	if err := acceptValues(ctx, q, tpOf(1), "z", slices.Clone(stale), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, q, tpOf(1), "gone", slices.Clone(stale), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, q, tpOf(2), "z", slices.Clone(by[tpOf(2)]), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := q.ReplacePartition(ctx, tpOf(1), states); err != nil {
		t.Fatal(err)
	}
	qs, _ := q.Stream("z")
	checkStream(t, qs, append(slices.Clone(by[tpOf(1)]), by[tpOf(2)]...), 0.01)
	if g, _ := q.Stream("gone"); g.Stats().Count != 0 {
		t.Fatalf("stale part of another stream kept: %+v", g.Stats())
	}
	// Emptying a partition drops its values.
	if err := q.ReplacePartition(ctx, tpOf(2), nil); err != nil {
		t.Fatal(err)
	}
	checkStream(t, qs, by[tpOf(1)], 0.01)

	// A snapshot keeps the parts and the released ones.
	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := New(Config{Defaults: cfg.Defaults, Sorter: gpusort.NewCPU(0)})
	if err := r.Restore(data); err != nil {
		t.Fatal(err)
	}
	if err := r.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	rs, _ := r.Stream("z")
	checkStream(t, rs, owned, 0.01)
	r.OwnPartitions([]feed.Source{tpOf(0), tpOf(1), tpOf(2), tpOf(3)})
	checkStream(t, rs, x, 0.01)

	// Corrupt states are refused whole.
	bad := slices.Clone(states[0].Data)
	bad[len(bad)/2] ^= 1
	if err := q.ReplacePartition(ctx, tpOf(1), []PartState{{Stream: "z", Data: bad}}); err == nil {
		t.Fatal("corrupt part state accepted")
	}
	if err := q.ReplacePartition(ctx, tpOf(3), states); err == nil {
		t.Fatal("a part of partition 1 accepted as partition 3")
	}
	checkStream(t, qs, by[tpOf(1)], 0.01)
}

// TestRestoreV1 restores a snapshot of the first format: each stream
// becomes its local part, with its sliding window and rejects.
func TestRestoreV1(t *testing.T) {
	data, err := os.ReadFile("testdata/pipeline-v1.bin")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := New(Config{Sorter: gpusort.NewCPU(0)})
	if err := p.Restore(data); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	s, err := p.Stream("old")
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	for i := range 1000 {
		x = append(x, float64((i*7919)%1013))
	}
	checkStream(t, s, x, 0.01)
	if st := s.Stats(); st.Rejected[feed.ReasonNaN] != 3 || st.Config.WindowSize != 64 {
		t.Fatalf("stats %+v", st)
	}
	last, err := s.Last(1000)
	if err != nil {
		t.Fatal(err)
	}
	v, lo, hi := last.Quantile(0.5)
	if err := exact.New(x).CheckQuantile(0.5, v, 0.01, lo, hi); err != nil {
		t.Fatal(err)
	}
}

func FuzzRestore(f *testing.F) {
	p, _ := New(Config{Defaults: summary.Config{Epsilon: 0.1, WindowSize: 8, SlidingWindow: 20}, Sorter: gpusort.NewCPU(1)})
	ctx := context.Background()
	_ = acceptValues(ctx, p, feed.Local, "a", []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}, time.Time{})
	_ = acceptValues(ctx, p, feed.Source{Topic: "t", Partition: 2}, "a", []float64{2, 7, 1, 8, 2, 8}, time.Time{})
	p.Reject("a", feed.Source{Topic: "t", Partition: 2}, feed.ReasonNaN, 1)
	_ = acceptValues(ctx, p, feed.Source{Topic: "t", Partition: 5}, "b", []float64{1, 6, 1, 8}, time.Time{}) // no local part
	_ = acceptValues(ctx, p, feed.Local, "c", []float64{2, 7, 1}, time.Time{})                               // mirrored: a part of version 2
	data, _ := p.Snapshot()
	f.Add(data)
	states, _ := p.PartitionState(feed.Source{Topic: "t", Partition: 2})
	f.Add(states[0].Data)
	for _, file := range []string{"testdata/pipeline-v1.bin", "testdata/pipeline-v2-part-v1.bin"} {
		if old, err := os.ReadFile(file); err == nil {
			f.Add(old)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, _ := New(Config{Sorter: gpusort.NewCPU(1)})
		if q.Restore(data) == nil {
			for _, name := range q.List() {
				s, _ := q.Stream(name)
				s.View(true).Quantile(0.5)
			}
		}
		// Not open: a cancelled context keeps the windows queued in the
		// stream instead of waiting for a sorter.
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		r, _ := New(Config{Sorter: gpusort.NewCPU(1)})
		if r.ReplacePartition(cancelled, feed.Source{Topic: "t", Partition: 2}, []PartState{{Stream: "a", Data: data}}) == nil {
			s, _ := r.Stream("a")
			s.View(true).HeavyHitters(0.5)
		}
	})
}

// TestKafkaOnlyStream: a stream fed only by Kafka partitions has no local
// part, and answers within ε over its partitions, on every arrival order;
// a snapshot restores it so; once its partitions are released it answers
// as an empty stream; values from the local inputs then make its local
// part.
func TestKafkaOnlyStream(t *testing.T) {
	const eps = 0.01
	cfg := Config{Defaults: summary.Config{Epsilon: eps, WindowSize: 1000, SlidingWindow: 5000}}
	ctx := context.Background()
	for _, order := range []synth.Order{synth.Random, synth.Sorted, synth.Reverse, synth.Alternating} {
		t.Run(string(order), func(t *testing.T) {
			p := open(t, cfg)
			x, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: order, Seed: 12}, 30000)
			by := make(map[feed.Source][]float64)
			for i := 0; i < len(x); i += 100 {
				src := tpOf(i / 100 % 3)
				batch := x[i:min(i+100, len(x))]
				by[src] = append(by[src], batch...)
				if err := acceptValues(ctx, p, src, "k", slices.Clone(batch), time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			s, _ := p.Stream("k")
			checkKafkaOnly(t, s, 3)
			checkStream(t, s, x, eps)
			if st := s.Stats(); st.Count != int64(len(x)) {
				t.Fatalf("stats count %d, want %d", st.Count, len(x))
			}
			if last, err := s.Last(5000); err != nil || last.Count() != 5000 {
				t.Fatalf("last 5000: %v", err)
			}

			data, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r := openRestored(t, cfg, data)
			rs, _ := r.Stream("k")
			checkKafkaOnly(t, rs, 3)
			checkStream(t, rs, x, eps)

			// Released, its partitions' values leave its answers.
			r.OwnPartitions([]feed.Source{tpOf(1)})
			checkStream(t, rs, by[tpOf(1)], eps)
			r.OwnPartitions(nil)
			if v := rs.View(true); v.Count() != 0 || len(v.HeavyHitters(0.05)) != 0 {
				t.Fatalf("a stream of released partitions counts %d values", v.Count())
			}
			if st := rs.Stats(); st.Count != 0 {
				t.Fatalf("a stream of released partitions: stats count %d", st.Count)
			}
			checkKafkaOnly(t, rs, 3) // answering kept no local part
			local := []float64{3, 1, 4, 1, 5, 9, 2, 6}
			if err := acceptValues(ctx, r, feed.Local, "k", slices.Clone(local), time.Time{}); err != nil {
				t.Fatal(err)
			}
			checkStream(t, rs, local, eps)
			if got := len(rs.Parts(false, nil)); got != 4 {
				t.Fatalf("%d parts after local values, want 4", got)
			}
			r.OwnPartitions([]feed.Source{tpOf(0), tpOf(1), tpOf(2)})
			checkStream(t, rs, append(slices.Clone(x), local...), eps)
		})
	}
}

// checkKafkaOnly fails unless s has no local part and parts Kafka parts.
func checkKafkaOnly(t *testing.T, s *Stream, parts int) {
	t.Helper()
	s.mu.Lock()
	local, kafka := s.local, len(s.kafka)
	s.mu.Unlock()
	if local != nil || kafka != parts {
		t.Fatalf("%s: local part %v and %d Kafka parts, want none and %d", s.Name(), local != nil, kafka, parts)
	}
}

// TestKafkaOnlyStreamEmptied: a stream fed only by a Kafka partition whose
// part is emptied (ReplacePartition without its state) or handed over has
// no part left; a snapshot of it, and of its hierarchy levels, still
// restores, with the other streams, and the stream answers as an empty
// one until values come again.
func TestKafkaOnlyStreamEmptied(t *testing.T) {
	const eps = 0.01
	cfg := Config{Defaults: summary.Config{Epsilon: eps, WindowSize: 100, SlidingWindow: 500}}
	ctx := context.Background()
	p := open(t, cfg)
	x := []float64{5, 3, 8, 1, 9, 2}
	if err := acceptValues(ctx, p, tpOf(0), "k", slices.Clone(x), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := acceptValues(ctx, p, feed.Local, "other", slices.Clone(x), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := p.ReplacePartition(ctx, tpOf(0), nil); err != nil {
		t.Fatal(err)
	}
	data, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := openRestored(t, cfg, data)
	checkStream(t, mustStream(t, r, "other"), x, eps)
	ks := mustStream(t, r, "k")
	if v := ks.View(true); v.Count() != 0 {
		t.Fatalf("an emptied stream counts %d values", v.Count())
	}
	if err := acceptValues(ctx, r, tpOf(0), "k", []float64{7, 4}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkStream(t, ks, []float64{7, 4}, eps)
}
