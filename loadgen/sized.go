package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"streamd/ingest"
	"streamd/synth"
)

// runSized is Run for s.Sizes: the batches of every stream, in the random
// interleaving of interleave, each drawn as it is sent. Drawing is most of
// a sender's work with many small streams (an exp a value for the
// lognormal), so chunks of batches are drawn on every core and handed to
// the sinks in order: the batch of a stream to sinks[lane(stream)], by
// that sink's goroutine alone (lane nil: all to sinks[0]).
func (s *Synth) runSized(ctx context.Context, sinks []ingest.Sink, lane func(stream string) int) error {
	if err := s.checkSized(); err != nil {
		return err
	}
	if len(sinks) == 1 {
		lane = nil
	}
	batch := s.batch()
	sched := interleave(s.Sizes, batch, blockSeed(s.Spec.Seed, math.MaxUint64))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	orders := make([]chan *sizedChunk, len(sinks)) // chunks in sched order, to be sent
	for i := range orders {
		orders[i] = make(chan *sizedChunk, 2*workers)
	}
	work := make(chan *sizedChunk) // chunks to draw
	free := make(chan *sizedChunk, 2*workers+2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range work {
				c.draw(s.Spec)
				if lane != nil {
					c.lanes = slices.Grow(c.lanes[:0], len(c.streams))[:len(c.streams)]
					for j, i := range c.streams {
						c.lanes[j] = uint16(lane(s.Streams[i]))
					}
				}
				close(c.done)
			}
		})
	}
	wg.Go(func() {
		defer close(work)
		defer func() {
			for _, order := range orders {
				close(order)
			}
		}()
		sent := make([]uint32, len(s.Streams)) // batches of each stream so far
		for start := 0; start < len(sched); start += sizedChunkBatches {
			var c *sizedChunk
			select {
			case c = <-free:
			default:
				c = new(sizedChunk)
			}
			c.reset(len(sinks))
			for _, i := range sched[start:min(start+sizedChunkBatches, len(sched))] {
				k := sent[i]
				sent[i]++
				c.add(i, k, min(int64(batch), s.Sizes[i]-int64(k)*int64(batch)))
			}
			for _, ch := range append(orders[:len(orders):len(orders)], work) {
				select {
				case ch <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	})
	errs := make([]error, len(sinks))
	var lanes sync.WaitGroup
	for l, sink := range sinks {
		lanes.Go(func() {
			accept := s.acceptor(sink)
			var err error
			for c := range orders[l] {
				select {
				case <-c.done:
				case <-ctx.Done(): // the chunk may never be drawn
					if err == nil {
						err = ctx.Err()
					}
					continue
				}
				for j := 0; err == nil && j < len(c.streams); j++ {
					if lane != nil && int(c.lanes[j]) != l {
						continue
					}
					// An error ends the run at the next batch, whichever
					// sink had it.
					select {
					case <-ctx.Done():
						err = ctx.Err()
						continue
					default:
					}
					if err = accept(ctx, s.Streams[c.streams[j]], c.vals[c.ends[j]-c.lens[j]:c.ends[j]]); err != nil {
						cancel()
					}
				}
				if c.left.Add(-1) == 0 {
					select {
					case free <- c:
					default:
					}
				}
			}
			errs[l] = err
		})
	}
	lanes.Wait()
	wg.Wait()
	// The first sink's error of the highest rank (laneErrorRank): a lane
	// that reaches the run's limit as another's sink fails must not hide
	// that failure, nor the cancel they cause the others.
	var err error
	for _, e := range errs {
		if laneErrorRank(e) > laneErrorRank(err) {
			err = e
		}
	}
	if err == nil {
		err = ctx.Err() // cancelled before any chunk went out
	}
	return err
}

// checkSized returns an error if s cannot be run with s.Sizes.
func (s *Synth) checkSized() error {
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
	_, err := synth.NewSource(s.Spec)
	return err
}

// batch returns the values of a batch: s.Batch, or sourceBatch.
func (s *Synth) batch() int {
	if s.Batch <= 0 {
		return sourceBatch
	}
	return s.Batch
}

// laneErrorRank ranks the error a lane of runSized ended with: a sink's
// own failure over the run's end (errLimit), which ends it cleanly, over
// the cancel that another lane's end or failure caused, over none.
func laneErrorRank(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		return 1
	case errors.Is(err, errLimit):
		return 2
	}
	return 3
}

// sizedChunkBatches is how many batches a sizedChunk holds.
const sizedChunkBatches = 256

// A sizedChunk is a run of consecutive batches of runSized's schedule:
// for each, its stream, its number in the stream, its length and, once
// drawn, its values, one after the other in vals.
type sizedChunk struct {
	streams, ks []uint32
	lens, ends  []int
	vals        []float64
	lanes       []uint16      // each batch's sink, with more than one
	done        chan struct{} // closed once the values are drawn
	left        atomic.Int32  // sinks yet to send it
}

// reset empties c for reuse by sinks sinks.
func (c *sizedChunk) reset(sinks int) {
	c.streams, c.ks, c.lens, c.ends = c.streams[:0], c.ks[:0], c.lens[:0], c.ends[:0]
	c.done = make(chan struct{})
	c.left.Store(int32(sinks))
}

// add appends batch k of stream i, of n values.
func (c *sizedChunk) add(i, k uint32, n int64) {
	end := int(n)
	if len(c.ends) > 0 {
		end += c.ends[len(c.ends)-1]
	}
	c.streams, c.ks = append(c.streams, i), append(c.ks, k)
	c.lens, c.ends = append(c.lens, int(n)), append(c.ends, end)
}

// draw draws the values of c's batches, each as drawBatch does.
func (c *sizedChunk) draw(spec synth.Spec) {
	n := 0
	if len(c.ends) > 0 {
		n = c.ends[len(c.ends)-1]
	}
	c.vals = slices.Grow(c.vals[:0], n)[:n]
	for j, i := range c.streams {
		drawBatch(spec, i, c.ks[j], c.vals[c.ends[j]-c.lens[j]:c.ends[j]])
	}
}

// drawBatch fills dst with the values of batch k of stream i: those of a
// source of spec seeded with spec.Seed+i and k, which must be valid.
func drawBatch(spec synth.Spec, i, k uint32, dst []float64) {
	spec.Seed = blockSeed(spec.Seed+uint64(i), uint64(k))
	src, _ := synth.NewSource(spec)
	for j := range dst {
		dst[j] = src.Next()
	}
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
