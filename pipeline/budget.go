package pipeline

import (
	"context"
	"fmt"
	"math"

	"streamd/gksketch"
	"streamd/internal/membudget"
	"streamd/items"
	"streamd/lossy"
	"streamd/summary"
)

// streamOverhead is what a value stream holds besides its buffers,
// windows and summaries: its structures, its configuration (shared with
// the pipeline's defaults), its name and its entries in the pipeline's
// map, cache (streamCache: 32 to 64 bytes) and index. TestStreamBytes
// measures it, with a stream's first value, below this: about 850 bytes
// at the defaults.
const streamOverhead = 1 << 10

// itemStreamOverhead is streamOverhead for an item stream, which holds the
// structures of its item halves too: TestStreamBytes measures about 1.5
// KiB.
const itemStreamOverhead = 2 << 10

// pairStreamOverhead is streamOverhead for a pair stream, which holds the
// structures of its pair half and its empty summary too.
const pairStreamOverhead = 2 << 10

// partOverhead is what the part of a Kafka partition holds besides its
// buffers and summaries: its structures, its partial window's and its
// history's. TestStreamBytes measures it, below this: about 250 bytes. A
// stream's first part, the local part or the only partition's of a stream
// fed only by Kafka, is in its fixed part.
const partOverhead = 320

// firstValues is how many values a stream's reservation holds besides its
// fixed part, in its first buffers (those of its partial window and of its
// sliding window's ring, 2·64·v bytes, or the ring's alone, 64·v, for a
// stream whose sliding window holds its partial window: see Mirrored
// partial windows): a stream of up to 64 values, as most are, is charged
// its reservation alone.
const firstValues = 64

// maxRecentNames is the most bytes an item stream keeps of the strings of
// its newest items, for its last-n and time-window answers.
const maxRecentNames = 16 << 20

// recentNamesLimit returns the most bytes an item stream of window size
// window whose sliding window keeps its last retain values raw keeps of
// the strings of its newest items (items.Names.SetLimit): those of the
// newest retain items, and a window's more while its chunks turn over, at
// MaxLen bytes each and 16 for their fingerprint and place, up to
// maxRecentNames.
func recentNamesLimit(window int, retain int64) int64 {
	return min((retain+int64(window))*(items.MaxLen+16), maxRecentNames)
}

// footprint is StreamFootprint(*cfg), worked out once for the streams that
// share the pipeline's defaults (sharedConfig): measuring builds a sliding
// window, which would cost every new stream as much again.
func (p *Pipeline) footprint(cfg *summary.Config) membudget.Footprint {
	if cfg == &p.cfg.Defaults {
		return p.defaultFootprint
	}
	return StreamFootprint(*cfg)
}

// StreamFootprint returns what a stream of cfg is charged against the
// pipeline's memory budget (see streamd/internal/membudget): a stream
// costs what it holds. With W the window size, N the sliding window, v = 4
// bytes per value (8 for Float64) and w = W·v the bytes of one window:
//
//	digest     d = 24·min(W, ⌈2/ε⌉+2) + 16·min(W, ⌈1/ε⌉+1)
//	             (a window's ε/2 sample and the runs lossy counting keeps)
//	in flight  f = 4w + d
//	             (the window, which queries read until it is summarised;
//	             the copy the sorter sorts: w; the sort's scratch keys: w;
//	             its digest: d; and w to spare)
//	summaries  s = 24·(2·G + L) + R
//	             (G = gksketch.SpaceBound(ε, W, N) GK tuples, twice for the
//	             merged copy queries share; L = lossy.SpaceBound(ε, N) lossy
//	             entries; R = slidingwindow.Footprint(ε, N), vN bytes when
//	             the sliding window keeps its last N values raw)
//
// Reserve is the stream's fixed part, measured: 1 KiB (streamOverhead; 2
// KiB for an item stream, itemStreamOverhead), and Summaries, the buffers
// of its first 64 values, 2·64·v bytes, or 64·v for a stream whose
// sliding window holds its partial window (firstValues). Window is f, charged
// for each window in flight. Everything else is charged as it grows:
// before a batch of values is kept, the growth it needs (the first buffers
// of the partial window and of the sliding window's ring, as large as the
// batch, then the next, doubled ones, up to w and R, and f for each window
// the batch fills) is charged (see chargeValues), and may be refused, the
// batch whole, when the budget cannot hold it and the stream has no window
// in flight; then what the stream holds (Stream.summaryBytes; its
// summaries are made with its first window) is measured after each batch
// and window. Worst is 2w + f + s + the fixed part, what the stream holds
// at its bounds with one window in flight: a stream whose Worst is more
// than the whole budget is refused, since it could never fill its
// windows. Past N
// values the summaries grow with log(N) and the growth is charged as
// measured, never refused. The strings of an item stream (up to
// items.MaxLen bytes for each of its newest items, up to recentNamesLimit
// bytes in all, for each item of its windows not yet summarised, and for
// each entry of its lossy table) are charged before they are kept (see
// chargeItems), and measured.
//
// A stream fed by Kafka keeps one part per partition (see Stream): each
// part's summaries and partial window are measured as the local part's
// are, with its structures (partOverhead, about 250 bytes), and each of
// its windows in flight is a window of the stream.
//
// A hierarchy stream (summary.Config.Hierarchy) of L levels is charged
// this for itself, which counts its items, and again for each of its L−2
// level streams (the root needs no summary), each with an account of its
// own.
//
// A pair stream is charged as pairFootprint says instead.
func StreamFootprint(cfg summary.Config) membudget.Footprint {
	cfg = cfg.WithDefaults()
	if cfg.Pairs {
		return pairFootprint(cfg)
	}
	eps, n := cfg.Epsilon, cfg.SlidingWindow
	size := int64(cfg.WindowSize)
	v := int64(4)
	if cfg.Float64 {
		v = 8
	}
	w := size * v
	digest := 24*min(size, int64(math.Ceil(2/eps))+2) + 16*min(size, int64(math.Ceil(1/eps))+1)
	inflight := 4*w + digest
	sums := 24 * (2*gksketch.SpaceBound(eps, size, n) + int64(lossy.SpaceBound(eps, n)))
	first := 2 * firstValues * v
	if recent, err := summary.NewSlidingWindow(cfg); err == nil {
		sums += recent.Footprint()
		if mirrors(&cfg, recent) {
			first = firstValues * v
		}
	}
	fixed := int64(streamOverhead)
	if cfg.Items {
		fixed = itemStreamOverhead
	}
	return membudget.Footprint{
		Reserve:   fixed + first,
		Window:    inflight,
		Summaries: first,
		Worst:     2*w + inflight + sums + fixed,
	}
}

// summaryBytes returns what s's buffers and summaries hold: each part's
// summaries, with the merged copy of its quantile sketch that queries
// share, and its partial window, and for a Kafka partition's part its
// structures (partOverhead); the sliding window; for an item stream the
// strings it keeps; for a pair stream its pairs. s.mu must be held.
func (s *Stream) summaryBytes() int64 {
	b := s.recent.Bytes()
	if s.items != nil {
		b += s.items.recent.Bytes()
	}
	if s.pairs != nil {
		b += int(s.pairs.bytes())
	}
	// The stream's first part is in its fixed part: the local part, or a
	// Kafka partition's for a stream without one.
	if s.local != nil {
		b += s.local.summaryBytes() + s.local.filler.Bytes()
	}
	for i, pt := range s.kafka {
		if i > 0 || s.local != nil {
			b += partOverhead
		}
		b += pt.summaryBytes() + pt.filler.Bytes()
	}
	return int64(b)
}

// summaryBytes returns what pt's summaries hold, with the merged copy of
// its quantile sketch and, for an item stream, its strings. The stream's
// lock must be held.
func (pt *part) summaryBytes() int {
	// A part's summary keeps no sliding window: its bytes are the quantile
	// sketch's, twice, and the lossy summary's, read without the walk
	// over the sketch's entries that Stats makes.
	sketch, counts := pt.sum.Bytes()
	b := 2*sketch + counts
	if pt.items != nil {
		b += pt.items.names.Bytes()
	}
	return b
}

// Memory returns the pipeline's memory budget figures.
func (p *Pipeline) Memory() membudget.Stats { return p.mem.Stats() }

// growth is what a batch of values needs charged before its stream keeps
// it (Stream.growthLocked), taken under the stream's lock.
type growth struct {
	bytes   int64 // the next buffers of its partial window and sliding window
	windows int   // the windows it fills
	pending bool  // the stream has windows left unsent by a cancelled Accept
}

// chargeValues charges the memory budget for the growth g that values
// need before s keeps them. While the budget cannot hold it and the stream
// has windows in flight it waits, as Accept does; when nothing in flight
// would free memory it fails with an error wrapping ErrMemoryBudget, and
// the values are refused, all of them. Windows left unsent by a cancelled
// Accept are sent first, since the wait may need them summarised.
func (p *Pipeline) chargeValues(ctx context.Context, s *Stream, g growth) error {
	if g.bytes <= 0 && g.windows == 0 {
		return nil
	}
	if g.pending {
		if err := p.sendPending(ctx, s); err != nil {
			return err
		}
	}
	if err := s.account.Grow(ctx, g.bytes, g.windows); err != nil {
		return fmt.Errorf("values for stream %q: %w", s.name, err)
	}
	return nil
}
