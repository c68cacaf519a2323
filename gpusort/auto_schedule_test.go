package gpusort

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// simSides simulates Auto's two sides under a closed loop of workers, each
// sending its next batch as the last one is done, in steps of virtual
// time: a GPU side that takes every batch waiting (up to perSubmission)
// into one submission of a fixed round trip, and a CPU side of cores that
// each sort one batch at a time, or (sharing) share themselves among all
// the batches sent to the CPU, as goroutines share them.
type simSides struct {
	roundTrip     time.Duration // a GPU submission's, whatever it holds
	first         time.Duration // the first submission's, if longer
	perSubmission int
	cores         int
	perBatch      time.Duration // a CPU core's time for a batch
	sharing       bool
}

// run sends batches of n keys from workers for the given virtual time
// through a schedule (or all to one side, if only is 0 or 1), and returns
// the batches each side finished.
func (m simSides) run(workers int, span time.Duration, only int) (done [2]int) {
	var s schedule
	base := time.Unix(0, 0)
	const n = 4 << 12
	var gpuWaiting, gpuRunning int
	var gpuDoneAt time.Duration
	var cpuLeft []time.Duration // the CPU time left to each batch sent to it
	send := func(now time.Duration) {
		side := only
		if side < 0 {
			side = s.pick(n, true, base.Add(now))
		}
		if side == 0 {
			gpuWaiting++
		} else {
			cpuLeft = append(cpuLeft, m.perBatch)
		}
	}
	for range workers {
		send(0)
	}
	const step = 10 * time.Microsecond
	for now := time.Duration(0); now < span; now += step {
		if gpuRunning > 0 && now >= gpuDoneAt {
			for range gpuRunning {
				if only < 0 {
					s.finish(0, n, nil, base.Add(now))
				}
				done[0]++
				send(now)
			}
			gpuRunning = 0
		}
		if gpuRunning == 0 && gpuWaiting > 0 {
			gpuRunning = min(gpuWaiting, m.perSubmission)
			gpuWaiting -= gpuRunning
			gpuDoneAt = now + m.roundTrip
			if now == 0 {
				gpuDoneAt = now + max(m.roundTrip, m.first)
			}
		}
		// The first cores batches run, each on a core, or all share
		// the cores.
		running := min(len(cpuLeft), m.cores)
		progress := step
		if m.sharing && len(cpuLeft) > m.cores {
			running = len(cpuLeft)
			progress = step * time.Duration(m.cores) / time.Duration(running)
		}
		finished := 0
		for i := range running {
			if cpuLeft[i] -= progress; cpuLeft[i] <= 0 {
				finished++
			}
		}
		kept := cpuLeft[:0]
		for _, l := range cpuLeft {
			if l > 0 {
				kept = append(kept, l)
			}
		}
		cpuLeft = kept
		for range finished {
			if only < 0 {
				s.finish(1, n, nil, base.Add(now))
			}
			done[1]++
			send(now)
		}
	}
	return done
}

// TestSchedule checks, on simulated sides, that Auto's schedule does at
// least as well as the better side alone, and which side it uses: a GPU
// that finishes hundreds of batches in one round trip (as the compute
// back-end does) takes them all, leaving the cores to the rest of the
// daemon, even when its first submission was slow (a calibration, say:
// the batches of the probe's wait go to the CPU);
// a GPU far slower than one core takes few (a batch now and then, to
// measure it again); a GPU slower than the CPU by autoCPULead and more,
// but not that slow, shares the batches with it.
func TestSchedule(t *testing.T) {
	coalescing := simSides{roundTrip: 2 * time.Millisecond, perSubmission: 1024, cores: 8, perBatch: 200 * time.Microsecond}
	slowFirst := coalescing
	slowFirst.roundTrip, slowFirst.first = 5*time.Millisecond, 500*time.Millisecond
	slow := simSides{roundTrip: 50 * time.Millisecond, perSubmission: 1, cores: 8, perBatch: 200 * time.Microsecond}
	behind := simSides{roundTrip: 5 * time.Millisecond, perSubmission: 1, cores: 8, perBatch: 200 * time.Microsecond}
	for _, tc := range []struct {
		name    string
		m       simSides
		span    time.Duration
		gpuLeft float64 // the least share of the batches left to the GPU
		cpuLeft float64 // and to the CPU
		least   float64 // the least share of the better side's batches done
	}{
		{"coalescing GPU", coalescing, 2 * time.Second, 0.99, 0, 0.95},
		{"coalescing GPU, slow first", slowFirst, 10 * time.Second, 0.9, 0, 0.95},
		{"slow GPU", slow, 2 * time.Second, 0, 0.99, 0.95},
		{"GPU behind", behind, 2 * time.Second, 0.001, 0.5, 0.95},
		{"coalescing GPU, cores shared", sharing(coalescing), 2 * time.Second, 0.99, 0, 0.95},
		{"slow GPU, cores shared", sharing(slow), 2 * time.Second, 0, 0.99, 0.95},
		{"GPU behind, cores shared", sharing(behind), 2 * time.Second, 0.001, 0.5, 0.95},
	} {
		span := tc.span
		const workers = 256
		gpu := tc.m.run(workers, span, 0)[0]
		cpu := tc.m.run(workers, span, 1)[1]
		got := tc.m.run(workers, span, -1)
		total := got[0] + got[1]
		t.Logf("%s: GPU alone %d batches, CPU alone %d, scheduled %d (GPU %d, CPU %d)", tc.name, gpu, cpu, total, got[0], got[1])
		if best := max(gpu, cpu); float64(total) < tc.least*float64(best) {
			t.Errorf("%s: %d batches scheduled, the better side alone %d", tc.name, total, best)
		}
		if float64(got[0]) < tc.gpuLeft*float64(total) || float64(got[1]) < tc.cpuLeft*float64(total) {
			t.Errorf("%s: GPU %d and CPU %d of %d batches, want at least %v and %v of them", tc.name, got[0], got[1], total, tc.gpuLeft, tc.cpuLeft)
		}
	}
}

// sharing returns m with its CPU's cores shared among all its batches.
func sharing(m simSides) simSides {
	m.sharing = true
	return m
}

// TestScheduleGPUFails: a GPU side that fails a batch is sent none for
// autoProbe, and then is tried again; a CPU side that fails one is not
// left; a batch canceled by its caller is no failure.
func TestScheduleGPUFails(t *testing.T) {
	var s schedule
	at := time.Unix(0, 0)
	const n = 4096
	step := func(d time.Duration) time.Time { at = at.Add(d); return at }
	broken := errors.New("device lost")
	want := func(side int, what string) {
		t.Helper()
		if got := s.pick(n, true, step(time.Microsecond)); got != side {
			t.Fatalf("%s: side %d, want %d", what, got, side)
		}
	}
	want(0, "first batch, to measure the GPU")
	s.finish(0, n, nil, step(20*time.Millisecond))
	want(1, "second batch, to measure the CPU")
	s.finish(1, n, nil, step(10*time.Millisecond))
	want(0, "a batch once both are measured")
	s.finish(0, n, broken, step(time.Millisecond))
	for i := range 10 {
		want(1, fmt.Sprintf("batch %d after a failed GPU batch", i))
		s.finish(1, n, broken, step(10*time.Millisecond)) // the CPU failing too changes nothing
	}
	step(autoProbe)
	want(0, "a batch once the GPU's wait is over")
	s.finish(0, n, fmt.Errorf("sort: %w", context.Canceled), step(time.Millisecond))
	want(0, "a batch after a canceled one")
}

// TestCalibrateMeasuresBothSides: Calibrate sorts a batch on each side, so
// that a burst of batches right after it finds the GPU measured and goes
// to it, where without it all but the first would go to the CPU. The GPU
// side here is a CPU back-end of one worker.
func TestCalibrateMeasuresBothSides(t *testing.T) {
	for _, key64 := range []bool{false, true} {
		a := NewAuto(NewCPU(1), nil, NewCPU(0))
		ctx := context.Background()
		if err := a.Calibrate(ctx, 1<<12, key64); err != nil {
			t.Fatal(err)
		}
		if _, _, g, c := a.Rates(); g != 1 || c != 1 {
			t.Fatalf("key64=%v: Calibrate sorted %d batches on the GPU and %d on the CPU, want 1 and 1", key64, g, c)
		}
		if err := a.Calibrate(ctx, 1<<12, key64); err != nil {
			t.Fatal(err)
		}
		if _, _, g, c := a.Rates(); g != 1 || c != 1 {
			t.Fatalf("key64=%v: a second Calibrate sorted again: %d and %d batches", key64, g, c)
		}
		errc := make(chan error, 8)
		for range 8 {
			go func() {
				var b Quad
				for i := range Channels {
					b.F32[i] = []float32{3, 1, 2}
				}
				errc <- a.Sort(ctx, &b)
			}()
		}
		for range 8 {
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		}
		if _, _, g, c := a.Rates(); g != 9 || c != 1 {
			t.Errorf("key64=%v: a burst of 8 batches after Calibrate: %d on the GPU, %d on the CPU in all; want 9 and 1", key64, g, c)
		}
		a.Close()
	}
}

// TestProbeSpanStartsFresh: a GPU measured again after sitting idle
// (autoProbe) is sent one batch; that batch alone, however long it takes,
// must not count as a span of several batches at once, even when the
// span before the GPU went idle held many: a lone batch says nothing of a
// back-end that takes batches together.
func TestProbeSpanStartsFresh(t *testing.T) {
	var s schedule
	t0 := time.Unix(0, 0)
	g, c := &s[0], &s[1]
	// Both sides measured; the GPU's last span held 8 batches at once,
	// and it then finished them without closing another span.
	g.rate, g.spanned, g.spanPeak, g.last = 1e9, true, 8, t0
	c.rate, c.aloneRate, c.last = 1e6, 1e6, t0.Add(time.Second)
	now := t0.Add(time.Second)
	if side := s.pick(1000, true, now); side != 0 {
		t.Fatalf("an idle GPU was not sent a batch to measure it again (side %d)", side)
	}
	if g.spanPeak != 1 {
		t.Errorf("the probe's span starts with a peak of %d batches at once, want 1", g.spanPeak)
	}
	now = now.Add(20 * time.Millisecond) // a slow batch, longer than autoSpan
	s.finish(0, 1000, nil, now)
	g.settle(now.Add(time.Microsecond))
	if g.spanned {
		t.Error("one probing batch counted as a span of several batches at once")
	}
	if want := 1000 / 0.02; g.rate != want {
		t.Errorf("rate %v after the probe, want its batch's %v", g.rate, want)
	}
}
