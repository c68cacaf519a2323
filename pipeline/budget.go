package pipeline

import (
	"math"

	"streamd/gksketch"
	"streamd/internal/membudget"
	"streamd/items"
	"streamd/lossy"
	"streamd/summary"
)

// streamOverhead is what a stream holds besides its windows and summaries:
// its structures, name and reject counts.
const streamOverhead = 4 << 10

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

// StreamFootprint returns what a stream of cfg is charged against the
// pipeline's memory budget (see streamd/internal/membudget). With W the
// window size, N the sliding window, v = 4 bytes per value (8 for Float64)
// and w = W·v the bytes of one window:
//
//	digest     d = 24·min(W, ⌈2/ε⌉+2) + 16·min(W, ⌈1/ε⌉+1)
//	             (a window's ε/2 sample and the runs lossy counting keeps)
//	in flight  f = 4w + d
//	             (the window, which queries read until it is summarised,
//	             with room for the growth of a stream's first buffer: 2w;
//	             the copy the sorter sorts: w; the sort's scratch keys: w;
//	             its digest: d)
//	summaries  s = 24·(2·G + L) + R
//	             (G = gksketch.SpaceBound(ε, W, N) GK tuples, twice for the
//	             merged copy queries share; L = lossy.SpaceBound(ε, N) lossy
//	             entries; R = slidingwindow.Footprint(ε, N), 8N bytes when
//	             the sliding window keeps its last N values raw)
//
// Reserve is 2w (the partial window, with room to grow) + f + s + 4 KiB;
// Window is f, charged for each further window in flight; Summaries is s.
// So the summaries are reserved at their size after N values; past that
// they grow with log(N) and the growth is charged as measured. The strings
// of an item stream (up to items.MaxLen bytes for each of its newest items,
// up to recentNamesLimit bytes in all, for each item of its windows not yet
// summarised, and for each entry of its lossy table) are not reserved,
// since their size depends on the items: they are charged before they are
// kept (see chargeItems), and measured.
//
// A stream fed by Kafka keeps one part per partition (see Stream): each
// part's summaries and partial window are charged as measured, beside the
// reservation, and each of its windows in flight is a window of the
// stream.
//
// A hierarchy stream (summary.Config.Hierarchy) of L levels is charged
// this for itself, which counts its items, and again for each of its L−2
// level streams (the root needs no summary), each with an account of its
// own: L−1 times an item stream's reservation in all.
//
// A pair stream is charged as pairFootprint says instead.
func StreamFootprint(cfg summary.Config) membudget.Footprint {
	cfg = cfg.WithDefaults()
	if cfg.Pairs {
		reserve, sums := pairFootprint(cfg)
		return membudget.Footprint{Reserve: reserve, Summaries: sums}
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
	if recent, err := summary.NewSlidingWindow(cfg); err == nil {
		sums += recent.Footprint()
	}
	return membudget.Footprint{
		Reserve:   2*w + inflight + sums + streamOverhead,
		Window:    inflight,
		Summaries: sums,
	}
}

// summaryBytes returns what s's summaries hold: each part's, with the
// merged copy of its quantile sketch that queries share, the sliding
// window, for an item stream the strings it keeps, for a pair stream its
// pairs, and the partial windows
// of the Kafka partitions' parts (the reservation holds one partial
// window: the local part's). s.mu must be held.
func (s *Stream) summaryBytes() int64 {
	b := s.recent.Bytes()
	if s.items != nil {
		b += s.items.recent.Bytes()
	}
	if s.pairs != nil {
		b += int(s.pairs.bytes())
	}
	b += s.local.summaryBytes()
	for _, pt := range s.kafka {
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
	b := 2*pt.sum.Sketch().Bytes() + pt.sum.Counts().Bytes()
	if pt.items != nil {
		b += pt.items.names.Bytes()
	}
	return b
}

// Memory returns the pipeline's memory budget figures.
func (p *Pipeline) Memory() membudget.Stats { return p.mem.Stats() }
