package membudget

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestCreditPastTheLimitIsNoRoom: once charges that are never refused
// (RestoreAt here) take the total past the limit, the credit that the
// stripes hold is room the charges already took, not room left: every
// charge is refused, on whatever stripe it falls, as it was before the
// stripes.
func TestCreditPastTheLimitIsNoRoom(t *testing.T) {
	const limit = 1 << 20
	b := New(limit)
	// Credit in many stripes: charges on many goroutines, far below the
	// limit, and some given back.
	accounts := make([]Account, 64)
	for i := range accounts {
		if err := b.OpenAt(&accounts[i], Footprint{Reserve: 1000, Window: 100}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < len(accounts); i += 16 {
				for range 10 {
					if !accounts[i].TryGrow(100, 1) {
						t.Error("a charge far below the limit was refused")
						return
					}
				}
				accounts[i].Summaries(0) // gives back the 10 windows
			}
		})
	}
	wg.Wait()
	credit := b.used.Load() - b.usedNow()
	if credit <= 0 {
		t.Fatal("the stripes hold no credit: the test tests nothing")
	}
	// Past the limit by less than the credit.
	st := b.Stats()
	var restored Account
	b.RestoreAt(&restored, Footprint{Reserve: limit - st.Used + 1})
	if got := b.Stats().Used; got != limit+1 {
		t.Fatalf("used %d, want %d", got, limit+1)
	}
	var refusedAll sync.WaitGroup
	for g := range 32 {
		refusedAll.Go(func() {
			a := &accounts[g]
			if a.TryGrow(1, 0) {
				t.Errorf("goroutine %d: a charge of 1 byte fitted past the limit", g)
			}
			if err := a.Charge(context.Background(), 1); !errors.Is(err, ErrExhausted) {
				t.Errorf("goroutine %d: Charge past the limit: %v, want ErrExhausted", g, err)
			}
			var o Account
			if err := b.OpenAt(&o, Footprint{Reserve: 1}); err == nil {
				t.Errorf("goroutine %d: a stream opened past the limit", g)
				o.Close()
			}
		})
	}
	refusedAll.Wait()
	if got := b.Stats().Used; got != limit+1 {
		t.Fatalf("used %d after refusals, want %d", got, limit+1)
	}
	// The same on one stripe, step by step: its credit is no room.
	b2 := New(limit)
	s := &b2.stripes[0]
	if !b2.take(s, 10) || s.credit.Load() == 0 {
		t.Fatalf("a charge far below the limit took no credit: %d", s.credit.Load())
	}
	b2.addSums(s, 10, 0, 0, 0)
	b2.add(&b2.stripes[1], limit, 0, 0, 0) // forced: 10 past the limit
	if b2.take(s, 1) {
		t.Fatalf("a charge of 1 byte fitted with %d used of %d, from credit %d", b2.usedNow(), limit, s.credit.Load())
	}
	b2.add(&b2.stripes[1], -limit, 0, 0, 0)
	if !b2.take(s, limit-10) {
		t.Fatalf("a charge of the room left (%d used) was refused", b2.usedNow())
	}
}
