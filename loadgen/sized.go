package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"streamd/ingest"
	"streamd/synth"
)

// runSized is Run for s.Sizes: the batches of every stream, in the random
// interleaving of interleave, each drawn as it is sent.
func (s *Synth) runSized(ctx context.Context, sink ingest.Sink) error {
	switch {
	case len(s.Sizes) != len(s.Streams):
		return fmt.Errorf("synth: %d sizes for %d streams", len(s.Sizes), len(s.Streams))
	case s.Spec.Order != synth.Random && s.Spec.Order != "":
		return fmt.Errorf("synth: order %q with stream sizes: only the random order", s.Spec.Order)
	case s.Addresses != nil || s.Pairs:
		return errors.New("synth: stream sizes with addresses or pairs")
	case uint64(len(s.Streams)) > math.MaxUint32:
		return fmt.Errorf("synth: %d streams: too many", len(s.Streams))
	}
	if _, err := synth.NewSource(s.Spec); err != nil {
		return err
	}
	batch := s.Batch
	if batch <= 0 {
		batch = sourceBatch
	}
	accept := s.acceptor(sink)
	sched := interleave(s.Sizes, batch, blockSeed(s.Spec.Seed, math.MaxUint64))
	sent := make([]uint32, len(s.Streams)) // batches of each stream so far
	buf := make([]float64, batch)
	for _, i := range sched {
		k := sent[i]
		sent[i]++
		vals := buf[:min(int64(batch), s.Sizes[i]-int64(k)*int64(batch))]
		spec := s.Spec
		spec.Seed = blockSeed(s.Spec.Seed+uint64(i), uint64(k))
		src, _ := synth.NewSource(spec) // valid: checked above
		for j := range vals {
			vals[j] = src.Next()
		}
		if err := accept(ctx, s.Streams[i], vals); err != nil {
			return err
		}
	}
	return nil
}

// interleave returns the order in which the batches of streams of sizes
// go, batch values (or the rest) at a time: stream i once for each of
// its ⌈sizes[i]/batch⌉ batches, the whole shuffled with seed (Fisher–Yates),
// so that every stream's batches spread over the run at random. It takes
// 4 bytes a batch.
func interleave(sizes []int64, batch int, seed uint64) []uint32 {
	var n int64
	for _, s := range sizes {
		n += (s + int64(batch) - 1) / int64(batch)
	}
	sched := make([]uint32, 0, n)
	for i, s := range sizes {
		for range (s + int64(batch) - 1) / int64(batch) {
			sched = append(sched, uint32(i))
		}
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	rng.Shuffle(len(sched), func(a, b int) { sched[a], sched[b] = sched[b], sched[a] })
	return sched
}

// SampleStreams returns, in increasing order, the indices of the streams
// of sizes that a verification of many streams checks: every stream of at
// least big values, and k of the smaller ones drawn at random with seed
// (all of them when there are no more than k). It takes 4 bytes for each
// smaller stream.
func SampleStreams(sizes []int64, big int64, k int, seed uint64) []int {
	var out []int
	var small []uint32
	for i, s := range sizes {
		if s >= big {
			out = append(out, i)
		} else {
			small = append(small, uint32(i))
		}
	}
	k = max(min(k, len(small)), 0)
	rng := rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909))
	// A partial Fisher–Yates shuffle: small[:k] is a uniform sample.
	for j := range k {
		r := j + rng.IntN(len(small)-j)
		small[j], small[r] = small[r], small[j]
	}
	for _, i := range small[:k] {
		out = append(out, int(i))
	}
	slices.Sort(out)
	return out
}
