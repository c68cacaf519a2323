package pipeline

import (
	"context"
	"math"
	"time"

	"streamd/internal/radix"
	"streamd/summary"
	"streamd/window"
)

// Idle streams.
//
// A stream's values wait in its partial window until W of them fill it:
// up to W raw values (256 KiB of float32 at the default W = 2^16) and the
// room its buffer doubled into. A stream that goes quiet would keep them
// for ever, though its summaries take far less. So a sweeper, started by
// Open, walks the streams every IdleFlush/4 (sweepEvery) and flushes the
// partial window of every part that has had no value for IdleFlush:
//
//   - when its raw values take more memory than their digest would add to
//     the summaries (digestPays), it is digested into them as a short
//     window: on the CPU by the sweeper itself, with a sort fast at small
//     sizes (radix's pdqsort below a few hundred keys), when it holds
//     fewer than sorterMin values; through the sorter's queue, as a full
//     window is, when it holds more;
//   - else it stays raw, and exact, in a buffer of exactly its values
//     (window.Filler.Shrink): the room to spare goes.
//
// Either way the stream's memory is measured again, which lowers its
// charge against the budget. A partial window that the stream's sliding
// window mirrors (see Mirrored partial windows) holds nothing of its own,
// and a digest would only add to what the stream holds: it is left as it
// is.
//
// # Why a short window keeps every bound
//
// Nothing in the summaries needs a window to hold W values:
//
//   - the ε/2 sample (summary.DigestSorted, spacing max(1, εn/2) for n
//     values) is within εn/2 of the window's own n values, whatever n is;
//   - the exponential histogram of GK summaries (gksketch.Sketch) holds
//     each bucket to an error relative to its own count and combines two
//     buckets of one id whatever their sizes, so its error stays within ε
//     of the count; only its space grows, with the log of the number of
//     windows, which a flush adds one to;
//   - lossy counting takes windows of any size (lossy.Summary.AddWindow):
//     a window of n values moves its bound from ⌊εN⌋ to ⌊ε(N+n)⌋, and
//     Spec's threshold ⌊εn⌋ is never above that step;
//   - the count, sum, min and max were taken at Accept (AddMoments), and
//     the sketch counts the digest's N values once, as the partial window
//     stops counting them in the same critical section;
//   - the sliding window (last-n and time-window answers) keeps its own
//     copy of the values, in arrival order, and is left alone.
//
// # Races
//
// The partial window leaves the filler and joins the part's windows in
// flight under the stream's lock, so a query, a snapshot or a hand-off
// counts its values exactly once: raw until its digest is added, then in
// the summaries. Values that arrive meanwhile start a new partial window.
// A part dropped meanwhile (ReplacePartition, restore) is detached, and
// its digest is dropped, as a sorted window's is; a deleted stream's
// digest goes into summaries no one reads. The sweeper stops before Close
// stops the sorter: windows it queued and could not send stay queued, and
// snapshots keep them as pending values.
//
// Item streams (and hierarchy levels) keep their windows' strings in
// chunks of W items, which a short window would break: their partial
// windows are only shrunk. A pair stream's partial window of pairs is
// flushed as a value stream's is, digested by the sweeper or shrunk
// (pairStream.flushIdle).

// DefaultIdleFlush is the default Config.IdleFlush.
const DefaultIdleFlush = time.Minute

// sorterMin is the fewest values of a flushed window sent to the sorter;
// smaller ones are digested by the sweeper, which saves them a round trip
// through the sorter's queue and batches.
const sorterMin = 1 << 14

// sweepPage is the number of streams a sweep flushes before it digests
// and sends what they flushed.
const sweepPage = 256

// sweepEvery returns the time between two sweeps for IdleFlush d: a part
// is flushed between d and 1.5d after its last value.
func sweepEvery(d time.Duration) time.Duration {
	return max(d/4, 10*time.Millisecond)
}

// startSweeper starts the sweeper of idle streams, unless IdleFlush is
// negative.
func (p *Pipeline) startSweeper(ctx context.Context) {
	if p.cfg.IdleFlush < 0 {
		return
	}
	ctx, p.stopSweep = context.WithCancel(ctx)
	p.swept.Go(func() {
		t := time.NewTicker(sweepEvery(p.cfg.IdleFlush))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.sweepIdle(ctx)
			}
		}
	})
}

// stopSweeper stops the sweeper and waits for it.
func (p *Pipeline) stopSweeper() {
	if p.stopSweep != nil {
		p.stopSweep()
		p.swept.Wait()
	}
}

// A flushed window is a partial window that the sweeper digests itself,
// with the spec it was taken with.
type flushed struct {
	pt   *part
	w    *window.Buffer
	spec summary.WindowSpec
}

// sweeper is the state of one sweep: the windows to digest and the
// streams with windows to send, and the buffers the CPU digests reuse.
type sweeper struct {
	now   int64 // the pipeline's clock at the sweep, Unix nanoseconds
	after time.Duration

	small []flushed
	send  []*Stream

	shard       []*Stream // the streams of the shard being swept
	pairScratch []uint64  // the pair streams' sort buffer
	sorted32    []float32
	sorted64    []float64
	keys32      []uint32
	keys64      []uint64
	digest      summary.Digest
}

// IdleStats count what the sweeps of idle streams flushed.
type IdleStats struct {
	Digested int64 // partial windows digested into their summaries
	Shrunk   int64 // partial windows kept raw in smaller buffers
	Freed    int64 // bytes of buffer freed by Shrunk
}

// sweepIdle flushes the partial window of every part of every stream that
// has had no value since a sweep IdleFlush or more ago (see quietLocked),
// and returns what it did. It walks the streams a shard at a time,
// holding the shard's lock only to list its streams (in the order of its
// map: the walk needs none, and looking each up by name cost a hash and a
// cache miss a stream, most of an idle daemon's time at a million
// streams), and digests and sends what it flushed a page at a time.
func (p *Pipeline) sweepIdle(ctx context.Context) IdleStats {
	var st IdleStats
	if p.cfg.IdleFlush < 0 {
		return st
	}
	sw := &sweeper{now: p.cfg.Now().UnixNano(), after: p.cfg.IdleFlush}
	for shard := 0; shard < streamShards && ctx.Err() == nil && !p.closed.Load(); shard++ {
		clear(sw.shard)
		sw.shard = p.streams.shardStreams(shard, sw.shard[:0])
		for page := sw.shard; len(page) > 0 && ctx.Err() == nil && !p.closed.Load(); {
			n := min(len(page), sweepPage)
			for _, s := range page[:n] {
				s.flushIdle(sw, &st)
				for _, lvl := range s.levelStreams() {
					lvl.flushIdle(sw, &st)
				}
			}
			page = page[n:]
			p.digestFlushed(sw)
			for _, s := range sw.send {
				if err := p.sendPending(ctx, s); err != nil {
					break // closed: the windows stay queued, and counted
				}
			}
			sw.send = sw.send[:0]
		}
	}
	clear(sw.shard)
	p.idleDigested.Add(st.Digested)
	p.idleShrunk.Add(st.Shrunk)
	p.idleFreed.Add(st.Freed)
	return st
}

// flushIdle flushes the partial windows of s's quiet parts: it takes those
// to digest into sw.small or onto s's queue for the sorter (and s into
// sw.send), and shrinks the others' buffers.
func (s *Stream) flushIdle(sw *sweeper, st *IdleStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pairs != nil {
		digested, shrunk := s.pairs.flushIdle(s.cfg.Epsilon, sw, st)
		if digested {
			s.version++ // its checkpoint holds the pairs raw
		}
		if digested || shrunk {
			s.account.Summaries(s.summaryBytes())
		}
		return
	}
	freed, digested, queued := 0, false, false
	flush := func(pt *part) {
		n := pt.filler.Len()
		if !pt.quietLocked(sw.now, sw.after) || n == 0 {
			return
		}
		if s.items != nil || !digestPays(*s.cfg, n) {
			if b := pt.filler.Shrink(); b > 0 {
				freed += b
				st.Shrunk++
			}
			return
		}
		// The values move from the partial window to the windows in
		// flight in this critical section: counted once, as before.
		st.Digested++
		digested = true
		w := pt.filler.Take()
		if n >= sorterMin {
			pt.addInflight(w)
			s.pendingQ = append(s.pendingQ, fullWindow{Buffer: w, Owner: pt})
			queued = true
			return
		}
		// Not charged as a window in flight (membudget's Window is for a
		// whole window through the sorter): the sweeper digests it at once.
		pt.inflight = append(pt.inflight, w)
		sw.small = append(sw.small, flushed{pt: pt, w: w, spec: pt.sum.Spec(n, nil)})
	}
	if s.local != nil {
		flush(s.local)
	}
	for _, pt := range s.kafka {
		flush(pt)
	}
	if queued {
		sw.send = append(sw.send, s)
	}
	if freed > 0 || digested {
		st.Freed += int64(freed)
		s.account.Summaries(s.summaryBytes())
	}
}

// A quietWatch tells, from one sweep of idle streams to the next, when a
// count stopped moving: the count a sweep first saw, and when (Unix
// nanoseconds; 0: not yet).
type quietWatch struct {
	count, at int64
}

// quiet reports whether count is the one a sweep first saw at least d
// before now, noting it as seen now if not. The count's last change thus
// came more than d ago, by the pipeline's clock (Config.Now), whatever
// arrival times the batches carried.
func (q *quietWatch) quiet(count, now int64, d time.Duration) bool {
	if count != q.count || q.at == 0 {
		q.count, q.at = count, now
		return false
	}
	return now-q.at >= int64(d)
}

// quietLocked reports whether pt has had no value since a sweep at least
// d before now (quietWatch). The caller holds the stream's lock.
func (pt *part) quietLocked(now int64, d time.Duration) bool {
	return pt.seen.quiet(pt.sum.Count(), now, d)
}

// digestPays reports whether a partial window of n values of a stream of
// cfg takes more memory raw than its digest would add to the summaries:
// its ε/2 sample, one GK tuple (24 bytes) per ⌈εn/2⌉ ranks and the last,
// and the lossy entries (24 bytes) of its values counted more than ⌊εn⌋
// times, at most n/(⌊εn⌋+1) of them. At ε = 0.001 that is above about
// 18,000 float32 or 9,000 float64 values.
func digestPays(cfg summary.Config, n int) bool {
	v := 4
	if cfg.Float64 {
		v = 8
	}
	h := summary.SampleSpacing(cfg.Epsilon, n)
	samples := min(n, int(math.Ceil(float64(n)/h))+1)
	runs := n / (int(math.Floor(cfg.Epsilon*float64(n))) + 1)
	return v*n > 24*(samples+runs)
}

// digestFlushed sorts and digests the windows in sw.small on the CPU,
// adds each digest to its part and recycles the window.
func (p *Pipeline) digestFlushed(sw *sweeper) {
	for i, f := range sw.small {
		// The window is sorted into a copy: queries read it until its
		// digest is added.
		if f.w.F64 != nil {
			sw.sorted64, sw.keys64 = radix.SortedFloat64s(sw.sorted64, f.w.F64, sw.keys64)
			summary.DigestSorted(sw.sorted64, f.spec, &sw.digest)
		} else {
			sw.sorted32, sw.keys32 = radix.SortedFloat32s(sw.sorted32, f.w.F32, sw.keys32)
			summary.DigestSorted(sw.sorted32, f.spec, &sw.digest)
		}
		n := f.w.Len()
		f.pt.addFlushed(f.w, &sw.digest, f.spec)
		p.buffers.Recycle(f.w)
		p.windowsSorted.Add(1)
		p.valuesSorted.Add(int64(n))
		sw.small[i] = flushed{}
	}
	sw.small = sw.small[:0]
}

// addFlushed is addDigest for a window the sweeper digested, which was not
// charged as a window in flight.
func (pt *part) addFlushed(w *window.Buffer, d *summary.Digest, spec summary.WindowSpec) {
	pt.stream.mu.Lock()
	defer pt.stream.mu.Unlock()
	pt.addDigestLocked(w, d, spec)
}

// IdleStats returns what the sweeps of idle streams flushed so far.
func (p *Pipeline) IdleStats() IdleStats {
	return IdleStats{Digested: p.idleDigested.Load(), Shrunk: p.idleShrunk.Load(), Freed: p.idleFreed.Load()}
}
