package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"streamd/feed"
	"streamd/hhh"
	"streamd/items"
	"streamd/slidingwindow"
	"streamd/summary"
)

// hierarchy is what a hierarchy stream (summary.Config.Hierarchy) keeps
// besides its own summaries, which count its items in canonical form, the
// hierarchy's level 0: one item stream for each level from 1 to L−2, fed
// with that level's prefix of every item. These level streams are not in
// the pipeline's index: they are created, deleted, checkpointed and
// restored with their stream, and go through the same windows, sorters and
// summaries as any item stream, each with its own memory account. The
// root, level L−1, is every item: its count is the stream's and needs no
// summary.
type hierarchy struct {
	h      hhh.Hierarchy
	root   string    // the root's name
	levels []*Stream // levels 1 to L−2

	// mu orders the accepts into the stream: the prefixes of one accept
	// go into every level before those of the next, so that each level's
	// sliding window holds the same items in the same order, and a query
	// or a snapshot holds it to see every level at one cut.
	mu sync.Mutex

	bufs sync.Pool // of *levelBuf
}

// levelBuf is the scratch space of one accept into a hierarchy stream:
// each level's prefixes and their fingerprints.
type levelBuf struct {
	batches []items.Batch
	fps     []itemBuf
	scratch []string
}

// levelName returns the name of level l of the stream name, "name#l",
// for logs, errors and the states PartitionState names: it is no valid
// stream name, so no stream of the index has it.
func levelName(name string, l int) string { return fmt.Sprintf("%s#%d", name, l) }

// levelConfig returns the configuration of the level streams of a
// hierarchy stream of cfg: item streams like it, without the hierarchy.
func levelConfig(cfg summary.Config) summary.Config {
	cfg.Hierarchy = ""
	return cfg
}

// rootOf returns the name of h's root, the last prefix of any item: that
// of the first of a few items that one hierarchy or another takes.
func rootOf(h hhh.Hierarchy) (string, error) {
	for _, probe := range []string{"0.0.0.0", "::", "/", "a"} {
		if p, err := h.Prefixes(probe); err == nil {
			return p[len(p)-1], nil
		}
	}
	return "", fmt.Errorf("%w: no root for %v", hhh.ErrHierarchy, h)
}

// newHierarchy returns the levels of the hierarchy stream name of cfg,
// each with an empty part for src, with no memory accounts yet.
func (p *Pipeline) newHierarchy(name string, cfg summary.Config, src feed.Source) (*hierarchy, error) {
	hr, err := parseHierarchy(cfg.Hierarchy)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", name, err)
	}
	for l := 1; l < hr.h.Levels()-1; l++ {
		lvl, err := p.newStream(levelName(name, l), levelConfig(cfg), src)
		if err != nil {
			return nil, err
		}
		hr.levels = append(hr.levels, lvl)
	}
	return hr, nil
}

// parseHierarchy returns the hierarchy of the string form s, without its
// levels.
func parseHierarchy(s string) (*hierarchy, error) {
	h, err := hhh.Parse(s)
	if err != nil {
		return nil, err
	}
	root, err := rootOf(h)
	if err != nil {
		return nil, err
	}
	return &hierarchy{h: h, root: root}, nil
}

// withLevels returns s and its level streams: s alone unless s is a
// hierarchy stream.
func (s *Stream) withLevels() []*Stream {
	return append([]*Stream{s}, s.levelStreams()...)
}

// splitLevelName returns the name of a stream and the level that a
// PartState names: "stream#level" for the part of a hierarchy stream's
// level (levelName), level 0 for any other valid stream name.
func splitLevelName(state string) (name string, level int, err error) {
	name, l, ok := strings.Cut(state, "#")
	if err := feed.ValidName(name); err != nil {
		return "", 0, err
	}
	if !ok {
		return name, 0, nil
	}
	level, err = strconv.Atoi(l)
	if err != nil || level < 1 || level >= hhh.MaxLevels || strconv.Itoa(level) != l {
		return "", 0, fmt.Errorf("bad level %q of stream %q", l, name)
	}
	return name, level, nil
}

// dropLevelParts drops the parts of partition tp of s's levels (see
// dropLocked).
func (s *Stream) dropLevelParts(tp feed.Source) {
	for _, lvl := range s.levelStreams() {
		lvl.mu.Lock()
		if pt := lvl.removeKafkaPart(tp); pt != nil {
			lvl.dropLocked(pt)
		}
		lvl.mu.Unlock()
	}
}

// checkLevelParts checks that levels, the parts of levels 1 to L−2 that
// come with d, a part of s, are what s keeps: one item part for each
// level of a hierarchy stream, each counting what d counts — a level may
// be left out when d counts nothing, as PartitionState leaves out a part
// a level never had — and none for any other stream. It fails with an
// error wrapping ErrWrongKind.
func (s *Stream) checkLevelParts(d *decodedPart, levels map[int]*decodedPart) error {
	n := d.sum.Count()
	for l, x := range levels {
		if l > len(s.levelStreams()) {
			return fmt.Errorf("%w: stream %q has no level %d", ErrWrongKind, s.name, l)
		}
		if !x.sum.Config().Items || x.sum.Count() != n {
			return fmt.Errorf("%w: stream %q: level %d's part counts %d items, level 0's %d", ErrWrongKind, s.name, l, x.sum.Count(), n)
		}
	}
	if len(levels) < len(s.levelStreams()) && n > 0 {
		return fmt.Errorf("%w: stream %q: a part with %d of its %d levels", ErrWrongKind, s.name, len(levels), len(s.levelStreams()))
	}
	return nil
}

// levelStreams returns s's level streams, levels 1 to L−2; none for a
// stream that is not a hierarchy stream.
func (s *Stream) levelStreams() []*Stream {
	if s.hier == nil {
		return nil
	}
	return s.hier.levels
}

// openLevels opens the memory accounts of s's level streams, each charged
// as an item stream of its configuration (StreamFootprint), or none if the
// budget cannot hold them all.
func (p *Pipeline) openLevels(s *Stream) error {
	levels := s.levelStreams()
	for i, lvl := range levels {
		if err := p.mem.OpenAt(&lvl.account, p.footprint(lvl.cfg)); err != nil {
			for _, l := range levels[:i] {
				l.account.Close()
			}
			return fmt.Errorf("stream %q, level %d: %w", s.name, i+1, err)
		}
	}
	return nil
}

// Hierarchy returns the hierarchy of a hierarchy stream, and false for
// any other stream.
func (s *Stream) Hierarchy() (hhh.Hierarchy, bool) {
	if s.hier == nil {
		return hhh.Hierarchy{}, false
	}
	return s.hier.h, true
}

// split puts the prefixes of b's items at each level 0 to L−2 of h into
// buf.batches[l], which it resets first, and returns the number of items
// that are not in h: those it leaves out.
func (buf *levelBuf) split(h hhh.Hierarchy, b *items.Batch) (notIn int) {
	for l := range buf.batches {
		buf.batches[l].Reset()
	}
	// One string of all the items, whose substrings the prefixes of a
	// canonical path, DNS name or delimited item are: no allocation per
	// item (AppendPrefixes).
	var all strings.Builder
	all.Grow(b.Size())
	for i := range b.Len() {
		all.Write(b.Item(i))
	}
	rest := all.String()
	for i := range b.Len() {
		item := rest[:len(b.Item(i))]
		rest = rest[len(item):]
		var err error
		buf.scratch, err = h.AppendPrefixes(buf.scratch[:0], item)
		if err != nil {
			notIn++
			continue
		}
		for l := range buf.batches {
			buf.batches[l].AppendString(buf.scratch[l])
		}
	}
	return notIn
}

// acceptHierarchy adds the items of b, from src and arrived at at, to the
// hierarchy stream s: each level l its items' prefixes of level l, the
// stream itself (level 0) the items in canonical form. Items not in the
// hierarchy are left out and counted as rejects of the stream
// (feed.ReasonNotInHierarchy) once the others are kept. The strings each
// level keeps are charged to the memory budget first (chargeItems), as for
// any item stream; then the prefixes go into every level under the
// hierarchy's lock, and the full windows go to the sorter. It returns the
// number of items kept; with an error it has kept none, counted none and
// charged none.
func (p *Pipeline) acceptHierarchy(ctx context.Context, s *Stream, src feed.Source, b *items.Batch, at time.Time) (int, error) {
	hr := s.hier
	if at.IsZero() {
		at = p.cfg.Now()
	}
	streams := append([]*Stream{s}, hr.levels...)
	buf, _ := hr.bufs.Get().(*levelBuf)
	if buf == nil {
		buf = &levelBuf{batches: make([]items.Batch, len(streams)), fps: make([]itemBuf, len(streams))}
	}
	defer hr.bufs.Put(buf)
	notIn := buf.split(hr.h, b)
	kept := buf.batches[0].Len()
	if kept == 0 {
		if notIn > 0 {
			s.reject(src, feed.ReasonNotInHierarchy, notIn)
		}
		return 0, nil
	}
	for l, st := range streams {
		if err := p.chargeItems(ctx, st, src, &buf.batches[l], streams[:l]...); err != nil {
			// The levels charged before keep none of the items: measure
			// them again, which drops their charges.
			for _, c := range streams[:l] {
				c.mu.Lock()
				c.account.Summaries(c.summaryBytes())
				c.mu.Unlock()
			}
			return 0, fmt.Errorf("items for stream %q: %w", s.name, err)
		}
		buf.fps[l].fingerprint(&buf.batches[l], st.items.hash)
	}
	full := make([][]fullWindow, len(streams))
	hr.mu.Lock()
	open, err := p.lockOpen()
	if err != nil {
		hr.mu.Unlock()
		return 0, err
	}
	for l, st := range streams {
		f := &buf.fps[l]
		st.mu.Lock()
		full[l] = st.pendingQ
		st.pendingQ = nil
		pt := st.partLocked(src)
		st.items.recent.Append(f.fps, &buf.batches[l])
		pt.items.names.Append(f.fps, &buf.batches[l])
		full[l] = st.appendLocked(pt, f.values, nil, feed.Moments{Count: int64(len(f.values))}, at.UnixNano(), full[l])
		st.mu.Unlock()
	}
	hr.mu.Unlock()
	if notIn > 0 {
		s.reject(src, feed.ReasonNotInHierarchy, notIn)
	}
	return kept, p.sendLevels(ctx, streams, full, open)
}

// sendLevels is send for the full windows of a hierarchy stream's levels:
// full[l] of streams[l]. It unlocks open, which the caller read-locked
// with lockOpen, once, and then waits as send does for each level.
func (p *Pipeline) sendLevels(ctx context.Context, streams []*Stream, full [][]fullWindow, open *openStripe) error {
	defer func() {
		for _, st := range streams {
			st.account.Wait(ctx)
		}
	}()
	defer open.RUnlock()
	for l, ws := range full {
		for i, w := range ws {
			select {
			case p.full <- w:
			case <-ctx.Done():
				// As in send: the items are accepted, and the windows
				// left go out with the next accept.
				streams[l].requeue(ws[i:])
				for k := l + 1; k < len(full); k++ {
					streams[k].requeue(full[k])
				}
				return nil
			}
		}
	}
	return nil
}

// HHHQuery asks a hierarchy stream for its hierarchical heavy hitters
// (package hhh) over all history, its last n items or a time window.
type HHHQuery struct {
	// Support is s, in (ε, 1].
	Support float64
	// Discounted asks for the discounted heavy hitters (hhh.Discounted);
	// otherwise every heavy prefix of every level (hhh.Heavy).
	Discounted bool
	// LastN, if positive, asks over the last n items.
	LastN int64
	// Since, if not zero, asks over the items that arrived at or after it
	// (see Stream.Since); LastN must be 0 then.
	Since time.Time
}

// HHHAnswer is a hierarchy stream's answer to an HHHQuery.
type HHHAnswer struct {
	// Count is N, the number of items the answer covers.
	Count int64
	// Epsilon is the count error of each level's bounds, against N: Hi −
	// Lo ≤ εN for every prefix, and every prefix not listed as a
	// candidate counts at most εN.
	Epsilon float64
	// Precision bounds the answer's false positives: no prefix reported
	// counts (for a discounted answer, has a discounted count) below
	// (Support − Precision)·N. It is ε for heavy prefixes and (1+k)·ε
	// for a discounted answer, k the largest Discounts of its hitters
	// (package hhh: at most ⌊1/(s−ε)⌋).
	Precision float64
	// Hitters are the hierarchical heavy hitters, sorted by level, then
	// from the largest count, then by name (see hhh.Heavy and
	// hhh.Discounted).
	Hitters []hhh.Hitter
	// Span says what a time-window answer covers (slidingwindow.Span);
	// zero otherwise.
	Span slidingwindow.Span
}

// ErrUnnamedPrefix is returned by HierarchicalHeavyHitters when a prefix
// whose count may reach the support has no string the stream keeps: a
// last-n or time-window answer whose older items live in blocks, which
// keep fingerprints only (see Stream.ItemNames). Asking over fewer items
// or all history answers.
var ErrUnnamedPrefix = errors.New("a heavy prefix's string is not kept")

// HierarchicalHeavyHitters answers q from every level of the hierarchy
// stream s, taken at one cut: each level counts the same items. It fails
// with ErrWrongKind for a stream that is not a hierarchy stream, with an
// error wrapping hhh.ErrBounds for a support outside (ε, 1], with the
// error of Last for a LastN above the sliding window, and with
// ErrUnnamedPrefix (see there). It costs a view of each level, as a
// HeavyHitters query does.
func (s *Stream) HierarchicalHeavyHitters(q HHHQuery) (HHHAnswer, error) {
	hr := s.hier
	if hr == nil {
		return HHHAnswer{}, fmt.Errorf("%w: stream %q has no hierarchy", ErrWrongKind, s.name)
	}
	if eps := s.cfg.Epsilon; !(q.Support > eps && q.Support <= 1) {
		return HHHAnswer{}, fmt.Errorf("%w: support %v outside (ε=%v, 1]", hhh.ErrBounds, q.Support, eps)
	}
	streams := append([]*Stream{s}, hr.levels...)
	answers := make([]summary.Answers, len(streams))
	var span slidingwindow.Span
	hr.mu.Lock()
	for l, st := range streams {
		switch {
		case !q.Since.IsZero():
			snap, sp := st.Since(q.Since)
			answers[l] = snap
			if l == 0 {
				span = sp
			}
		case q.LastN > 0:
			snap, err := st.Last(q.LastN)
			if err != nil {
				hr.mu.Unlock()
				return HHHAnswer{}, err
			}
			answers[l] = snap
		default:
			answers[l] = st.View(true)
		}
	}
	hr.mu.Unlock()

	n := answers[0].Count()
	a := HHHAnswer{Count: n, Epsilon: s.cfg.Epsilon, Span: span}
	levels := make([]hhh.Level, hr.h.Levels())
	for l, ans := range answers {
		if c := ans.Count(); c != n {
			return HHHAnswer{}, fmt.Errorf("stream %q: level %d counts %d items, level 0 %d", s.name, l, c, n)
		}
		a.Epsilon = max(a.Epsilon, ans.Epsilon())
		maxErr := ans.MaxCountError()
		if n > 0 {
			a.Epsilon = max(a.Epsilon, float64(maxErr)/float64(n))
		}
		lv := hhh.Level{Absent: maxErr}
		// The empty first (or last) field of a delimited item is a prefix
		// named "", which is no unnamed prefix.
		empty := items.FromValue(streams[l].ItemValue(""))
		for _, c := range streams[l].HeavyItems(ans, q.Support) {
			if c.Item == "" && c.Fingerprint != empty {
				return HHHAnswer{}, fmt.Errorf("stream %q, level %d: %w", s.name, l, ErrUnnamedPrefix)
			}
			lv.Candidates = append(lv.Candidates, hhh.Candidate{Prefix: c.Item, Count: hhh.Bounds{Lo: c.Min, Hi: c.Max}})
		}
		levels[l] = lv
	}
	levels[len(levels)-1] = hhh.Level{Candidates: []hhh.Candidate{{Prefix: hr.root, Count: hhh.Bounds{Lo: n, Hi: n}}}}
	if !(q.Support > a.Epsilon) {
		return HHHAnswer{}, fmt.Errorf("%w: support %v not above the answer's ε %v", hhh.ErrBounds, q.Support, a.Epsilon)
	}
	var err error
	if q.Discounted {
		a.Hitters, err = hhh.Discounted(hr.h, levels, n, q.Support, a.Epsilon)
	} else {
		a.Hitters, err = hhh.Heavy(hr.h, levels, n, q.Support, a.Epsilon)
	}
	if err != nil {
		return HHHAnswer{}, fmt.Errorf("stream %q: %w", s.name, err)
	}
	k := 0
	for _, h := range a.Hitters {
		k = max(k, h.Discounts)
	}
	a.Precision = float64(1+k) * a.Epsilon
	return a, nil
}
