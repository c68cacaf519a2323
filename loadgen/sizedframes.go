package loadgen

import (
	"fmt"
	"math"
	"sort"

	"streamd/feed"
	"streamd/ingest"
)

// SizedFrames is a run of streams of many sizes (Synth.Sizes) drawn and
// rendered ahead as frames of the framed protocol, for a FrameRunner:
// the same batches, of the same values, in the same interleaving, as
// Synth sends them through a Runner with SplitStreams, each stream over
// the connection that a hash of its name picks. Sending it costs the
// writes alone: with a million small streams, drawing, cleaning and
// framing each batch as it goes costs a sender more than a daemon takes
// to ingest it. A SizedFrames does not change once made and is safe for
// concurrent use.
type SizedFrames struct {
	streams []string
	conns   []*sizedConn
	values  int64
	bytes   int
	f32     bool
}

// A sizedConn is what one connection of a SizedFrames sends.
type sizedConn struct {
	frames []byte  // back to back
	ends   []int   // where each frame ends in frames
	values []int64 // the values of the frames up to each, included
	kept   []keptBatch
	skips  []sizedSkip
}

// A keptBatch is the values of a tracked stream in frame frame.
type keptBatch struct {
	frame  int
	stream uint32
	values []float64
}

// A sizedSkip is n values of stream left out for reason, counted once
// the frames before frame are sent; in the stream's result if tracked.
type sizedSkip struct {
	frame   int
	stream  uint32
	tracked bool
	reason  feed.Reason
	n       int
}

// SizedFramesBytes returns the most memory that RenderSized takes to
// render the streams of s as float32 frames (f32) or float64 frames: the
// frames, before any value is left out, their index, and the values it
// keeps of the streams that track reports (nil: none).
func SizedFramesBytes(s *Synth, f32 bool, track func(stream string) bool) int64 {
	var n int64
	for i, v := range s.Sizes {
		if i >= len(s.Streams) {
			break
		}
		frames, bytes := sizedFrames(s.Streams[i], v, s.batch(), f32)
		n += bytes + frames*sizedIndexBytes
		if track != nil && track(s.Streams[i]) {
			n += 8 * v
		}
	}
	return n
}

// sizedFrames returns the frames, and their bytes, of n values of stream
// rendered batch values a frame, as float32 with f32, else as float64.
func sizedFrames(stream string, n int64, batch int, f32 bool) (frames, bytes int64) {
	size := int64(8)
	if f32 {
		size = 4
	}
	frames = (n + int64(batch) - 1) / int64(batch)
	return frames, frames*int64(ingest.FrameHeadLen(stream)) + size*n
}

// sizedIndexBytes is what a SizedFrames keeps of each frame besides its
// bytes: where it ends, and the values up to it.
const sizedIndexBytes = 16

// RenderSized draws the values of the streams of s (s.Sizes set) and
// renders them as frames for conns connections, on up to conns cores:
// float32 frames with f32, else float64. As a Runner does, it leaves out
// NaN and ±Inf (with f32, also values beyond float32's range), and sends
// −0 as +0. It keeps the values of the streams that track reports (nil:
// none), for Result.Streams and Verify.
func RenderSized(s *Synth, conns int, f32 bool, track func(stream string) bool) (*SizedFrames, error) {
	if err := s.checkSized(); err != nil {
		return nil, err
	}
	if conns < 1 || conns > math.MaxUint16 {
		return nil, fmt.Errorf("render sized: %d connections", conns)
	}
	batch := s.batch()
	size := 8
	if f32 {
		size = 4
	}
	lanes := make([]uint16, len(s.Streams))
	kept := make([]bool, len(s.Streams))
	conn := make([]struct{ bytes, frames int64 }, conns)
	for i, name := range s.Streams {
		if err := feed.ValidName(name); err != nil {
			return nil, fmt.Errorf("render sized: %w", err)
		}
		if batch > ingest.MaxFrameValues(name, size) {
			return nil, fmt.Errorf("render sized: %d values a batch: %w", batch, ingest.ErrFrameTooLarge)
		}
		c := streamConn(name, conns)
		lanes[i] = uint16(c)
		kept[i] = track != nil && track(name)
		frames, bytes := sizedFrames(name, s.Sizes[i], batch, f32)
		conn[c].frames += frames
		conn[c].bytes += bytes
	}
	f := &SizedFrames{streams: s.Streams, conns: make([]*sizedConn, conns), f32: f32}
	sched := interleave(s.Sizes, batch, blockSeed(s.Spec.Seed, math.MaxUint64))
	sent := make([]uint32, len(s.Streams)) // batches of each stream so far; each by its connection's goroutine alone
	errs := make([]error, conns)
	parallel(conns, func(c int) {
		sc := &sizedConn{
			frames: make([]byte, 0, conn[c].bytes),
			ends:   make([]int, 0, conn[c].frames),
			values: make([]int64, 0, conn[c].frames),
		}
		f.conns[c] = sc
		vals := make([]float64, batch)
		var total int64
		for _, i := range sched {
			if int(lanes[i]) != c {
				continue
			}
			k := sent[i]
			sent[i]++
			n := min(int64(batch), s.Sizes[i]-int64(k)*int64(batch))
			drawBatch(s.Spec, i, k, vals[:n])
			clean := cleanValues(vals[:n], f32, func(reason feed.Reason, n int) {
				sc.skips = append(sc.skips, sizedSkip{frame: len(sc.ends), stream: i, tracked: kept[i], reason: reason, n: n})
			})
			if len(clean) == 0 {
				continue
			}
			var err error
			if sc.frames, err = ingest.AppendFrame(sc.frames, s.Streams[i], clean, f32); err != nil {
				errs[c] = err // checked above: not reached
				return
			}
			total += int64(len(clean))
			if kept[i] {
				sc.kept = append(sc.kept, keptBatch{frame: len(sc.ends), stream: i, values: append([]float64(nil), clean...)})
			}
			sc.ends = append(sc.ends, len(sc.frames))
			sc.values = append(sc.values, total)
		}
	})
	for c, sc := range f.conns {
		if errs[c] != nil {
			return nil, fmt.Errorf("render sized: %w", errs[c])
		}
		f.bytes += len(sc.frames)
		if len(sc.values) > 0 {
			f.values += sc.values[len(sc.values)-1]
		}
	}
	return f, nil
}

// Conns returns the number of connections the frames are rendered for.
func (f *SizedFrames) Conns() int { return len(f.conns) }

// Len returns the number of values of the frames.
func (f *SizedFrames) Len() int64 { return f.values }

// Bytes returns the size of the frames.
func (f *SizedFrames) Bytes() int { return f.bytes }

// Float32 reports whether the frames carry float32 values.
func (f *SizedFrames) Float32() bool { return f.f32 }

// A sizedLane sends the frames of one connection of a SizedFrames once.
type sizedLane struct {
	c    *sizedConn
	next int   // the frame it writes next
	sent int64 // values it has sent
}

func (l *sizedLane) finished() bool { return l.next == len(l.c.ends) }

// chunk returns the next write of l: whole frames from l.next, as many as
// fit in most bytes, but at least one.
func (l *sizedLane) chunk(most int) (b []byte, frames int, values int64) {
	lo, before := l.c.start(l.next)
	k := max(sort.SearchInts(l.c.ends[l.next:], lo+most+1), 1)
	return l.c.frames[lo:l.c.ends[l.next+k-1]], k, l.c.values[l.next+k-1] - before
}

func (l *sizedLane) done(frames int, values int64) {
	l.next += frames
	l.sent += values
}

// start returns where frame k starts in c.frames and the values of the
// frames before it.
func (c *sizedConn) start(k int) (offset int, values int64) {
	if k == 0 {
		return 0, 0
	}
	return c.ends[k-1], c.values[k-1]
}

// plan returns a sender for each connection of f, sending its frames
// once. A connection's share of the rate is its share of the values: the
// connections carry streams of very different sizes, and at equal shares
// the one with the most values would fall behind the run's pace, alone
// at its share once the others are done.
func (f *SizedFrames) plan() ([]*sender, []*sizedLane) {
	senders := make([]*sender, len(f.conns))
	lanes := make([]*sizedLane, len(f.conns))
	for i, c := range f.conns {
		lanes[i] = &sizedLane{c: c}
		senders[i] = &sender{lanes: []frameLane{lanes[i]}}
		if n := len(c.values); n > 0 {
			senders[i].share = float64(c.values[n-1]) / float64(f.values)
		}
	}
	return senders, lanes
}

// results fills in res.Skipped and res.Streams from what lanes sent: the
// values of the tracked streams in the frames sent, and the values left
// out of the batches up to them.
func (f *SizedFrames) results(res *Result, lanes []*sizedLane) {
	stream := func(i uint32) *StreamResult {
		st := res.Streams[f.streams[i]]
		if st == nil {
			// Each stream goes over one connection, in order.
			st = &StreamResult{Skipped: make(map[feed.Reason]int64), Ordered: true}
			res.Streams[f.streams[i]] = st
		}
		return st
	}
	for _, l := range lanes {
		for _, b := range l.c.kept {
			if b.frame >= l.next {
				break
			}
			st := stream(b.stream)
			st.Sent += int64(len(b.values))
			st.Values = append(st.Values, b.values...)
		}
		for _, sk := range l.c.skips {
			// The batches after the last frame sent count once the
			// connection has sent every frame.
			if sk.frame >= l.next && !l.finished() {
				break
			}
			res.Skipped += int64(sk.n)
			if sk.tracked {
				stream(sk.stream).Skipped[sk.reason] += int64(sk.n)
			}
		}
	}
}
