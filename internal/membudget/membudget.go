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
type Budget struct {
	limit int64

	mu       sync.Mutex
	reserved int64         // Reserve of every live account
	windows  int64         // Window charges of windows in flight
	inflight int           // windows in flight of the accounts not released
	growth   int64         // summary growth past the accounts' shares
	changed  chan struct{} // closed, and replaced, when the charges fall
	closed   bool

	refused   uint64
	waits     uint64
	waitNanos int64
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

// used returns the charges; b.mu must be held.
func (b *Budget) used() int64 { return b.reserved + b.windows + b.growth }

// fell wakes the waiters after the charges fell; b.mu must be held.
func (b *Budget) fell() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Open reserves fp.Reserve for a new stream and returns its account, or an
// error wrapping ErrExhausted if the charges would pass the limit or the
// stream's worst case (fp.Worst) is more than the whole limit.
func (b *Budget) Open(fp Footprint) (*Account, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	worst := max(fp.Worst, fp.Reserve)
	if b.limit > 0 && (b.used()+fp.Reserve > b.limit || worst > b.limit) {
		b.refused++
		if worst > b.limit {
			return nil, fmt.Errorf("%w: the stream needs up to %s, more than the whole budget of %s", ErrExhausted, Size(worst), Size(b.limit))
		}
		return nil, fmt.Errorf("%w: the stream needs %s; %s of %s free", ErrExhausted, Size(fp.Reserve), Size(max(b.limit-b.used(), 0)), Size(b.limit))
	}
	b.reserved += fp.Reserve
	return &Account{b: b, fp: fp}, nil
}

// Restore reserves fp.Reserve for a stream that exists already, such as one
// restored from a checkpoint, even past the limit: its values were
// accepted and are never dropped.
func (b *Budget) Restore(fp Footprint) *Account {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved += fp.Reserve
	return &Account{b: b, fp: fp}
}

// Close ends every wait and makes later ones return at once: once the
// pipeline stops sorting, no window in flight would free memory.
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.fell()
	}
}

// Stats returns the budget's figures.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{
		Limit: b.limit, Reserved: b.reserved, Windows: b.windows, Growth: b.growth, Used: b.used(),
		Refused: b.refused, Waits: b.waits, WaitSeconds: float64(b.waitNanos) / 1e9,
	}
}

// Account is one stream's share of a Budget. Its methods are safe for
// concurrent use, and do nothing on a nil Account.
type Account struct {
	b        *Budget
	fp       Footprint
	inflight int32 // windows in flight
	prepaid  int32 // windows charged by Grow, not yet full
	growth   int64 // summary growth charged
	measured int64 // the summaries' bytes: the last Summaries, and Charge since
	// settled is the n of the last Summaries while nothing was charged
	// since (-1 otherwise), and busy whether inflight > 0: written under
	// b.mu, read without it, so that a producer's Summaries and Wait on a
	// stream whose figures did not change skip the budget's lock.
	settled  atomic.Int64
	busy     atomic.Bool
	closed   bool // the stream is gone
	released bool // its charges are returned
}

// Footprint returns what the account's stream is charged.
func (a *Account) Footprint() Footprint {
	if a == nil {
		return Footprint{}
	}
	return a.fp
}

// Charged returns what the account's stream is charged now: its
// reservation, its windows in flight, and its growth.
func (a *Account) Charged() int64 {
	if a == nil {
		return 0
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.released {
		return 0
	}
	return a.fp.Reserve + int64(a.inflight+a.prepaid)*a.fp.Window + a.growth
}

// WindowFull records that a window of the stream has filled and is on its
// way to the sorter; it never waits. A window charged by Grow is charged
// once.
func (a *Account) WindowFull() {
	if a == nil {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.inflight++
	a.busy.Store(true)
	if a.prepaid > 0 {
		a.prepaid--
		return
	}
	if !a.released {
		a.b.windows += a.fp.Window
		a.b.inflight++
	}
}

// WindowDone records that a window of the stream is summarised (or
// dropped), and wakes the producers waiting for memory.
func (a *Account) WindowDone() {
	if a == nil {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.inflight == 0 {
		return
	}
	if !a.released {
		a.b.windows -= a.fp.Window
		a.b.inflight--
	}
	a.inflight--
	a.busy.Store(a.inflight > 0)
	if a.closed && a.inflight == 0 {
		a.release()
	}
	a.b.fell()
}

// Summaries records that the stream's summaries and buffers hold n bytes:
// what passes their share of the reservation is charged. The windows that
// Grow charged and that are not full yet are no longer charged: the stream
// measures what it holds after the values Grow charged for are kept. When
// n is what the last Summaries recorded and nothing was charged since, it
// returns at once, without the budget's lock.
func (a *Account) Summaries(n int64) {
	if a == nil || a.settled.Load() == n {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.released {
		return
	}
	if a.prepaid > 0 {
		a.b.windows -= int64(a.prepaid) * a.fp.Window
		a.b.inflight -= int(a.prepaid)
		a.prepaid = 0
		a.b.fell()
	}
	a.measured = n
	a.settled.Store(n)
	g := max(n-a.fp.Summaries, 0)
	d := g - a.growth
	a.growth = g
	a.b.growth += d
	if d < 0 {
		a.b.fell()
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
// waits for those, which would be waiting for itself.
func (a *Account) Grow(ctx context.Context, n int64, windows int, held ...*Account) error {
	if a == nil || (n <= 0 && windows <= 0) {
		return nil
	}
	n, windows = max(n, 0), max(windows, 0)
	b := a.b
	var err error
	_, werr := b.waitUntil(ctx, func() bool {
		g := max(a.measured+n-a.fp.Summaries, 0)
		d := g - a.growth
		w := int64(windows) * a.fp.Window
		// The windows in flight that would make room: not those that
		// the caller is yet to fill.
		inflight, room := b.inflight, b.windows
		for _, h := range held {
			if h != nil && h != a && !h.released {
				inflight -= int(h.prepaid)
				room -= int64(h.prepaid) * h.fp.Window
			}
		}
		fits := b.limit == 0 || b.closed || a.released || b.used()+d+w <= b.limit
		switch {
		case fits:
			a.measured += n
			a.settled.Store(-1)
			if !a.released {
				a.growth = g
				b.growth += d
				a.prepaid += int32(windows)
				b.windows += w
				b.inflight += windows
			}
		case a.inflight > 0 || (inflight > 0 && b.used()-room+d+w <= b.limit):
			return false // wait for a window in flight
		default:
			err = fmt.Errorf("%w: %s more for the stream; %s of %s free", ErrExhausted, Size(n+w), Size(max(b.limit-b.used(), 0)), Size(b.limit))
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}

// Close records that the stream is gone. Its charges are returned once its
// last window in flight is done: until then the window keeps the stream's
// memory alive.
func (a *Account) Close() {
	if a == nil {
		return
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	if a.inflight == 0 {
		a.release()
		a.b.fell()
	}
}

// release returns every charge of a; b.mu must be held.
func (a *Account) release() {
	if a.released {
		return
	}
	a.released = true
	a.b.reserved -= a.fp.Reserve
	a.b.windows -= int64(a.inflight+a.prepaid) * a.fp.Window
	a.b.inflight -= int(a.inflight + a.prepaid)
	a.b.growth -= a.growth
}

// Wait blocks while the stream has windows in flight and one more window
// would take the budget's charges past its limit: it is the back-pressure
// that keeps ingest within the budget. It returns once a window of the
// stream or of another one is summarised and there is room, at once when
// there is room or the stream has nothing in flight (so a stream always
// makes progress), and when ctx ends or the budget is closed. It reports
// whether it waited.
func (a *Account) Wait(ctx context.Context) bool {
	if a == nil {
		return false
	}
	b := a.b
	if b.limit == 0 || !a.busy.Load() {
		return false
	}
	waited, _ := b.waitUntil(ctx, func() bool {
		return b.closed || a.inflight == 0 || b.used()+a.fp.Window <= b.limit
	})
	return waited
}

// waitUntil calls done, with b.mu held, until it returns true, waiting for
// the budget to change between calls; it counts the waits and the time
// spent waiting. It returns whether it waited, and ctx's error if ctx
// ended first.
func (b *Budget) waitUntil(ctx context.Context, done func() bool) (waited bool, err error) {
	var start time.Time
	for {
		b.mu.Lock()
		if done() {
			if !start.IsZero() {
				b.waitNanos += int64(time.Since(start))
			}
			b.mu.Unlock()
			return !start.IsZero(), nil
		}
		if start.IsZero() {
			start = time.Now()
			b.waits++
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			b.mu.Lock()
			b.waitNanos += int64(time.Since(start))
			b.mu.Unlock()
			return true, ctx.Err()
		}
	}
}
