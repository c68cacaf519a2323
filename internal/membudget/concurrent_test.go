package membudget

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBatchTakesNoBudgetLock: what a producer and a sorter do for each
// batch and window, when the charges fit, takes no lock of the budget, so
// that many streams' producers do not queue on it.
func TestBatchTakesNoBudgetLock(t *testing.T) {
	for _, limit := range []int64{0, 1 << 40} {
		b := New(limit)
		a, err := b.Open(Footprint{Reserve: 100, Window: 1000, Summaries: 50})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		b.mu.Lock()
		go func() {
			defer close(done)
			ctx := context.Background()
			for range 10 {
				if err := a.Grow(ctx, 64, 1); err != nil {
					t.Error(err)
				}
				a.WindowFull()
				a.WindowFull()
				a.Summaries(200)
				a.Wait(ctx)
				a.WindowDone()
				a.WindowDone()
				a.Summaries(100)
				a.Charged()
			}
			a.Close()
			b.Stats()
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			b.mu.Unlock()
			<-done
			t.Fatalf("limit %d: the charges of a batch wait for the budget's lock", limit)
		}
		b.mu.Unlock()
		if st := b.Stats(); st.Used != 0 || st.Windows != 0 || st.Growth != 0 {
			t.Errorf("limit %d: after close: %+v", limit, st)
		}
	}
}

// TestConcurrentChargesBalance runs producers that charge growth and
// windows ahead, fill them, and measure, against a limit that makes them
// wait and be refused, and sorters that finish the windows; the streams
// close, some with windows still in flight. Once every window is done, the
// sums are back to exactly zero.
func TestConcurrentChargesBalance(t *testing.T) {
	const producers, batches = 16, 200
	fp := Footprint{Reserve: 1000, Window: 4000, Summaries: 500}
	b := New(producers*fp.Reserve + 6*fp.Window)
	type window struct{ a *Account }
	work := make(chan window, producers*batches)
	var sorters sync.WaitGroup
	for range 2 {
		sorters.Go(func() {
			for w := range work {
				w.a.WindowDone()
			}
		})
	}
	var wg sync.WaitGroup
	ctx := context.Background()
	var mu sync.Mutex
	refused := 0
	accounts := make([]*Account, producers)
	for i := range accounts {
		a, err := b.Open(fp)
		if err != nil {
			t.Fatal(err)
		}
		accounts[i] = a
	}
	for i, a := range accounts {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			defer a.Close()
			measured := int64(0)
			for j := range batches {
				n := r.Int64N(2000)
				windows := r.IntN(2)
				if err := a.Grow(ctx, n, windows); err != nil {
					if !errors.Is(err, ErrExhausted) {
						t.Error(err)
						return
					}
					mu.Lock()
					refused++
					mu.Unlock()
					continue
				}
				measured += n
				for range windows {
					a.WindowFull()
					work <- window{a}
				}
				if j%3 == 0 {
					// A window that Grow did not charge ahead.
					a.WindowFull()
					work <- window{a}
				}
				measured = r.Int64N(max(measured, 1))
				a.Summaries(measured)
				a.Wait(ctx)
			}
		})
	}
	wg.Wait()
	close(work)
	sorters.Wait()
	st := b.Stats()
	if st.Reserved != 0 || st.Windows != 0 || st.Growth != 0 || st.Used != 0 {
		t.Errorf("after every stream closed and every window is done: %+v", st)
	}
	if u, n := b.used.Load(), b.inflight.Load(); u != 0 || n != 0 {
		t.Errorf("after: total %d, windows in flight %d; want 0", u, n)
	}
	t.Logf("%d waits, %d charges refused", st.Waits, refused)
}

// TestNoLostWakeup races a producer that starts to wait against the window
// done that makes room for it, many times: the producer always wakes,
// whether the window is done before it waits, while it starts to, or once
// it waits.
func TestNoLostWakeup(t *testing.T) {
	ctx := context.Background()
	wait := func(t *testing.T, what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not woken when a window was done", what)
		}
	}
	for i := range 500 {
		b := New(1000)
		fp := Footprint{Reserve: 100, Window: 300}
		a, _ := b.Open(fp)
		o, _ := b.Open(fp)
		a.WindowFull()
		o.WindowFull() // 800: one more window does not fit
		// Wait in even rounds, Charge in odd ones: a Charge that took the
		// room would keep a Wait waiting for the stream's own window.
		done := make(chan error, 1)
		what := "Wait"
		if i%2 == 0 {
			go func() {
				a.Wait(ctx)
				done <- nil
			}()
		} else {
			what = "Charge"
			go func() { done <- a.Charge(ctx, 300) }()
		}
		if i%8 >= 4 {
			// Half the rounds release once the producer waits; the
			// others race it.
			for b.Stats().Waits == 0 {
				runtime.Gosched()
			}
		}
		if i%4 < 2 {
			o.WindowDone() // another stream's window: 500
		} else {
			a.WindowDone() // the stream's own: 500
		}
		wait(t, what, done)
		want := int64(500)
		if what == "Charge" {
			want = 800
		}
		if got := b.Stats().Used; got != want {
			t.Fatalf("%s: used %d, want %d", what, got, want)
		}
	}
}

// TestRefusedWhenNothingInFlight: producers whose charges do not fit are
// refused at once, charging nothing, when no window is in flight, or only
// windows that they hold themselves.
func TestRefusedWhenNothingInFlight(t *testing.T) {
	b := New(10000)
	fp := Footprint{Reserve: 1000, Window: 1000}
	var accounts []*Account
	for range 8 {
		a, err := b.Open(fp)
		if err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, a := range accounts {
		wg.Go(func() {
			for range 100 {
				if err := a.Charge(ctx, 2001); !errors.Is(err, ErrExhausted) {
					t.Errorf("charge past the limit with nothing in flight: %v, want ErrExhausted", err)
					return
				}
				if err := a.Grow(ctx, 0, 3); !errors.Is(err, ErrExhausted) {
					t.Errorf("windows past the limit with nothing in flight: %v, want ErrExhausted", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := b.Stats(); st.Used != 8000 || st.Waits != 0 {
		t.Fatalf("after refusals: %+v, want 8000 used and no waits", st)
	}

	// A window charged ahead by a held account makes no room for the
	// charge that holds it; one of another stream does.
	h := accounts[0]
	if err := h.Grow(ctx, 0, 1); err != nil { // 9000
		t.Fatal(err)
	}
	a := accounts[1]
	if err := a.Grow(ctx, 0, 2, h); !errors.Is(err, ErrExhausted) {
		t.Fatalf("windows past the limit with only held windows in flight: %v, want ErrExhausted", err)
	}
	done := make(chan error)
	go func() { done <- a.Grow(ctx, 0, 2) }() // 9000 − 1000 + 2000 ≤ 10000: waits
	for b.Stats().Waits == 0 {
		runtime.Gosched()
	}
	h.Summaries(0) // the window charged ahead never filled: 8000
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().Used; got != 10000 {
		t.Fatalf("used %d, want 10000", got)
	}
}

// TestWakeupPingPong runs a producer whose every window waits for the one
// before it, and a sorter that finishes each as it comes: the window done
// races the producer's way into its wait at every step, and a lost wakeup
// would stop both, the sorter waiting for the next window.
func TestWakeupPingPong(t *testing.T) {
	steps := 20000
	if testing.Short() {
		steps = 2000
	}
	for _, grow := range []bool{false, true} {
		b := New(700)
		a, _ := b.Open(Footprint{Reserve: 100, Window: 300})
		work := make(chan struct{}, 2)
		var sorter sync.WaitGroup
		sorter.Go(func() {
			for range work {
				a.WindowDone()
			}
		})
		done := make(chan error, 1)
		go func() {
			ctx := context.Background()
			for range steps {
				if grow {
					// 400 + 300 in flight: the window charged ahead
					// waits for the one before it.
					if err := a.Grow(ctx, 0, 1); err != nil {
						done <- err
						return
					}
					a.WindowFull()
				} else {
					// Two windows in flight fill the budget: the next
					// waits for one.
					a.WindowFull()
				}
				work <- struct{}{}
				if !grow {
					a.Wait(ctx)
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("grow %v: a producer waits although its window is done", grow)
		}
		close(work)
		sorter.Wait()
		if st := b.Stats(); st.Used != 100 {
			t.Errorf("grow %v: %+v after every window is done, want 100 used", grow, st)
		}
	}
}
