package membudget

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
)

// strand leaves credit in the stripes of b: charges made and given back
// on many goroutines, far below the limit. It reports the credit left.
func strand(t *testing.T, b *Budget) int64 {
	t.Helper()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			var a Account
			if err := b.OpenAt(&a, Footprint{Reserve: 10, Window: 10}); err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				if !a.TryGrow(100, 1) {
					t.Error("a charge far below the limit was refused")
				}
				a.Summaries(0)
			}
			a.Close()
		})
	}
	wg.Wait()
	credit := b.used.Load() - b.usedNow()
	if credit <= 0 {
		t.Fatal("the stripes hold no credit: the test tests nothing")
	}
	return credit
}

// TestExactRoomFitsThroughEveryPath: with credit stranded in the stripes,
// a charge of exactly the room left (the limit less Stats.Used) fits, and
// one byte more does not, through TryGrow, Charge, Grow's windows and
// OpenAt.
func TestExactRoomFitsThroughEveryPath(t *testing.T) {
	const limit = 1 << 22
	ctx := context.Background()
	for _, path := range []string{"TryGrow", "Charge", "Grow", "OpenAt"} {
		b := New(limit)
		const base = 3 << 20 // what a fills the budget with: far from the limit
		var a Account
		if err := b.OpenAt(&a, Footprint{Reserve: base}); err != nil {
			t.Fatal(err)
		}
		strand(t, b)
		room := limit - b.Stats().Used
		if room != limit-base {
			t.Fatalf("%s: room %d, want %d", path, room, limit-base)
		}
		var o Account
		if err := b.OpenAt(&o, Footprint{Reserve: 1, Window: room - 1}); err != nil {
			t.Fatal(err)
		}
		room--
		strand(t, b)
		var fits, over func() bool
		undo := func() { o.Summaries(0) }
		switch path {
		case "TryGrow":
			fits = func() bool { return o.TryGrow(room, 0) }
			over = func() bool { return o.TryGrow(room+1, 0) }
		case "Charge":
			fits = func() bool { return o.Charge(ctx, room) == nil }
			over = func() bool {
				err := o.Charge(ctx, room+1)
				if err != nil && !errors.Is(err, ErrExhausted) {
					t.Fatalf("Charge: %v", err)
				}
				return err == nil
			}
		case "Grow":
			// A window of exactly the room; with one more byte it does
			// not fit, and nothing is in flight: refused.
			fits = func() bool { return o.Grow(ctx, 0, 1) == nil }
			over = func() bool {
				err := o.Grow(ctx, 1, 1)
				if err != nil && !errors.Is(err, ErrExhausted) {
					t.Fatalf("Grow: %v", err)
				}
				return err == nil
			}
		case "OpenAt":
			var n Account
			fits = func() bool { return b.OpenAt(&n, Footprint{Reserve: room}) == nil }
			over = func() bool {
				var m Account
				return b.OpenAt(&m, Footprint{Reserve: room + 1}) == nil
			}
			undo = n.Close
		}
		if over() {
			t.Fatalf("%s: a charge of %d bytes, one more than the room left, fitted", path, room+1)
		}
		strand(t, b)
		if !fits() {
			t.Fatalf("%s: a charge of the %d bytes left was refused (total %d, less credit %d)", path, room, b.used.Load(), b.usedNow())
		}
		if st := b.Stats(); st.Used != limit || b.usedNow() != limit {
			t.Fatalf("%s: used %d (total less credit %d), want the limit", path, st.Used, b.usedNow())
		}
		undo()
		o.Close()
		a.Close()
		if st := b.Stats(); st.Used != 0 || b.usedNow() != 0 {
			t.Fatalf("%s: after every account closed: %+v, total less credit %d", path, st, b.usedNow())
		}
	}
}

// TestWaitSeesTheRoomInTheCredit: with credit stranded in the stripes, a
// producer with a window in flight does not wait when exactly one more
// window's room is left, and waits when one byte less is.
func TestWaitSeesTheRoomInTheCredit(t *testing.T) {
	const limit, window = 1 << 22, 1 << 20
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	b := New(limit)
	var filler, w Account
	if err := b.OpenAt(&filler, Footprint{Reserve: limit - 2*window - 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.OpenAt(&w, Footprint{Reserve: 1, Window: window}); err != nil {
		t.Fatal(err)
	}
	w.WindowFull()
	strand(t, b)
	if got := limit - b.Stats().Used; got != window {
		t.Fatalf("%d bytes left, want %d", got, window)
	}
	if w.Wait(cancelled) {
		t.Fatalf("Wait waited with exactly a window left (total %d, less credit %d)", b.used.Load(), b.usedNow())
	}
	var one Account
	b.RestoreAt(&one, Footprint{Reserve: 1})
	strand(t, b)
	if !w.Wait(cancelled) {
		t.Fatal("Wait did not wait with a byte less than a window left")
	}
	one.Close()
	if w.Wait(cancelled) {
		t.Fatal("Wait waited once the byte was given back")
	}
	w.WindowDone()
	w.Close()
	filler.Close()
	if st := b.Stats(); st.Used != 0 || b.usedNow() != 0 {
		t.Fatalf("after every account closed: %+v, total less credit %d", st, b.usedNow())
	}
}

// TestStripesSoakBalances runs many goroutines over shared accounts:
// opening and restoring streams, charging (TryGrow, Charge, Grow with a
// context that ends at once), filling windows that other goroutines
// finish, measuring, waiting, closing with windows in flight, against a
// limit tight enough that the credit is reclaimed again and again. Once
// every account is closed and every window done, the sums are zero, the
// total less the credit is zero, no stripe holds negative credit, and the
// total is exactly the credit.
func TestStripesSoakBalances(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, limit := range []int64{0, 3000, 1 << 18, 1 << 26} {
		b := New(limit)
		const workers, steps = 24, 400
		work := make(chan *Account, workers*steps*2)
		var sorters sync.WaitGroup
		for range 4 {
			sorters.Go(func() {
				for a := range work {
					a.WindowDone()
				}
			})
		}
		var mu sync.Mutex
		var all []*Account
		var wg sync.WaitGroup
		for g := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), uint64(limit)))
				var mine []*Account
				open := func() {
					a := new(Account)
					fp := Footprint{Reserve: r.Int64N(200), Window: r.Int64N(2000), Summaries: r.Int64N(100)}
					if r.IntN(4) == 0 {
						b.RestoreAt(a, fp)
					} else if b.OpenAt(a, fp) != nil {
						return
					}
					mine = append(mine, a)
					mu.Lock()
					all = append(all, a)
					mu.Unlock()
				}
				for range steps {
					if len(mine) == 0 {
						open()
						continue
					}
					a := mine[r.IntN(len(mine))]
					switch r.IntN(9) {
					case 0:
						open()
					case 1:
						a.TryGrow(r.Int64N(3000), r.IntN(2))
					case 2:
						a.Charge(cancelled, r.Int64N(3000))
					case 3:
						a.Grow(cancelled, r.Int64N(1000), 1+r.IntN(2))
					case 4, 5:
						a.WindowFull()
						work <- a
					case 6:
						a.Summaries(r.Int64N(2000))
					case 7:
						a.Wait(cancelled)
					case 8:
						a.Close()
					}
				}
			})
		}
		wg.Wait()
		for _, a := range all {
			a.Close()
		}
		close(work)
		sorters.Wait()
		st := b.Stats()
		if st.Reserved != 0 || st.Windows != 0 || st.Growth != 0 || st.Used != 0 {
			t.Errorf("limit %d: after every stream closed and every window done: %+v", limit, st)
		}
		var credit int64
		for i := range b.stripes {
			c := b.stripes[i].credit.Load()
			if c < 0 || (limit == 0 && c != 0) {
				t.Errorf("limit %d: stripe %d holds %d bytes of credit", limit, i, c)
			}
			credit += c
		}
		if _, _, n, _ := b.sums(); n != 0 || b.usedNow() != 0 || b.used.Load() != credit {
			t.Errorf("limit %d: total %d, credit %d, windows in flight %d; want the total to be the credit, nothing in flight", limit, b.used.Load(), credit, n)
		}
	}
}
