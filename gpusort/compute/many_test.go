//go:build gpu

package compute

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"streamd/gpusort"
	"streamd/gpusort/internal/sorttest"
	"streamd/summary"
)

// holdSlots takes every slot of c, so that the batches sent to it queue
// up, and returns them to c when the test ends.
func holdSlots(t testing.TB, c *Sorter) *[]*slot {
	t.Helper()
	held := new([]*slot)
	for range computeSlots {
		*held = append(*held, <-c.slots)
	}
	t.Cleanup(func() { releaseSlots(c, held) })
	return held
}

// releaseSlots gives c back the slots still held.
func releaseSlots(c *Sorter, held *[]*slot) {
	for _, s := range *held {
		c.slots <- s
	}
	*held = nil
}

// waitQueued polls until n batches wait in c's queue.
func waitQueued(t testing.TB, c *Sorter, n int) {
	t.Helper()
	for {
		c.mu.Lock()
		q := len(c.pending)
		c.mu.Unlock()
		if q == n {
			return
		}
		if q > n {
			t.Fatalf("%d batches queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// queueAll calls do(k) for every k below n at once while every slot of c
// is held, so that the n batches queue up, then frees the slots; once
// every call has returned, it fails the test if any of them failed.
func queueAll(t testing.TB, c *Sorter, n int, do func(k int) error) {
	t.Helper()
	held := holdSlots(t, c)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { errs[k] = do(k) })
	}
	waitQueued(t, c, n)
	releaseSlots(c, held)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
	}
}

// manyLens are the window lengths of the coalesced submissions, in turn.
var manyLens = []int{1, 7, 1000, 4096, 1 << 16, 0}

// TestComputeManyWindows queues many batches of windows of different
// lengths while every slot is busy, then frees the slots: all of them go
// to the GPU in one submission (one set of dispatches and one fence), and
// each batch gets exactly the CPU's digests.
func TestComputeManyWindows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		alg     Algorithm
		key64   bool
		batches int
		lens    []int
	}{
		{"radix", Radix, false, 30, manyLens},
		{"radix/float64", Radix, true, 14, manyLens},
		{"bitonic", Bitonic, false, 40, []int{1, 7, 1000, 2048, 0}},
		{"measured", Measured, false, 40, []int{4096, 4000, 1, 4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewWithConfig(Config{Algorithm: tc.alg})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Calibrate(context.Background(), slices.Max(tc.lens), tc.key64); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(uint64(tc.batches), 5))
			cases := make([]*digestCase, tc.batches)
			w := 0
			for k := range cases {
				var lens [gpusort.Channels]int
				for i := range lens {
					lens[i] = tc.lens[w%len(tc.lens)]
					w++
				}
				var a32 func(int) []float32
				var a64 func(int) []float64
				if k%2 == 1 {
					a32, a64 = c.StageF32, c.StageF64
				}
				cases[k] = newDigestCase(r, lens, tc.key64, int64(k%3), a32, a64)
			}
			before := c.Stats()
			outs := make([][gpusort.Channels]summary.Digest, len(cases))
			queueAll(t, c, len(cases), func(k int) error {
				dc := cases[k]
				return c.Digest(context.Background(), &dc.b, &dc.specs, &outs[k])
			})
			for k, dc := range cases {
				for i := range gpusort.Channels {
					sorttest.CheckDigest(t, fmt.Sprintf("batch %d window %d", k, i), &outs[k][i], &dc.want[i])
					c.UnstageF32(dc.b.F32[i])
					c.UnstageF64(dc.b.F64[i])
				}
			}
			got := c.Stats()
			got.Submissions -= before.Submissions
			got.Batches -= before.Batches
			got.Windows -= before.Windows
			windows := 0
			for _, dc := range cases {
				for i := range gpusort.Channels {
					if len(dc.b.F32[i])+len(dc.b.F64[i]) > 0 {
						windows++
					}
				}
			}
			if want := (Stats{Submissions: 1, Batches: int64(len(cases)), Windows: int64(windows)}); got != want {
				t.Errorf("Stats went up by %+v, want %+v", got, want)
			}
		})
	}
}

// TestComputeManySorts is TestComputeManyWindows for Sort: the windows of
// many batches are sorted in place by one submission.
func TestComputeManySorts(t *testing.T) {
	c, err := NewWithConfig(Config{Algorithm: Radix})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(3, 4))
	patterns := sorttest.Patterns()
	const batches = 25
	quads := make([]gpusort.Quad, batches)
	want := make([][gpusort.Channels][]float32, batches)
	w := 0
	for k := range quads {
		for i := range gpusort.Channels {
			x := make([]float32, manyLens[w%len(manyLens)])
			w++
			patterns[r.IntN(len(patterns))].Fill(r, x)
			quads[k].F32[i] = x
			want[k][i] = slices.Clone(x)
			sorttest.KeyOrder(want[k][i])
		}
	}
	queueAll(t, c, batches, func(k int) error { return c.Sort(context.Background(), &quads[k]) })
	for k := range quads {
		for i := range gpusort.Channels {
			sorttest.CheckSorted(t, fmt.Sprintf("batch %d window %d", k, i), quads[k].F32[i], want[k][i])
		}
	}
	if s := c.Stats(); s.Submissions != 1 || s.Batches != batches {
		t.Errorf("Stats = %+v, want 1 submission of %d batches", s, batches)
	}
}

// TestComputeQueuedCancel checks that a batch waiting in the queue leaves
// it when its context ends or the Sorter is closed, and that the batches
// behind it are submitted without it.
func TestComputeQueuedCancel(t *testing.T) {
	c, err := NewWithConfig(Config{Algorithm: Radix})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	held := holdSlots(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	gone := newDigestCase(r, [gpusort.Channels]int{100, 0, 0, 5}, false, 0, nil, nil)
	kept := newDigestCase(r, [gpusort.Channels]int{3000, 1, 0, 0}, false, 1, nil, nil)
	errGone := make(chan error, 1)
	go func() {
		var out [gpusort.Channels]summary.Digest
		errGone <- c.Digest(ctx, &gone.b, &gone.specs, &out)
	}()
	waitQueued(t, c, 1)
	var out [gpusort.Channels]summary.Digest
	errKept := make(chan error, 1)
	go func() { errKept <- c.Digest(context.Background(), &kept.b, &kept.specs, &out) }()
	waitQueued(t, c, 2)
	cancel()
	if err := <-errGone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Digest: %v, want context.Canceled", err)
	}
	waitQueued(t, c, 1)
	releaseSlots(c, held)
	if err := <-errKept; err != nil {
		t.Fatal(err)
	}
	for i := range gpusort.Channels {
		sorttest.CheckDigest(t, fmt.Sprintf("window %d", i), &out[i], &kept.want[i])
	}
	if s := c.Stats(); s.Submissions != 1 || s.Batches != 1 {
		t.Errorf("Stats = %+v, want 1 submission of 1 batch", s)
	}

	held = holdSlots(t, c)
	go func() {
		var out [gpusort.Channels]summary.Digest
		errGone <- c.Digest(context.Background(), &gone.b, &gone.specs, &out)
	}()
	waitQueued(t, c, 1)
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	if err := <-errGone; !errors.Is(err, gpusort.ErrClosed) {
		t.Fatalf("Digest queued at Close: %v, want ErrClosed", err)
	}
	releaseSlots(c, held)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
