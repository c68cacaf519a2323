package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"streamd/feed"
	"streamd/summary"
)

// mirrorState returns whether s's only part mirrors its partial window,
// how many values it mirrors, and the bytes of its filler's buffer.
func mirrorState(t *testing.T, s *Stream) (mirror bool, mirrored, bytes int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := s.partsLocked()
	if len(parts) != 1 {
		t.Fatalf("%s: %d parts, want 1", s.Name(), len(parts))
	}
	return parts[0].mirror, int(parts[0].mirrored), parts[0].filler.Bytes()
}

// checkLast checks s's answers over its last n values against x, the
// values it was sent, exactly: n is at most what its sliding window keeps
// raw.
func checkLast(t *testing.T, s *Stream, x []float64, n int) {
	t.Helper()
	snap, err := s.Last(int64(n))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Count() != int64(n) {
		t.Fatalf("%s: last %d counts %d", s.Name(), n, snap.Count())
	}
	want := slices.Clone(x[len(x)-n:])
	slices.Sort(want)
	for _, phi := range []float64{0, 0.25, 0.5, 0.9, 1} {
		got, _, _ := snap.Quantile(phi)
		if w := want[max(0, int(phi*float64(n)+0.999999)-1)]; got != float64(float32(w)) && got != w {
			t.Fatalf("%s: last %d, φ %v: %v, want %v", s.Name(), n, phi, got, w)
		}
	}
}

// TestMirroredPartialWindow: a stream of one part keeps the values of its
// partial window only in its sliding window, on every arrival order, in
// float32 and float64, and answers exactly from them, all history and
// last n; a batch that fills a window and values from a second source make
// the part hold them itself, and the answers stay within ε; a snapshot
// restores it as it was; an idle flush leaves a mirrored window alone.
func TestMirroredPartialWindow(t *testing.T) {
	const eps, w = 0.02, 8192
	for _, float64s := range []bool{false, true} {
		for _, order := range []string{"random", "sorted", "reverse", "dups"} {
			name := order
			if float64s {
				name += "/float64"
			}
			t.Run(name, func(t *testing.T) {
				clock := &fakeClock{now: idleStart}
				cfg := Config{Now: clock.Now, IdleFlush: time.Minute,
					Defaults: summary.Config{Epsilon: eps, WindowSize: w, SlidingWindow: 4 * w, Float64: float64s}}
				p := open(t, cfg)
				ctx := context.Background()
				x := idleValues(order, 3*w, 21)
				if order == "reverse" {
					x = idleValues("sorted", 3*w, 21)
					slices.Reverse(x)
				}
				v := 4
				if float64s {
					v = 8
				}

				// Below a window, the sliding window alone holds them.
				thin := x[:w-1]
				acceptChunks(t, p, "thin", thin)
				thinS := mustStream(t, p, "thin")
				if mirror, n, b := mirrorState(t, thinS); !mirror || n != len(thin) || b != 0 {
					t.Fatalf("mirror %v, %d values mirrored, %d bytes of filler; want %d mirrored in none", mirror, n, b, len(thin))
				}
				checkStream(t, thinS, thin, 0)
				checkLast(t, thinS, thin, len(thin))
				if st := thinS.Stats(); st.Count != int64(len(thin)) || st.Pending != int64(len(thin)) || st.Bytes > 2*v*len(thin)+24*2*64 {
					t.Fatalf("stats %+v", st.Stats)
				}

				// One more value fills the window: the part holds its
				// values from then on.
				full := x[:2*w+100]
				acceptChunks(t, p, "full", full)
				fullS := mustStream(t, p, "full")
				if mirror, n, _ := mirrorState(t, fullS); mirror || n != 0 {
					t.Fatalf("after a window: mirror %v, %d values mirrored", mirror, n)
				}
				waitStreamSummarised(t, fullS, 2*w)
				checkStream(t, fullS, full, eps)
				checkLast(t, fullS, full, len(full))

				// Values from a Kafka partition: the local part holds its
				// values too.
				two := x[:3000]
				acceptChunks(t, p, "two", two)
				src := feed.Source{Topic: "t", Partition: 1}
				if err := acceptValues(ctx, p, src, "two", slices.Clone(x[3000:3500]), time.Time{}); err != nil {
					t.Fatal(err)
				}
				twoS := mustStream(t, p, "two")
				twoS.mu.Lock()
				local, kafka := twoS.local, twoS.kafkaPart(src)
				localMirror, localHeld, kafkaMirror := local.mirror || local.mirrored != 0, local.filler.Len(), kafka.mirror
				twoS.mu.Unlock()
				if localMirror || kafkaMirror || localHeld != 3000 {
					t.Fatalf("two parts: local mirrors %v and holds %d values, Kafka mirrors %v", localMirror, localHeld, kafkaMirror)
				}
				checkStream(t, twoS, x[:3500], eps) // two parts' views merged
				checkLast(t, twoS, x[:3500], 3500)

				// A snapshot restores the mirrored stream's values.
				data, err := p.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				r := openRestored(t, Config{Defaults: cfg.Defaults}, data)
				rThin, rFull := mustStream(t, r, "thin"), mustStream(t, r, "full")
				checkStream(t, rThin, thin, 0)
				checkLast(t, rThin, thin, len(thin))
				checkStream(t, mustStream(t, r, "two"), x[:3500], eps)
				// Restored, a stream of one part mirrors its partial
				// window again: the thin one its values, the full one
				// the 100 past its two windows.
				for _, c := range []struct {
					s *Stream
					n int
				}{{rThin, len(thin)}, {rFull, 100}} {
					if mirror, n, b := mirrorState(t, c.s); !mirror || n != c.n || b != 0 {
						t.Fatalf("restored %s: mirror %v, %d values mirrored, %d bytes of filler; want %d mirrored in none", c.s.Name(), mirror, n, b, c.n)
					}
				}
				waitStreamSummarised(t, rFull, 2*w)
				checkStream(t, rFull, full, eps)
				acceptChunks(t, r, "full", x[:w])
				checkStream(t, rFull, append(slices.Clone(full), x[:w]...), eps)
				checkLast(t, rFull, append(slices.Clone(full), x[:w]...), len(full)+w)

				// Quiet, the thin stream keeps its mirrored window as it
				// is: it holds nothing of its own, and a digest would only
				// add to what the stream holds. The other streams' partial
				// windows are flushed.
				before := thinS.Stats().Memory
				sweepQuiet(p, clock, time.Minute)
				if mirror, n, b := mirrorState(t, thinS); !mirror || n != len(thin) || b != 0 {
					t.Fatalf("after a sweep: mirror %v, %d values mirrored, %d bytes of filler", mirror, n, b)
				}
				if st := thinS.Stats(); st.Pending != int64(len(thin)) || st.Memory != before {
					t.Fatalf("after a sweep: %d pending, charge %d (%d before)", st.Pending, st.Memory, before)
				}
				checkStream(t, thinS, thin, 0)
				checkLast(t, thinS, thin, len(thin))
				more := x[w : w+500]
				acceptChunks(t, p, "thin", more)
				checkStream(t, thinS, append(slices.Clone(thin), more...), eps)
				checkLast(t, thinS, append(slices.Clone(thin), more...), len(thin)+len(more))
			})
		}
	}
}

// TestMirroredPartialWindowRejectsMeasured: rejects from a second source
// give the stream a second part, and its first part's mirrored values a
// copy of their own: the stream is charged for it at once, as for any
// values it holds, not at its next batch.
func TestMirroredPartialWindowRejectsMeasured(t *testing.T) {
	const w = 8192
	cfg := Config{Defaults: summary.Config{Epsilon: 0.01, WindowSize: w, SlidingWindow: 2 * w}}
	for _, reject := range []string{"Reject", "Accept"} {
		t.Run(reject, func(t *testing.T) {
			p := open(t, cfg)
			ctx := context.Background()
			x := idleValues("random", w-1, 3)
			acceptChunks(t, p, "m", x)
			s := mustStream(t, p, "m")
			if mirror, n, _ := mirrorState(t, s); !mirror || n != len(x) {
				t.Fatalf("mirror %v, %d values mirrored; want %d", mirror, n, len(x))
			}
			src := feed.Source{Topic: "t", Partition: 2}
			switch reject {
			case "Reject":
				p.Reject("m", src, feed.ReasonNaN, 3)
			case "Accept": // values beyond float32's range only
				if err := acceptValues(ctx, p, src, "m", []float64{1e300, -1e300}, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			s.mu.Lock()
			held, copied := s.summaryBytes(), s.local.filler.Len()
			s.mu.Unlock()
			if copied != len(x) {
				t.Fatalf("the local part holds %d values, want %d", copied, len(x))
			}
			st := s.Stats()
			if st.Memory < held {
				t.Fatalf("charged %d bytes, holds %d", st.Memory, held)
			}
			checkStream(t, s, x, 0)
		})
	}
}
