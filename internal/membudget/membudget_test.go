package membudget

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func TestOpenRefusesPastTheLimit(t *testing.T) {
	b := New(1000)
	fp := Footprint{Reserve: 400, Window: 100, Summaries: 50}
	a1, err := b.Open(fp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(fp); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(fp); !errors.Is(err, ErrExhausted) {
		t.Fatalf("third stream: %v, want ErrExhausted", err)
	}
	if _, err := b.Open(Footprint{Reserve: 2000}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("a stream larger than the budget: %v", err)
	}
	a1.Close()
	// A stream whose worst case is more than the whole budget is refused
	// even when its reservation fits.
	if _, err := b.Open(Footprint{Reserve: 10, Worst: 1001}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("a stream whose worst case is larger than the budget: %v", err)
	}
	if _, err := b.Open(Footprint{Reserve: 10, Worst: 1000}); err != nil {
		t.Fatalf("a stream whose worst case is the budget: %v", err)
	}
	if _, err := b.Open(fp); err != nil {
		t.Fatalf("after a close: %v", err)
	}
	st := b.Stats()
	if st.Reserved != 810 || st.Used != 810 || st.Refused != 3 {
		t.Errorf("stats %+v", st)
	}
}

func TestUnlimitedAccountsOnly(t *testing.T) {
	b := New(0)
	for range 100 {
		a, err := b.Open(Footprint{Reserve: 1 << 40, Window: 1 << 40})
		if err != nil {
			t.Fatal(err)
		}
		a.WindowFull()
		a.WindowFull()
		if a.Wait(context.Background()) {
			t.Fatal("waited without a limit")
		}
	}
	if st := b.Stats(); st.Used != 300<<40 {
		t.Errorf("used %d", st.Used)
	}
}

func TestWindowsAndGrowth(t *testing.T) {
	b := New(10000)
	a, _ := b.Open(Footprint{Reserve: 1000, Window: 300, Summaries: 200})
	a.WindowFull() // every window in flight is charged, the first too
	if got := a.Charged(); got != 1300 {
		t.Errorf("one window in flight: charged %d", got)
	}
	a.WindowFull()
	a.WindowFull()
	if got := a.Charged(); got != 1900 {
		t.Errorf("three windows in flight: charged %d", got)
	}
	a.Summaries(150) // within the share
	a.Summaries(500) // 300 past it
	if got := b.Stats(); got.Windows != 900 || got.Growth != 300 || got.Used != 2200 {
		t.Errorf("stats %+v", got)
	}
	a.WindowDone()
	a.WindowDone()
	a.Summaries(100)
	if got := b.Stats(); got.Used != 1300 {
		t.Errorf("after the windows: %+v", got)
	}
	// A closed stream keeps its charges until its last window is done.
	a.Close()
	if got := b.Stats().Used; got != 1300 {
		t.Errorf("closed with a window in flight: used %d", got)
	}
	a.WindowDone()
	if got := b.Stats().Used; got != 0 {
		t.Errorf("closed and done: used %d", got)
	}
	a.WindowDone() // more than were in flight: no effect
	if got := b.Stats().Used; got != 0 {
		t.Errorf("extra WindowDone: used %d", got)
	}
}

// TestWaitIsBackPressure: a producer whose next window would pass the
// limit waits until a window in flight is done, and never when its stream
// has nothing in flight.
func TestWaitIsBackPressure(t *testing.T) {
	b := New(1000)
	a, _ := b.Open(Footprint{Reserve: 400, Window: 300})
	ctx := context.Background()
	if a.Wait(ctx) {
		t.Fatal("waited with nothing in flight")
	}
	a.WindowFull()
	if a.Wait(ctx) { // 700 + 300 ≤ 1000
		t.Fatal("waited with room for one more window")
	}
	a.WindowFull() // 1000 charged: one more would pass the limit
	done := make(chan bool)
	go func() { done <- a.Wait(ctx) }()
	select {
	case <-done:
		t.Fatal("did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	a.WindowDone()
	if !<-done {
		t.Error("Wait reported no wait")
	}
	st := b.Stats()
	if st.Waits != 1 || st.WaitSeconds <= 0 {
		t.Errorf("stats %+v", st)
	}

	// Context and Close end a wait.
	a.WindowFull()
	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- a.Wait(cctx) }()
	cancel()
	<-done
	go func() { done <- a.Wait(ctx) }()
	b.Close()
	<-done
	if a.Wait(ctx) {
		t.Error("waited after Close")
	}
}

// TestConcurrentProducers runs producers that fill windows and a sorter
// that finishes them: the charges never pass the limit by more than one
// window per producer, and every producer finishes.
func TestConcurrentProducers(t *testing.T) {
	const limit, window, producers = 10000, 500, 8
	b := New(limit)
	work := make(chan *Account, 1000)
	var sorter sync.WaitGroup
	sorter.Go(func() {
		for a := range work {
			time.Sleep(50 * time.Microsecond)
			a.WindowDone()
		}
	})
	var wg sync.WaitGroup
	var mu sync.Mutex
	most := int64(0)
	var accounts []*Account
	for range producers {
		a, err := b.Open(Footprint{Reserve: 600, Window: window})
		if err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	for _, a := range accounts {
		wg.Go(func() {
			for range 200 {
				a.Wait(context.Background())
				a.WindowFull()
				mu.Lock()
				most = max(most, b.Stats().Used)
				mu.Unlock()
				work <- a
			}
		})
	}
	wg.Wait()
	close(work)
	sorter.Wait()
	if most > limit+producers*window {
		t.Errorf("charges reached %d, limit %d", most, limit)
	}
	if st := b.Stats(); st.Windows != 0 || st.Reserved != producers*600 {
		t.Errorf("after: %+v", st)
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1048576", 1 << 20}, {"512MiB", 512 << 20}, {"512 mib", 512 << 20},
		{"1.5GiB", 3 << 29}, {"4G", 4 << 30}, {"2TB", 2 << 40}, {"10KiB", 10 << 10}, {"7B", 7},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "MiB", "-1GiB", "1.5.2G", "12 parsecs", "1e30TiB", "NaN"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {256 << 20, "256 MiB"}, {3 << 29, "1.5 GiB"}, {1023 << 10, "1023 KiB"}, {10*(1<<20) + 1<<19, "10.5 MiB"}} {
		if got := Size(tc.n); got != tc.want {
			t.Errorf("Size(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestChargeBeforeKeeping checks that Charge charges what a stream is
// about to keep against its share and the limit: it passes while they hold
// it, waits while the stream has windows in flight, and refuses with
// ErrExhausted when nothing in flight would free memory.
func TestChargeBeforeKeeping(t *testing.T) {
	b := New(1000)
	a, _ := b.Open(Footprint{Reserve: 600, Window: 100, Summaries: 200})
	ctx := context.Background()
	if err := a.Charge(ctx, 150); err != nil { // within the share
		t.Fatal(err)
	}
	if got := b.Stats().Used; got != 600 {
		t.Fatalf("used %d after a charge within the share, want 600", got)
	}
	if err := a.Charge(ctx, 350); err != nil { // 300 past the share: 900
		t.Fatal(err)
	}
	if got := b.Stats().Used; got != 900 {
		t.Fatalf("used %d, want 900", got)
	}
	err := a.Charge(ctx, 101) // 1001: nothing in flight to wait for
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("charge past the limit: %v, want ErrExhausted", err)
	}
	if got := b.Stats().Used; got != 900 {
		t.Fatalf("used %d after a refused charge, want 900", got)
	}

	// With a window in flight, Charge waits until the summaries shrink.
	a.WindowFull()
	done := make(chan error)
	go func() { done <- a.Charge(ctx, 101) }()
	for b.Stats().Waits == 0 {
		runtime.Gosched()
	}
	// The summaries shrink first: the waiter may try again between the
	// two, and with the window done but the summaries not measured yet,
	// nothing in flight would make room.
	a.Summaries(300) // the window's strings are gone: 100 past the share
	a.WindowDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().Used; got != 801 {
		t.Fatalf("used %d after the wait, want 600+100+101", got)
	}
	a.Summaries(0)
	if got := b.Stats().Used; got != 600 {
		t.Fatalf("used %d after the summaries measured 0, want 600", got)
	}

	// A context ends a wait, and Close lets every charge through.
	a.WindowFull()
	if err := a.Charge(ctx, 300); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.Charge(cctx, 301); !errors.Is(err, context.Canceled) {
		t.Fatalf("charge with a cancelled context: %v", err)
	}
	b.Close()
	if err := a.Charge(ctx, 301); err != nil {
		t.Fatalf("charge after Close: %v", err)
	}
}

// TestChargeWaitsForOtherStreams: a charge that does not fit waits while
// another stream has windows in flight whose summarising would make room,
// and is refused at once when they would not.
func TestChargeWaitsForOtherStreams(t *testing.T) {
	b := New(1000)
	a, _ := b.Open(Footprint{Reserve: 100, Window: 300})
	o, _ := b.Open(Footprint{Reserve: 100, Window: 300})
	o.WindowFull()
	o.WindowFull() // 800 charged
	ctx := context.Background()
	done := make(chan error)
	go func() { done <- a.Charge(ctx, 300) }()
	for b.Stats().Waits == 0 {
		runtime.Gosched()
	}
	o.WindowDone() // 500: the charge fits
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.Stats().Used; got != 800 {
		t.Fatalf("used %d, want 800", got)
	}
	// 800 + 501 − 300 in flight > 1000: refused at once.
	if err := a.Charge(ctx, 501); !errors.Is(err, ErrExhausted) {
		t.Fatalf("charge that the window in flight would not make room for: %v, want ErrExhausted", err)
	}
	// A window: 800 + 300 − 300 in flight ≤ 1000: waits, then fits.
	go func() { done <- a.Grow(ctx, 0, 1) }()
	for b.Stats().Waits == 1 {
		runtime.Gosched()
	}
	o.WindowDone()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := b.Stats(); got.Used != 800 || got.Windows != 300 {
		t.Fatalf("after a window charged ahead: %+v, want 800 used, 300 of it the window", got)
	}
	a.WindowFull() // the window charged ahead: not charged again
	if got := b.Stats().Used; got != 800 {
		t.Fatalf("used %d after the window charged ahead filled, want 800", got)
	}
	a.WindowDone()
	if err := a.Charge(ctx, 501); !errors.Is(err, ErrExhausted) {
		t.Fatalf("charge past the limit with nothing in flight: %v, want ErrExhausted", err)
	}
	a.Grow(ctx, 0, 1)
	a.Summaries(300) // the window charged ahead never filled: its charge goes
	if got := b.Stats(); got.Used != 500 || got.Windows != 0 {
		t.Fatalf("after a measure: %+v, want 500 used and no windows", got)
	}
}

// TestUnchangedSkipsTheLock: a producer's Summaries of what its stream
// last measured, with nothing charged since, and its Wait on a stream with
// no window in flight return without the budget's lock, which every
// producer shares; a Summaries after a Grow measures again even when it
// reports the same bytes as before.
func TestUnchangedSkipsTheLock(t *testing.T) {
	b := New(1000)
	a, err := b.Open(Footprint{Reserve: 100, Window: 100, Summaries: 50})
	if err != nil {
		t.Fatal(err)
	}
	a.Summaries(80)
	if got := a.Charged(); got != 130 {
		t.Fatalf("charged %d, want 130", got)
	}
	b.mu.Lock()
	done := make(chan bool)
	go func() {
		a.Summaries(80)
		done <- a.Wait(context.Background())
	}()
	select {
	case waited := <-done:
		if waited {
			t.Error("waited with nothing in flight")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an unchanged Summaries or an idle Wait waits for the budget's lock")
	}
	b.mu.Unlock()

	if err := a.Grow(context.Background(), 200, 0); err != nil {
		t.Fatal(err)
	}
	if got := a.Charged(); got != 330 {
		t.Fatalf("after a Grow of 200: charged %d, want 330", got)
	}
	a.Summaries(80) // the values grown for were not kept after all
	if got := a.Charged(); got != 130 {
		t.Errorf("after Summaries: charged %d, want 130", got)
	}
	a.WindowFull()
	a.Summaries(80)
	if got := a.Charged(); got != 230 {
		t.Errorf("with a window in flight: charged %d, want 230", got)
	}
}

// TestAccountSize checks that an Account, of which a daemon holds one for
// each stream, fits the 80-byte allocation size class: its summary growth
// is derived from what it measured, not kept beside it.
func TestAccountSize(t *testing.T) {
	if n := unsafe.Sizeof(Account{}); n > 80 {
		t.Errorf("an Account takes %d bytes, want at most 80", n)
	}
}

// TestTryGrow checks that TryGrow charges what Grow charges when the
// budget holds it, and when it does not, charges nothing and reports
// false at once where Grow would wait; and that a closed account's
// charges come back, TryGrow's with Grow's, and it charges it nothing more.
func TestTryGrow(t *testing.T) {
	fp := Footprint{Reserve: 1000, Window: 300, Summaries: 200}
	tried, grown := New(3000), New(3000)
	ta, _ := tried.Open(fp)
	ga, _ := grown.Open(fp)
	for i, c := range []struct {
		bytes   int64
		windows int
	}{{100, 0}, {150, 0}, {0, 1}, {400, 2}, {0, 0}, {-5, 0}} {
		if !ta.TryGrow(c.bytes, c.windows) {
			t.Fatalf("charge %d (%+v): TryGrow refused it with %d of %d used", i, c, tried.Stats().Used, tried.Stats().Limit)
		}
		if err := ga.Grow(context.Background(), c.bytes, c.windows); err != nil {
			t.Fatal(err)
		}
		if got, want := tried.Stats(), grown.Stats(); got != want {
			t.Fatalf("charge %d (%+v): TryGrow left %+v, Grow %+v", i, c, got, want)
		}
	}
	// 1,000 reserved, 900 for three windows, 450 past the summaries'
	// share of 200: 650 left.
	before := tried.Stats()
	if ta.TryGrow(651, 0) {
		t.Fatal("TryGrow charged 651 bytes with 650 free")
	}
	if ta.TryGrow(0, 3) {
		t.Fatal("TryGrow charged three windows of 300 with 650 bytes free")
	}
	// Grow would wait for the windows in flight: with a context already
	// done, it gives up, charging nothing either.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ga.Grow(done, 651, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Grow of what TryGrow refused: %v, want it to wait", err)
	}
	if got, want := tried.Stats(), grown.Stats(); got.Used != want.Used || got.Growth != want.Growth || got.Windows != want.Windows {
		t.Fatalf("after a refused charge: TryGrow left %+v, Grow %+v", got, want)
	}
	if got := tried.Stats(); got != before {
		t.Fatalf("a refused TryGrow changed the budget: %+v, was %+v", got, before)
	}
	if !ta.TryGrow(650, 0) {
		t.Fatal("TryGrow refused 650 bytes with 650 free")
	}
	if got := tried.Stats().Used; got != 3000 {
		t.Fatalf("used %d after charging what was free, want 3000", got)
	}
	ta.Close()
	if !ta.TryGrow(500, 1) {
		t.Fatal("TryGrow on a closed account reported false")
	}
	if got := tried.Stats(); got.Used != 0 {
		t.Fatalf("a closed account left %+v charged", got)
	}
}

// TestZeroAccount: an account never opened, as a stream holds before its
// budget opens it, charges nothing and changes nothing, as a nil one.
func TestZeroAccount(t *testing.T) {
	b := New(1 << 20)
	for _, a := range []*Account{nil, new(Account)} {
		if a.Opened() {
			t.Fatal("an account never opened reports itself opened")
		}
		if err := a.Grow(context.Background(), 1<<30, 3); err != nil {
			t.Errorf("Grow: %v", err)
		}
		if !a.TryGrow(1<<30, 3) {
			t.Error("TryGrow refused")
		}
		a.WindowFull()
		a.WindowDone()
		a.Summaries(1 << 30)
		a.Wait(context.Background())
		a.Close()
		if got := a.Charged(); got != 0 {
			t.Errorf("charged %d", got)
		}
	}
	if st := b.Stats(); st.Used != 0 {
		t.Errorf("the budget counts %d bytes", st.Used)
	}
	var a Account
	if err := b.OpenAt(&a, Footprint{Reserve: 100, Window: 10, Worst: 200}); err != nil || !a.Opened() {
		t.Fatalf("OpenAt: %v, opened %v", err, a.Opened())
	}
	a.Close()
	if st := b.Stats(); st.Used != 0 {
		t.Errorf("after Close the budget counts %d bytes", st.Used)
	}
}
