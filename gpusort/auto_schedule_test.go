package gpusort

import (
	"testing"
	"time"
)

// simSides simulates Auto's two sides under a closed loop of workers, each
// sending its next batch as the last one is done, in steps of virtual
// time: a GPU side that takes every batch waiting (up to perSubmission)
// into one submission of a fixed round trip, and a CPU side of cores
// that each sort one batch at a time.
type simSides struct {
	roundTrip     time.Duration // a GPU submission's, whatever it holds
	first         time.Duration // the first submission's, if longer
	perSubmission int
	cores         int
	perBatch      time.Duration // a CPU core's time for a batch

	gpuWaiting, gpuRunning int
	gpuDoneAt              time.Duration
	cpuWaiting             int
	coreFree               []time.Duration
}

// run sends batches of n keys from workers for the given virtual time
// through s (or all to one side, if only is 0 or 1), and returns the
// batches each side finished.
func (m simSides) run(workers int, span time.Duration, only int) (done [2]int) {
	var s schedule
	base := time.Unix(0, 0)
	const n = 4 << 12
	m.coreFree = make([]time.Duration, m.cores)
	send := func(now time.Duration) {
		side := only
		if side < 0 {
			side = s.pick(n, true, base.Add(now))
		}
		if side == 0 {
			m.gpuWaiting++
		} else {
			m.cpuWaiting++
		}
	}
	for range workers {
		send(0)
	}
	const step = 10 * time.Microsecond
	for now := time.Duration(0); now < span; now += step {
		if m.gpuRunning > 0 && now >= m.gpuDoneAt {
			for range m.gpuRunning {
				if only < 0 {
					s.finish(0, n, true, base.Add(now))
				}
				done[0]++
				send(now)
			}
			m.gpuRunning = 0
		}
		if m.gpuRunning == 0 && m.gpuWaiting > 0 {
			m.gpuRunning = min(m.gpuWaiting, m.perSubmission)
			m.gpuWaiting -= m.gpuRunning
			m.gpuDoneAt = now + m.roundTrip
			if now == 0 {
				m.gpuDoneAt = now + max(m.roundTrip, m.first)
			}
		}
		for i, free := range m.coreFree {
			if free > 0 && now >= free {
				if only < 0 {
					s.finish(1, n, true, base.Add(now))
				}
				done[1]++
				m.coreFree[i] = 0
				send(now)
			}
			if m.coreFree[i] == 0 && m.cpuWaiting > 0 {
				m.cpuWaiting--
				m.coreFree[i] = now + m.perBatch
			}
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
	for _, tc := range []struct {
		name    string
		m       simSides
		gpuLeft float64 // the least share of the batches left to the GPU
		cpuLeft float64 // and to the CPU
		least   float64 // the least share of the better side's batches done
	}{
		{"coalescing GPU", simSides{roundTrip: 2 * time.Millisecond, perSubmission: 1024, cores: 8, perBatch: 200 * time.Microsecond}, 0.99, 0, 0.95},
		{"coalescing GPU, slow first", simSides{roundTrip: 2 * time.Millisecond, first: 500 * time.Millisecond, perSubmission: 1024, cores: 8, perBatch: 200 * time.Microsecond}, 0.75, 0, 0.9},
		{"slow GPU", simSides{roundTrip: 50 * time.Millisecond, perSubmission: 1, cores: 8, perBatch: 200 * time.Microsecond}, 0, 0.99, 0.95},
		{"GPU behind", simSides{roundTrip: 5 * time.Millisecond, perSubmission: 1, cores: 8, perBatch: 200 * time.Microsecond}, 0.001, 0.5, 0.95},
	} {
		const workers, span = 256, 2 * time.Second
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

// TestScheduleGPUFails: a GPU side that fails a batch is sent none for
// autoProbe, and then is tried again; a CPU side that fails one is not
// left.
func TestScheduleGPUFails(t *testing.T) {
	var s schedule
	at := time.Unix(0, 0)
	const n = 4096
	step := func(d time.Duration) time.Time { at = at.Add(d); return at }
	// Both sides measured: the GPU far faster than the CPU's first batch.
	if side := s.pick(n, true, step(0)); side != 0 {
		t.Fatalf("first batch to side %d, want the GPU", side)
	}
	s.finish(0, n, true, step(20*time.Millisecond))
	if side := s.pick(n, true, step(0)); side != 1 {
		t.Fatalf("second batch to side %d, want the CPU to measure it", side)
	}
	s.finish(1, n, true, step(10*time.Millisecond))
	if side := s.pick(n, true, step(0)); side != 0 {
		t.Fatalf("batch to side %d, want the GPU", side)
	}
	s.finish(0, n, false, step(time.Millisecond))
	for range 10 {
		if side := s.pick(n, true, step(10*time.Millisecond)); side != 1 {
			t.Fatalf("%v after a failed GPU batch: side %d, want the CPU", at.Sub(time.Unix(0, 0)), side)
		}
		s.finish(1, n, false, step(time.Millisecond)) // the CPU failing too changes nothing
	}
	step(autoProbe)
	if side := s.pick(n, true, step(0)); side != 0 {
		t.Fatalf("%v after the failure: side %d, want the GPU again", autoProbe, side)
	}
}
