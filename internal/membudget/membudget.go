// Package membudget accounts the memory of a set of streams against a
// limit, as Redis's maxmemory does for its keys, so that careless or
// hostile clients cannot take the machine's memory:
//
//   - A stream reserves a small fixed part (Footprint.Reserve) when it is
//     created, and is refused with ErrExhausted if the budget cannot hold
//     it, or if its bounded worst case (Footprint.Worst) is more than the
//     whole budget.
//   - What a stream holds beyond its reservation is charged as it happens,
//     so that its charge follows its data: each window in flight
//     (Footprint.Window), and what its buffers and summaries hold past
//     their share of the reservation (Footprint.Summaries).
//   - A producer whose stream has windows in flight waits (Account.Wait)
//     while one more window would take the charges past the limit: those
//     windows are being sorted, and memory falls as they are summarised.
//     So ingest slows down instead of passing the budget.
//   - What a stream is about to keep, such as the next, larger buffers its
//     values need, the windows they fill, or the strings of an item
//     stream, is charged before it is kept (Account.Charge): the producer
//     waits while windows in flight would make room once summarised, and
//     is refused with ErrExhausted when nothing in flight would.
//     Account.Summaries then measures what the stream holds.
//
// The charges can pass the limit by what concurrent producers add between
// a charge and the next measure, and by summary growth past what was
// charged, which is logarithmic in a stream's length and never refused;
// then new streams are refused until memory falls. A Budget of limit 0
// accounts without refusing or waiting.
package membudget

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrExhausted is returned, wrapped with the figures, by Budget.Open when
// the budget cannot hold a new stream's reservation, and by Account.Charge
// when it cannot hold what a stream is about to keep.
var ErrExhausted = errors.New("memory budget exhausted")

// Footprint is what one stream is charged, in bytes.
type Footprint struct {
	// Reserve is reserved for as long as the stream exists: its fixed
	// part and its first small buffers.
	Reserve int64
	// Window is charged for each window in flight, while it is.
	Window int64
	// Summaries is the part of Reserve that the stream's buffers and
	// summaries may take; what they take beyond it is charged
	// (Account.Summaries, Account.Charge).
	Summaries int64
	// Worst is what the stream may come to hold, with one window in
	// flight, before its summaries grow past their size at the stream's
	// bounds: Open refuses a stream whose Worst is more than the whole
	// budget, since it could never fill. 0 means Reserve.
	Worst int64
}

// Budget accounts streams' memory against a limit. It is safe for
// concurrent use.
//
// The charges are atomic sums, so that the charges of a batch or a window
// take no lock of the budget: each Account keeps its own figures under a
// lock of its own, which only its stream's producers and sorts take, and
// adds what changes to the sums. The budget's lock is taken only on the
// slow path: by a producer whose charge does not fit, to take the channel
// it waits on before it checks again and waits or is refused, and to wake
// such producers when the charges fall, only while there are some (see
// waitUntil for why no wakeup is lost).
type Budget struct {
	limit int64

	used     atomic.Int64 // reserved + windows + growth, kept only with a limit
	reserved atomic.Int64 // Reserve of every live account
	windows  atomic.Int64 // Window charges of windows in flight
	inflight atomic.Int64 // windows in flight of the accounts not released
	growth   atomic.Int64 // summary growth past the accounts' shares
	waiters  atomic.Int64 // producers on the slow path of waitUntil
	closed   atomic.Bool  // set, under mu, by Close

	refused   atomic.Uint64
	waits     atomic.Uint64
	waitNanos atomic.Int64

	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, when the charges fall
}

// Stats are a Budget's figures.
type Stats struct {
	Limit       int64   // the limit in bytes; 0 for none
	Reserved    int64   // reservations of the streams
	Windows     int64   // windows in flight
	Growth      int64   // summary growth past the streams' shares
	Used        int64   // Reserved + Windows + Growth
	Refused     uint64  // streams refused
	Waits       uint64  // times a producer waited for memory
	WaitSeconds float64 // time producers spent waiting
}

// New returns a budget of limit bytes; 0 means no limit.
func New(limit int64) *Budget {
	return &Budget{limit: max(limit, 0), changed: make(chan struct{})}
}

// Limit returns the limit in bytes, 0 for none.
func (b *Budget) Limit() int64 { return b.limit }

// add adds to the budget's sums, and to their total when there is a limit.
// The total changes first when the charges fall and last when they rise,
// so that it is not more than the sum of the parts (but for a charge that
// take is making): a producer that reads the parts and then the total
// (Grow) sees at most the room that windows in flight would make, and
// waits rather than being refused. Adding nothing reads nothing of b.
func (b *Budget) add(reserved, windows, inflight, growth int64) {
	d := reserved + windows + growth
	if d < 0 && b.limit > 0 {
		b.used.Add(d)
	}
	b.addSums(reserved, windows, inflight, growth)
	if d > 0 && b.limit > 0 {
		b.used.Add(d)
	}
}

// addSums adds to the sums that Stats reports, not to their total.
func (b *Budget) addSums(reserved, windows, inflight, growth int64) {
	if reserved != 0 {
		b.reserved.Add(reserved)
	}
	if windows != 0 {
		b.windows.Add(windows)
	}
	if inflight != 0 {
		b.inflight.Add(inflight)
	}
	if growth != 0 {
		b.growth.Add(growth)
	}
}

// take adds n to the charges' total if it stays within the limit (or
// there is none), and reports whether it did; the caller then adds the
// parts of n to the sums with addSums.
func (b *Budget) take(n int64) bool {
	if b.limit == 0 {
		return true
	}
	for {
		// The room is compared, not the sum, which a charge near
		// math.MaxInt64 would wrap around.
		u := b.used.Load()
		if n > b.limit-u {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// wake wakes the producers waiting for memory after the charges fell; the
// caller has subtracted them from the sums. It takes the budget's lock
// only when there are waiters.
func (b *Budget) wake() {
	if b.limit == 0 || b.waiters.Load() == 0 {
		return
	}
	b.mu.Lock()
	b.fell()
	b.mu.Unlock()
}

// fell wakes the waiters; b.mu must be held.
func (b *Budget) fell() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Open reserves fp.Reserve for a new stream and returns its account, or an
// error wrapping ErrExhausted if the charges would pass the limit or the
// stream's worst case (fp.Worst) is more than the whole limit.
func (b *Budget) Open(fp Footprint) (*Account, error) {
	a := new(Account)
	if err := b.OpenAt(a, fp); err != nil {
		return nil, err
	}
	return a, nil
}

// OpenAt is Open for an account that the caller holds, such as one inside
// its stream's structure, which spares the collector an object a stream:
// it makes *a, a zero Account, the new stream's account. a must not be
// copied after.
func (b *Budget) OpenAt(a *Account, fp Footprint) error {
	worst := max(fp.Worst, fp.Reserve)
	if b.limit > 0 && worst > b.limit {
		b.refused.Add(1)
		return fmt.Errorf("%w: the stream needs up to %s, more than the whole budget of %s", ErrExhausted, Size(worst), Size(b.limit))
	}
	if !b.take(fp.Reserve) {
		b.refused.Add(1)
		return fmt.Errorf("%w: the stream needs %s; %s of %s free", ErrExhausted, Size(fp.Reserve), Size(max(b.limit-b.used.Load(), 0)), Size(b.limit))
	}
	b.addSums(fp.Reserve, 0, 0, 0)
	*a = Account{b: b, fp: fp}
	return nil
}

// RestoreAt reserves fp.Reserve for a stream that exists already, such as
// one restored from a checkpoint, even past the limit: its values were
// accepted and are never dropped. It makes *a, a zero Account held by
// the caller (see OpenAt), the stream's account.
func (b *Budget) RestoreAt(a *Account, fp Footprint) {
	b.add(fp.Reserve, 0, 0, 0)
	*a = Account{b: b, fp: fp}
}

// Close ends every wait and makes later ones return at once: once the
// pipeline stops sorting, no window in flight would free memory.
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed.Load() {
		b.closed.Store(true)
		b.fell()
	}
}

// Stats returns the budget's figures. It takes no lock: while charges
// change, the figures may be of slightly different moments, and Used is
// always the sum of the others.
func (b *Budget) Stats() Stats {
	st := Stats{
		Limit: b.limit, Reserved: b.reserved.Load(), Windows: b.windows.Load(), Growth: b.growth.Load(),
		Refused: b.refused.Load(), Waits: b.waits.Load(), WaitSeconds: float64(b.waitNanos.Load()) / 1e9,
	}
	st.Used = st.Reserved + st.Windows + st.Growth
	return st
}

// Account is one stream's share of a Budget. Its methods are safe for
// concurrent use, and do nothing on a nil Account nor on a zero one, an
// account not opened (OpenAt, RestoreAt): such a stream is charged
// nothing.
type Account struct {
	b  *Budget
	fp Footprint

	mu       sync.Mutex
	measured int64 // the summaries' bytes: the last Summaries, and Charge since
	// The counts of windows are int32, beside the flags, to keep an
	// Account (in every stream) small: a stream holds a few windows.
	inflight int32 // windows in flight
	prepaid  int32 // windows charged by Grow, not yet full
	closed   bool  // the stream is gone
	released bool  // its charges are returned
}

// Opened reports whether a is an account a Budget opened or restored,
// rather than nil or zero.
func (a *Account) Opened() bool { return a != nil && a.b != nil }

// growthLocked returns the summary growth charged: what the summaries
// measure past their share of the reservation. a.mu must be held.
func (a *Account) growthLocked() int64 { return max(a.measured-a.fp.Summaries, 0) }

// Footprint returns what the account's stream is charged.
func (a *Account) Footprint() Footprint {
	if !a.Opened() {
		return Footprint{}
	}
	return a.fp
}

// Charged returns what the account's stream is charged now: its
// reservation, its windows in flight, and its growth.
func (a *Account) Charged() int64 {
	if !a.Opened() {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.released {
		return 0
	}
	return a.fp.Reserve + int64(a.inflight+a.prepaid)*a.fp.Window + a.growthLocked()
}

// WindowFull records that a window of the stream has filled and is on its
// way to the sorter; it never waits. A window charged by Grow is charged
// once.
func (a *Account) WindowFull() {
	if !a.Opened() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inflight++
	if a.prepaid > 0 {
		a.prepaid--
		return
	}
	if !a.released {
		a.b.add(0, a.fp.Window, 1, 0)
	}
}

// WindowDone records that a window of the stream is summarised (or
// dropped), and wakes the producers waiting for memory.
func (a *Account) WindowDone() {
	if !a.Opened() {
		return
	}
	a.mu.Lock()
	if a.inflight == 0 {
		a.mu.Unlock()
		return
	}
	if !a.released {
		a.b.add(0, -a.fp.Window, -1, 0)
	}
	a.inflight--
	if a.closed && a.inflight == 0 {
		a.release()
	}
	a.mu.Unlock()
	a.b.wake()
}

// Summaries records that the stream's summaries and buffers hold n bytes:
// what passes their share of the reservation is charged. The windows that
// Grow charged and that are not full yet are no longer charged: the stream
// measures what it holds after the values Grow charged for are kept. When
// nothing changed it only takes the account's lock.
func (a *Account) Summaries(n int64) {
	if !a.Opened() {
		return
	}
	a.mu.Lock()
	if a.released {
		a.mu.Unlock()
		return
	}
	freed := a.prepaid > 0
	if freed {
		a.b.add(0, -int64(a.prepaid)*a.fp.Window, -int64(a.prepaid), 0)
		a.prepaid = 0
	}
	before := a.growthLocked()
	a.measured = n
	d := a.growthLocked() - before
	a.b.add(0, 0, 0, d)
	a.mu.Unlock()
	if freed || d < 0 {
		a.b.wake()
	}
}

// Charge charges n more bytes that the stream's summaries are about to
// keep, before it keeps them, as summary growth; the next Summaries
// measures them. Unlike that growth, these bytes may be refused: Charge
// returns at once when the budget holds them (or has no limit, or is
// closed); waits while it does not and the stream has windows in flight,
// whose summarising frees memory, or other streams have windows in flight
// whose charges would make room; and returns an error wrapping
// ErrExhausted when nothing in flight would make room, or ctx's error when
// ctx ends first. It charges nothing when it fails.
func (a *Account) Charge(ctx context.Context, n int64) error { return a.Grow(ctx, n, 0) }

// Grow is Charge for n bytes and the given number of windows that the
// stream is about to fill, each charged Window: they are in flight for the
// budget from now on (other producers wait for them rather than being
// refused), and WindowFull charges none of them again. Summaries returns
// the charge of those that are not full by then. held are accounts of the
// same budget whose windows charged by Grow the caller fills only after
// this Grow returns, such as the other levels of one batch: Grow never
// waits for those, which would be waiting for itself. When the charge
// fits, Grow takes only the account's lock.
func (a *Account) Grow(ctx context.Context, n int64, windows int, held ...*Account) error {
	if a.TryGrow(n, windows) {
		return nil
	}
	n, windows = max(n, 0), max(windows, 0)
	b := a.b
	var err error
	_, werr := b.waitUntil(ctx, func(slow bool) bool {
		if !slow {
			return false // TryGrow was the try that does not wait
		}
		// The windows that the held accounts charged ahead would make no
		// room: the caller fills them only after this Grow returns. Read
		// them before a.mu is locked, which is never held with another
		// account's lock.
		var heldInflight, heldRoom int64
		for _, h := range held {
			if h == nil || h == a {
				continue
			}
			h.mu.Lock()
			if !h.released {
				heldInflight += int64(h.prepaid)
				heldRoom += int64(h.prepaid) * h.fp.Window
			}
			h.mu.Unlock()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		d, w := a.costLocked(n, windows)
		switch {
		case a.released:
			return true
		case b.take(d + w):
		case b.closed.Load():
			b.used.Add(d + w) // past the limit: nothing would make room
		default:
			// Wait for the windows in flight that would make room, of
			// this stream or of others; refuse when there are none. The
			// sums are read one by one, the total last (see add), and
			// the charge is tried again after the windows are read: a
			// window done meanwhile makes it fit. A window that another
			// producer charges ahead meanwhile can be missed, and the
			// charge refused as it would have been a moment before.
			inflight := b.inflight.Load() - heldInflight
			room := b.windows.Load() - heldRoom
			if !b.take(d + w) {
				used := b.used.Load()
				if a.inflight > 0 || (inflight > 0 && used-room+d+w <= b.limit) {
					return false
				}
				err = fmt.Errorf("%w: %s more for the stream; %s of %s free", ErrExhausted, Size(n+w), Size(max(b.limit-used, 0)), Size(b.limit))
				return true
			}
		}
		a.chargedLocked(n, windows, d, w)
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}

// TryGrow is Grow for a caller that must not wait, such as one that holds
// its stream's lock: it charges n bytes and the given number of windows
// and reports true if the budget holds them now (or the account is
// released, which charges nothing), and otherwise charges nothing and
// reports false, for the caller to Grow. It takes only the account's lock.
func (a *Account) TryGrow(n int64, windows int) bool {
	if !a.Opened() || (n <= 0 && windows <= 0) {
		return true
	}
	n, windows = max(n, 0), max(windows, 0)
	a.mu.Lock()
	defer a.mu.Unlock()
	d, w := a.costLocked(n, windows)
	switch {
	case a.released:
		return true
	case !a.b.take(d + w):
		return false
	}
	a.chargedLocked(n, windows, d, w)
	return true
}

// costLocked returns what charging n bytes and windows takes from the
// budget: d bytes of summary growth past the stream's share, and w bytes
// of windows. The caller holds a.mu.
func (a *Account) costLocked(n int64, windows int) (d, w int64) {
	return max(a.measured+n-a.fp.Summaries, 0) - a.growthLocked(), int64(windows) * a.fp.Window
}

// chargedLocked records a charge of n bytes and windows that took d bytes
// of growth and w of windows from the budget. The caller holds a.mu.
func (a *Account) chargedLocked(n int64, windows int, d, w int64) {
	a.measured += n
	a.prepaid += int32(windows) // a batch's windows: far fewer than 2^31
	a.b.addSums(0, w, int64(windows), d)
}

// Close records that the stream is gone. Its charges are returned once its
// last window in flight is done: until then the window keeps the stream's
// memory alive.
func (a *Account) Close() {
	if !a.Opened() {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	freed := a.inflight == 0
	if freed {
		a.release()
	}
	a.mu.Unlock()
	if freed {
		a.b.wake()
	}
}

// release returns every charge of a; a.mu must be held.
func (a *Account) release() {
	if a.released {
		return
	}
	a.released = true
	n := int64(a.inflight + a.prepaid)
	a.b.add(-a.fp.Reserve, -n*a.fp.Window, -n, -a.growthLocked())
}

// Wait blocks while the stream has windows in flight and one more window
// would take the budget's charges past its limit: it is the back-pressure
// that keeps ingest within the budget. It returns once a window of the
// stream or of another one is summarised and there is room, at once when
// there is room or the stream has nothing in flight (so a stream always
// makes progress), and when ctx ends or the budget is closed. It reports
// whether it waited.
func (a *Account) Wait(ctx context.Context) bool {
	if !a.Opened() {
		return false
	}
	b := a.b
	if b.limit == 0 {
		return false
	}
	waited, _ := b.waitUntil(ctx, func(bool) bool {
		a.mu.Lock()
		inflight := a.inflight
		a.mu.Unlock()
		return inflight == 0 || b.closed.Load() || b.used.Load()+a.fp.Window <= b.limit
	})
	return waited
}

// waitUntil calls done until it returns true, waiting for the budget to
// change between calls; it counts the waits and the time spent waiting.
// It returns whether it waited, and ctx's error if ctx ended first. The
// first call, with slow false, is the fast path: it takes no lock of the
// budget, and when it returns false waitUntil takes the slow path, where
// done is called with slow true.
//
// No wakeup is lost. On the slow path the waiter counts itself in
// b.waiters, then takes b.changed under b.mu, then calls done, which reads
// the sums (and its account's figures under the account's lock). Whoever
// makes the charges fall first subtracts them from the sums (with the
// account's lock held, for an account's figures), then calls wake, which
// loads b.waiters and, when it is not 0, closes b.changed under b.mu.
// Atomics are sequentially consistent; so if done missed the fall, its
// read came before the subtraction, and the waiter's count, before it,
// came before wake's load: wake sees the waiter. And wake's b.mu section
// comes after the waiter's, in which it took b.changed: were it before,
// the subtraction would happen before done's read (through b.mu), which
// would not have missed it. So wake closes the channel the waiter took,
// or one after it, which means the waiter's was closed already. Close
// sets b.closed and closes b.changed under b.mu, and is seen the same way.
func (b *Budget) waitUntil(ctx context.Context, done func(slow bool) bool) (waited bool, err error) {
	if done(false) {
		return false, nil
	}
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	var start time.Time
	defer func() {
		if !start.IsZero() {
			b.waitNanos.Add(int64(time.Since(start)))
		}
	}()
	for {
		b.mu.Lock()
		changed := b.changed
		b.mu.Unlock()
		if done(true) {
			return !start.IsZero(), nil
		}
		if start.IsZero() {
			start = time.Now()
			b.waits.Add(1)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
}
