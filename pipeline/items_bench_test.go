package pipeline

import (
	"context"
	"testing"

	"streamd/feed"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

// BenchmarkAcceptItems measures the item path of the pipeline: hashing,
// keeping the strings, filling windows, sorting and summarising them (on
// the CPU, with every core), for Zipf strings over 10^6 distinct items in
// batches of 65536, as the TCP decoder hands them over. ns/op is per item.
func BenchmarkAcceptItems(b *testing.B) {
	ranks, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: 1_000_000, Seed: 1}, 1<<22)
	var batches []*items.Batch
	for i := 0; i < len(ranks); i += 1 << 16 {
		var bt items.Batch
		for _, r := range ranks[i : i+1<<16] {
			bt.AppendString(synth.ItemName(r))
		}
		batches = append(batches, &bt)
	}
	benchAcceptItems(b, "urls", summary.Config{Items: true}, batches)
}

// benchAcceptItems opens a pipeline with benchSorter, creates stream name
// of cfg and times Accept of the batches, round and round, reporting
// ns/item. It returns the stream, its pipeline closed.
func benchAcceptItems(b *testing.B, name string, cfg summary.Config, batches []*items.Batch) *Stream {
	ctx := context.Background()
	p, err := New(Config{Sorter: benchSorter(b)})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Open(ctx); err != nil {
		b.Fatal(err)
	}
	s, err := p.Create(name, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		bt := batches[i%len(batches)]
		if _, err := p.Accept(ctx, &feed.Batch{Stream: s.Name(), Items: bt, At: p.Now()}); err != nil {
			b.Fatal(err)
		}
		n += bt.Len()
	}
	if err := p.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/item")
	return s
}
