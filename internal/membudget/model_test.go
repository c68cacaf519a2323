package membudget

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// modelAccount is what a plain reference keeps of an account.
type modelAccount struct {
	a                 Account
	fp                Footprint
	opened            bool
	inflight, prepaid int
	measured          int64
	closed, released  bool
}

func (m *modelAccount) growth() int64 { return max(m.measured-m.fp.Summaries, 0) }

// budgetModel is the reference: the sums, changed one op at a time.
type budgetModel struct {
	limit                     int64
	reserved, windows, growth int64
	inflight                  int64
	refused, waits            uint64
	closed                    bool
}

func (m *budgetModel) used() int64 { return m.reserved + m.windows + m.growth }

func (m *budgetModel) release(a *modelAccount) {
	if a.released {
		return
	}
	a.released = true
	n := int64(a.inflight + a.prepaid)
	m.reserved -= a.fp.Reserve
	m.windows -= n * a.fp.Window
	m.inflight -= n
	m.growth -= a.growth()
}

// checkModel checks a budget against the model: Stats, the total, and
// the windows in flight.
func checkModel(t *testing.T, b *Budget, m *budgetModel, what string) {
	t.Helper()
	st := b.Stats()
	want := Stats{Limit: m.limit, Reserved: m.reserved, Windows: m.windows, Growth: m.growth, Used: m.used(), Refused: m.refused, Waits: m.waits}
	st.WaitSeconds = 0
	if st != want {
		t.Fatalf("%s: stats %+v, want %+v", what, st, want)
	}
	if n := b.inflight.Load(); n != m.inflight {
		t.Fatalf("%s: %d windows in flight, want %d", what, n, m.inflight)
	}
	// The total is kept only with a limit.
	if u := b.used.Load(); (m.limit == 0 && u != 0) || (m.limit > 0 && u != m.used()) {
		t.Fatalf("%s: total %d, want %d (limit %d)", what, u, m.used(), m.limit)
	}
}

// TestBudgetMatchesModel runs random ops, one at a time, some on a
// goroutine of their own, on budgets of no limit, tiny limits and large
// ones, with charges near and past the limit and accounts closed with
// windows in flight, and compares the budget with a plain model after
// every op: Stats, the total, refusals and waits.
func TestBudgetMatchesModel(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	ops := 4000
	if testing.Short() {
		ops = 800
	}
	for seed, limit := range []int64{0, 1, 1000, 5000, 1 << 16, 1 << 24, 0, 3000, 1 << 20} {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		b := New(limit)
		m := &budgetModel{limit: limit}
		scale := max(limit, 1<<16) / 16
		var accounts []*modelAccount
		run := func(f func()) {
			if r.IntN(2) == 0 {
				f()
				return
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				f()
			}()
			<-done
		}
		// Past the limit even a charge of nothing is refused.
		fits := func(n int64) bool { return m.limit == 0 || m.used()+n <= m.limit }
		pick := func() *modelAccount {
			if len(accounts) == 0 {
				return nil
			}
			return accounts[r.IntN(len(accounts))]
		}
		for i := range ops {
			var what string
			switch op := r.IntN(100); {
			case op < 12 || len(accounts) == 0:
				fp := Footprint{Reserve: r.Int64N(scale/4 + 1), Window: r.Int64N(scale/2 + 1)}
				fp.Summaries = r.Int64N(fp.Reserve + 1)
				if r.IntN(4) == 0 {
					fp.Worst = r.Int64N(2*scale + 1)
				}
				ma := &modelAccount{fp: fp}
				if r.IntN(5) == 0 {
					what = "RestoreAt"
					run(func() { b.RestoreAt(&ma.a, fp) })
					m.reserved += fp.Reserve
					ma.opened = true
				} else {
					what = "OpenAt"
					var err error
					run(func() { err = b.OpenAt(&ma.a, fp) })
					worst := max(fp.Worst, fp.Reserve)
					wantOK := m.limit == 0 || (worst <= m.limit && fits(fp.Reserve))
					if (err == nil) != wantOK {
						t.Fatalf("op %d limit %d: OpenAt(%+v) = %v with %d used, want ok %v", i, limit, fp, err, m.used(), wantOK)
					}
					if err != nil && !errors.Is(err, ErrExhausted) {
						t.Fatal(err)
					}
					if err != nil {
						m.refused++
					} else {
						m.reserved += fp.Reserve
						ma.opened = true
					}
				}
				if ma.opened {
					accounts = append(accounts, ma)
				}
			case op < 30:
				what = "TryGrow"
				a := pick()
				n, win := r.Int64N(scale/2+1)-scale/16, r.IntN(3)
				var ok bool
				run(func() { ok = a.a.TryGrow(n, win) })
				wantOK := true
				if (n > 0 || win > 0) && !a.released {
					n, win = max(n, 0), max(win, 0)
					d := max(a.measured+n-a.fp.Summaries, 0) - a.growth()
					w := int64(win) * a.fp.Window
					if wantOK = fits(d + w); wantOK {
						a.measured += n
						a.prepaid += win
						m.growth += d
						m.windows += w
						m.inflight += int64(win)
					}
				}
				if ok != wantOK {
					t.Fatalf("op %d limit %d: TryGrow = %v with %d used, want %v", i, limit, ok, m.used(), wantOK)
				}
			case op < 42:
				what = "Grow"
				a := pick()
				n, win := r.Int64N(scale/2+1), r.IntN(3)
				var err error
				run(func() { err = a.a.Grow(cancelled, n, win) })
				var want error
				if (n > 0 || win > 0) && !a.released {
					d := max(a.measured+n-a.fp.Summaries, 0) - a.growth()
					w := int64(win) * a.fp.Window
					switch {
					case fits(d+w) || m.closed:
						a.measured += n
						a.prepaid += win
						m.growth += d
						m.windows += w
						m.inflight += int64(win)
					case a.inflight > 0 || (m.inflight > 0 && m.used()-m.windows+d+w <= m.limit):
						want = context.Canceled
						m.waits++
					default:
						want = ErrExhausted
					}
				}
				if (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
					t.Fatalf("op %d limit %d: Grow(%d, %d) = %v with %d used, want %v", i, limit, n, win, err, m.used(), want)
				}
			case op < 58:
				what = "WindowFull"
				a := pick()
				run(a.a.WindowFull)
				a.inflight++
				if a.prepaid > 0 {
					a.prepaid--
				} else if !a.released {
					m.windows += a.fp.Window
					m.inflight++
				}
			case op < 74:
				what = "WindowDone"
				a := pick()
				run(a.a.WindowDone)
				if a.inflight > 0 {
					if !a.released {
						m.windows -= a.fp.Window
						m.inflight--
					}
					a.inflight--
					if a.closed && a.inflight == 0 {
						m.release(a)
					}
				}
			case op < 84:
				what = "Summaries"
				a := pick()
				n := r.Int64N(scale/2 + 1)
				run(func() { a.a.Summaries(n) })
				if !a.released {
					m.windows -= int64(a.prepaid) * a.fp.Window
					m.inflight -= int64(a.prepaid)
					a.prepaid = 0
					before := a.growth()
					a.measured = n
					m.growth += a.growth() - before
				}
			case op < 90:
				what = "Wait"
				a := pick()
				var waited bool
				run(func() { waited = a.a.Wait(cancelled) })
				want := m.limit > 0 && a.inflight > 0 && !m.closed && m.used()+a.fp.Window > m.limit
				if want {
					m.waits++
				}
				if waited != want {
					t.Fatalf("op %d limit %d: Wait = %v with %d used, %d in flight, window %d; want %v", i, limit, waited, m.used(), a.inflight, a.fp.Window, want)
				}
			case op < 99:
				what = "Close"
				a := pick()
				run(a.a.Close)
				if !a.closed {
					a.closed = true
					if a.inflight == 0 {
						m.release(a)
					}
				}
			default:
				if i > ops*3/4 {
					what = "Budget.Close"
					b.Close()
					m.closed = true
				} else {
					what = "Charged"
					a := pick()
					want := int64(0)
					if !a.released {
						want = a.fp.Reserve + int64(a.inflight+a.prepaid)*a.fp.Window + a.growth()
					}
					if got := a.a.Charged(); got != want {
						t.Fatalf("op %d: Charged %d, want %d", i, got, want)
					}
				}
			}
			checkModel(t, b, m, what)
		}
		// Close every account, then finish every window in flight.
		for _, a := range accounts {
			run(a.a.Close)
			if !a.closed {
				a.closed = true
				if a.inflight == 0 {
					m.release(a)
				}
			}
			checkModel(t, b, m, "Close at the end")
		}
		for _, a := range accounts {
			for a.inflight > 0 {
				run(a.a.WindowDone)
				if !a.released {
					m.windows -= a.fp.Window
					m.inflight--
				}
				a.inflight--
				if a.inflight == 0 {
					m.release(a)
				}
				checkModel(t, b, m, "WindowDone at the end")
			}
		}
		if st := b.Stats(); st.Used != 0 || st.Reserved != 0 || st.Windows != 0 || st.Growth != 0 || b.used.Load() != 0 {
			t.Fatalf("limit %d: after every account closed: %+v, total %d", limit, st, b.used.Load())
		}
	}
}
