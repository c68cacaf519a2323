// Package summary is a stream's all-history summary: History takes each
// sorted window's digest — the ε/2 quantile sample and the histogram runs
// lossy counting needs (DigestSorted) — into the two all-history
// ε-approximate summaries, and View answers queries over them:
//
//   - quantiles and ranks: gksketch.Sketch, an exponential histogram of
//     Greenwald–Khanna summaries (SIGMOD 2005 §5.2);
//   - frequencies and heavy hitters: lossy.Summary, Manku and Motwani's
//     lossy counting (§5.1).
//
// The quantiles and frequencies of the last n values come from a
// slidingwindow.Window fed in arrival order (§5.3), which the caller keeps
// beside the history: NewSlidingWindow makes the one a stream's
// configuration asks for. A View and a slidingwindow.Snapshot both answer
// as Answers.
//
// It is a library: no goroutines, no I/O, not safe for concurrent use.
// Values that were accepted but are not yet in a summarised window (the
// partial window, windows being sorted) are passed to View, which counts
// them exactly, so that a query sees every value accepted before it.
//
// Version 1 encodings, in which a History kept its stream's sliding window
// too, are read by DecodeV1 (v1.go), which hands the window back apart.
package summary

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"streamd/feed"
	"streamd/gksketch"
	"streamd/hhh"
	"streamd/items"
	"streamd/lossy"
	"streamd/slidingwindow"
)

// Defaults of a stream's configuration.
const (
	DefaultEpsilon       = 0.001
	DefaultWindowSize    = 1 << 16
	DefaultSlidingWindow = 1 << 20
)

// Limits of a stream's configuration.
const (
	MinEpsilon       = 1e-6
	MaxWindowSize    = 1 << 24
	MaxSlidingWindow = 1 << 32
)

// Config is a stream's configuration.
type Config struct {
	// Epsilon is the rank and count error, relative to the number of values
	// a query is about. Default 0.001.
	Epsilon float64
	// WindowSize is W, the number of values sorted together. Default 65536.
	WindowSize int
	// SlidingWindow is N, the largest n a last-n query may ask for.
	// Default 2^20.
	SlidingWindow int64
	// Float64 keeps values as float64; by default they are rounded to
	// float32, as in the paper's textures.
	Float64 bool
	// Items makes the stream an item stream: its values are the
	// fingerprints of strings, carried as float64 (package items). They are
	// counted (frequencies, heavy hitters) but not ranked, and have no sum,
	// min or max. An item stream keeps float64 precision.
	Items bool
	// Pairs makes the stream a pair stream: it takes pairs (x, y) of
	// float64 instead of values, and answers correlated sums over all of
	// its history (package corrsum), not quantiles or frequencies. A pair
	// stream keeps float64 precision. Items and Pairs are exclusive.
	Pairs bool
	// ItemHash, for an item stream, replaces the daemon's keyed SipHash as
	// the hash of its items. It is a hook for tests (forcing collisions)
	// and is not saved: a restored stream uses the daemon's hash.
	ItemHash items.Hash
	// Hierarchy, when set, makes the stream a hierarchy stream: an item
	// stream whose items are in the prefix hierarchy of this string form
	// (hhh.Parse: "ipv4", "ipv6/4", "path", "dns", "delim:,"...), kept
	// as hhh.Hierarchy.String writes it. Such a stream counts each
	// level's prefixes of its items with the stream's ε and answers
	// hierarchical heavy hitters (package hhh). It implies Items.
	Hierarchy string
}

// ConfigError reports an invalid field of a Config.
type ConfigError struct {
	Field string
	Value any
	Err   error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("summary: %s %v: %v", e.Field, e.Value, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ErrOutOfRange is wrapped by ConfigErrors for values outside their limits.
var ErrOutOfRange = errors.New("out of range")

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if c.WindowSize == 0 {
		c.WindowSize = DefaultWindowSize
	}
	if c.SlidingWindow == 0 {
		c.SlidingWindow = DefaultSlidingWindow
	}
	if c.Hierarchy != "" {
		c.Items = true
		if h, err := hhh.Parse(c.Hierarchy); err == nil {
			c.Hierarchy = h.String()
		}
	}
	if c.Items || c.Pairs {
		c.Float64 = true
	}
	return c
}

// Validate checks every field against its limits.
func (c Config) Validate() error {
	if !(c.Epsilon >= MinEpsilon && c.Epsilon < 1) {
		return &ConfigError{"epsilon", c.Epsilon, fmt.Errorf("%w: want [%v, 1)", ErrOutOfRange, MinEpsilon)}
	}
	if c.WindowSize < 1 || c.WindowSize > MaxWindowSize {
		return &ConfigError{"window_size", c.WindowSize, fmt.Errorf("%w: want [1, %d]", ErrOutOfRange, MaxWindowSize)}
	}
	if c.SlidingWindow < 1 || c.SlidingWindow > MaxSlidingWindow {
		return &ConfigError{"sliding_window", c.SlidingWindow, fmt.Errorf("%w: want [1, %d]", ErrOutOfRange, int64(MaxSlidingWindow))}
	}
	if c.Hierarchy != "" {
		if _, err := hhh.Parse(c.Hierarchy); err != nil {
			return &ConfigError{"hierarchy", c.Hierarchy, err}
		}
		if !c.Items {
			return &ConfigError{"hierarchy", c.Hierarchy, errors.New("a hierarchy stream is an item stream")}
		}
	}
	if c.Items && c.Pairs {
		return &ConfigError{"kind", "items and pairs", errors.New("a stream takes items or pairs, not both")}
	}
	return nil
}

// History holds the all-history summaries of a stream's values, or of one
// source's share of them, and their count, sum, min and max.
type History struct {
	cfg *Config // never changed; shared by the histories that Init makes
	// The all-history summaries: both nil until the first window, so that
	// a stream of a few values, all still pending, holds none.
	history *gksketch.Sketch
	counts  *lossy.Summary

	// Statistics of every value ingested (AddMoments), summarised or not.
	count         int64
	sum, min, max float64
}

// NewHistory returns an empty history with cfg (zero fields take
// defaults): it counts the values it observes and summarises all of their
// history. The pipeline keeps one for each source of a stream's values
// (each Kafka partition, and the local inputs), and one sliding window
// (NewSlidingWindow) for the stream. Its summaries are made with its first
// window.
func NewHistory(cfg Config) (*History, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := new(historyOf)
	h.cfg = cfg
	h.History.cfg = &h.cfg
	return &h.History, nil
}

// historyOf is a History with its own configuration, allocated together.
type historyOf struct {
	History
	cfg Config
}

// Init makes s, a zero History, an empty history of a configuration that
// several histories share, such as the parts of the streams of one
// configuration: it keeps cfg, which must have its defaults set
// (WithDefaults) and must not change, instead of a copy of its own, 64
// bytes. A History that Init makes may lie inside a larger structure, such
// as its stream's, where NewHistory allocates one of its own. s must not be
// copied after.
func (s *History) Init(cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	*s = History{cfg: cfg}
	return nil
}

// Release empties s, for a history that no answer reads again, such as
// that of a part its stream dropped: its summaries and statistics go to
// the collector, though s itself stays reachable. It keeps its
// configuration, so that Spec still answers for its windows in flight.
func (s *History) Release() { *s = History{cfg: s.cfg} }

// ShareConfig makes s keep cfg, a configuration that several histories
// share (see Init), in place of its own, as a history decoded has,
// if cfg configures the same summaries; it reports whether it did. cfg
// must have its defaults set and must not change.
func (s *History) ShareConfig(cfg *Config) bool {
	if !s.cfg.SameSummaries(*cfg) {
		return false
	}
	s.cfg = cfg
	return true
}

// SameSummaries reports whether histories of c and of o make the same
// summaries: of one ε, window and sliding window, over values of one
// width, of one kind (values, items or pairs).
func (c Config) SameSummaries(o Config) bool {
	return c.Epsilon == o.Epsilon && c.WindowSize == o.WindowSize && c.SlidingWindow == o.SlidingWindow &&
		c.Float64 == o.Float64 && c.Items == o.Items && c.Pairs == o.Pairs
}

// summaries makes s's summaries if it has none yet.
func (s *History) summaries() {
	if s.history == nil {
		s.history = s.Sketch()
		s.counts = s.Counts()
	}
}

// NewSlidingWindow returns the empty sliding window of a stream of cfg:
// one that keeps float32 values, in half the memory, unless the stream
// keeps float64 (or items, whose fingerprints are float64 keys).
func NewSlidingWindow(cfg Config) (*slidingwindow.Window, error) {
	cfg = cfg.WithDefaults()
	if cfg.Float64 {
		return slidingwindow.New(cfg.Epsilon, cfg.SlidingWindow)
	}
	return slidingwindow.NewFloat32(cfg.Epsilon, cfg.SlidingWindow)
}

// Config returns the stream's configuration.
func (s *History) Config() Config { return *s.cfg }

// RemapCounts replaces every value the frequency summary counts by f(value)
// (lossy.Summary.Remap): for an item stream whose fingerprints move to
// another key. The quantile summary keeps its values: an item stream is
// not ranked.
func (s *History) RemapCounts(f func(float64) float64) {
	if s.counts != nil {
		s.counts.Remap(f)
	}
}

// Count reports the number of values observed.
func (s *History) Count() int64 { return s.count }

// AddMoments records values as they are accepted, given their moments,
// m = feed.Measure(values), measured beforehand — for example before taking
// the lock that guards s, to keep the time under it short: they go into
// the count, sum, min and max. An item stream counts them alone: its values
// carry fingerprints, which have no sum, min or max. The same values must
// later reach AddWindow, in windows, for the all-history summaries.
func (s *History) AddMoments(m feed.Moments) {
	if s.cfg.Items {
		s.count += m.Count
		return
	}
	s.observe(m)
}

// observe adds m to the stream's count, sum, min and max.
func (s *History) observe(m feed.Moments) {
	if m.Count == 0 {
		return
	}
	if s.count == 0 || m.Min < s.min {
		s.min = m.Min
	}
	if s.count == 0 || m.Max > s.max {
		s.max = m.Max
	}
	s.sum += m.Sum
	s.count += m.Count
}

// Spec returns what the summaries need from a window of w values: its
// Threshold is ⌊εw⌋, never above what the lossy table will prune at when
// the window arrives, however many windows come first, so a spec may be
// taken before earlier windows of the stream are added (AddDigest). Its
// Known slice is appended to known, which the caller may reuse.
func (s *History) Spec(w int, known []float64) WindowSpec {
	return WindowSpec{
		Spacing:   SampleSpacing(s.cfg.Epsilon, w),
		Threshold: int64(math.Floor(s.cfg.Epsilon * float64(w))),
		Known:     s.appendKnown(known[:0]),
	}
}

// appendKnown appends the values of the lossy table to dst.
func (s *History) appendKnown(dst []float64) []float64 {
	if s.counts == nil {
		return dst
	}
	return s.counts.AppendValues(dst)
}

// AddWindow adds a sorted window's digest made with a spec taken from Spec
// since the last change to the stream: every value of the lossy table was
// known to it. It copies what it keeps: the caller may reuse d.
func (s *History) AddWindow(d *Digest) error {
	return s.addDigest(d, nil, true)
}

// AddDigest adds a window's digest made with spec, a Spec of this stream
// taken at any earlier time: entries the lossy table gained since then are
// accounted for (lossy.Summary.AddWindowKnown).
func (s *History) AddDigest(d *Digest, spec WindowSpec) error {
	return s.addDigest(d, spec.Known, false)
}

func (s *History) addDigest(d *Digest, known []float64, allKnown bool) error {
	if d.N == 0 {
		return nil
	}
	s.summaries()
	if err := s.history.AddSample(d.N, d.Sample); err != nil {
		return fmt.Errorf("add window: %w", err)
	}
	add := s.counts.AddWindow
	if !allKnown {
		add = func(n int64, runs []lossy.Run) error { return s.counts.AddWindowKnown(n, runs, known) }
	}
	if err := add(d.N, d.Runs); err != nil {
		return fmt.Errorf("add window: %w", err)
	}
	return nil
}

// AddSorted digests the sorted window x and adds it: Spec, DigestSorted
// and AddWindow in one call.
func (s *History) AddSorted(x []float64) error {
	var d Digest
	DigestSorted(x, s.Spec(len(x), nil), &d)
	return s.AddWindow(&d)
}

// Stats are a stream's statistics.
type Stats struct {
	Count         int64 // values observed
	Summarised    int64 // values in the all-history summaries
	Sum, Min, Max float64
	Entries       int // summary entries: GK tuples, lossy entries, window values
	Bytes         int // memory held by those entries
}

// Add adds the statistics of x, those of other values, to st: the
// statistics of both together.
func (st *Stats) Add(x Stats) {
	if x.Count > 0 {
		if st.Count == 0 {
			st.Min, st.Max = x.Min, x.Max
		} else {
			st.Min, st.Max = min(st.Min, x.Min), max(st.Max, x.Max)
		}
	}
	st.Count += x.Count
	st.Summarised += x.Summarised
	st.Sum += x.Sum
	st.Entries += x.Entries
	st.Bytes += x.Bytes
}

// Stats returns the history's statistics.
func (s *History) Stats() Stats {
	st := Stats{Count: s.count, Sum: s.sum, Min: s.min, Max: s.max}
	if s.history != nil {
		st.Summarised = s.history.Count()
		st.Entries = s.history.Entries() + s.counts.Len()
		st.Bytes = s.history.Bytes() + s.counts.Bytes()
	}
	return st
}

// Bytes reports the memory held by the quantile sketch and by the lossy
// counting summary, as Stats counts them, without walking the sketch's
// entries: both 0 before the first window.
func (s *History) Bytes() (sketch, counts int) {
	if s.history == nil {
		return 0, 0
	}
	return s.history.Bytes(), s.counts.Bytes()
}

// Sketch returns the all-history quantile sketch, a new empty one before
// the first window. The caller must not modify it.
func (s *History) Sketch() *gksketch.Sketch {
	if s.history == nil {
		h, _ := gksketch.NewSketch(s.cfg.Epsilon) // the config was validated
		return h
	}
	return s.history
}

// Counts returns the all-history lossy counting summary, a new empty one
// before the first window. The caller must not modify it.
func (s *History) Counts() *lossy.Summary {
	if s.counts == nil {
		c, _ := lossy.New(s.cfg.Epsilon) // the config was validated
		return c
	}
	return s.counts
}

// View is the all-history summary of a stream at one moment, including the
// values not yet in a summarised window: its Answers. Build it with
// History.View, NewView or MergeViews; it does not change when the stream
// does. Frequency, HeavyHitters and MaxCountError need a view made with
// counts; they panic otherwise.
type View struct {
	eps     float64
	q       *gksketch.Summary
	history *lossy.Summary
	pending []lossy.Run // exact counts of the pending values

	compactOnce sync.Once
	compact     *gksketch.Summary
	compactBin  []byte
}

// View returns the all-history view of s plus pending, the values accepted
// but not yet added through AddWindow, which must be sorted. The pending
// values are counted exactly: they enter the quantile summary as a sample
// within ε/2 of their count, and the counts exactly. With counts false the
// view answers only quantiles and ranks, and costs no copy of the lossy
// table. View shares or copies what it needs; s may change afterwards.
func (s *History) View(pending []float64, counts bool) *View {
	return s.Base(counts).View(pending)
}

// A Base is what a View takes of a stream's all-history summaries (see
// History.Base): it holds no reference to the stream's changing state, so
// that a caller who takes it under a lock may build the view without it.
type Base struct {
	eps    float64
	q      *gksketch.Summary
	counts *lossy.Summary // nil: the view answers no counts
}

// Base returns the stream's all-history summaries as they are now, for a
// view: the GK sketch's merged summary, which never changes, and, with
// counts, a copy of the frequency summary.
func (s *History) Base(counts bool) Base {
	b := Base{eps: s.cfg.Epsilon, q: s.Sketch().Summary()}
	if counts {
		b.counts = s.Counts().Copy()
	}
	return b
}

// View returns the view of the base's values and pending, the values
// accepted since, sorted.
func (b Base) View(pending []float64) *View {
	v := &View{eps: b.eps, q: b.q}
	if len(pending) > 0 {
		p := gksketch.FromSorted(pending, SampleSpacing(b.eps, len(pending)))
		q := gksketch.Merge(v.q, &p)
		v.q = &q
	}
	if b.counts != nil {
		v.history = b.counts
		v.pending = lossy.AppendRuns(nil, pending)
	}
	return v
}

// NewView returns the view of a quantile summary q and, unless it is nil, a
// frequency summary counts of the same values, both within eps of their
// count: for instance the Quantiles and Counts of a view sent by another
// daemon. It keeps q and counts; the caller must not modify them.
func NewView(eps float64, q *gksketch.Summary, counts *lossy.Summary) *View {
	return &View{eps: eps, q: q, history: counts}
}

// MergeViews returns the view of the union of the views' values. Merged GK
// summaries and lossy counts add their absolute errors (gksketch.Merge,
// lossy.Summary.MergeCounts), so the merged view is within Σ εᵢ·nᵢ of its
// count N = Σ nᵢ: its Epsilon is that sum over N, the count-weighted mean of
// the views' ε, which is their common ε when they agree and never more than
// the largest. The view answers counts only if every input does. The inputs
// are not modified; the result may share their storage.
func MergeViews(vs []*View) *View {
	switch len(vs) {
	case 0:
		return &View{eps: DefaultEpsilon, q: new(gksketch.Summary)}
	case 1:
		return vs[0]
	}
	m := &View{}
	qs := make([]*gksketch.Summary, len(vs))
	var errSum, maxEps float64
	sameEps := true
	counts := true
	for i, v := range vs {
		qs[i] = v.q
		errSum += v.eps * float64(v.q.Count())
		maxEps = max(maxEps, v.eps)
		sameEps = sameEps && v.eps == vs[0].eps
		counts = counts && v.history != nil
	}
	q := gksketch.MergeAll(qs)
	m.q = &q
	switch {
	case sameEps:
		m.eps = vs[0].eps
	case q.Count() > 0:
		m.eps = errSum / float64(q.Count())
	default:
		m.eps = maxEps
	}
	if counts {
		m.history = vs[0].history.Copy()
		m.pending = slices.Clone(vs[0].pending)
		for _, v := range vs[1:] {
			m.history.MergeCounts(v.history)
			m.pending = mergeRuns(m.pending, v.pending)
		}
	}
	return m
}

// mergeRuns returns the runs of both sorted lists, counts of equal values
// added.
func mergeRuns(a, b []lossy.Run) []lossy.Run {
	if len(b) == 0 {
		return a
	}
	out := make([]lossy.Run, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Value < b[j].Value):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].Value < a[i].Value:
			out = append(out, b[j])
			j++
		default:
			out = append(out, lossy.Run{Value: a[i].Value, Count: a[i].Count + b[j].Count})
			i++
			j++
		}
	}
	return out
}

// Quantiles returns the view's quantile summary, pending values included.
// The caller must not modify it.
func (v *View) Quantiles() *gksketch.Summary { return v.q }

// Compact returns the view's quantile summary compressed to its whole
// error budget, ⌊Epsilon·Count⌋ (gksketch.Summary.Compress): fewer tuples
// to send and merge, within the same bound. It is computed once per view.
// The caller must not modify it.
func (v *View) Compact() *gksketch.Summary {
	v.compactOnce.Do(func() {
		c := v.q.Copy()
		c.Compress(int64(v.eps * float64(c.Count())))
		v.compact = &c
		v.compactBin, _ = c.MarshalBinary() // never fails
	})
	return v.compact
}

// CompactBinary returns the encoding of Compact (gksketch), computed once
// per view. The caller must not modify it.
func (v *View) CompactBinary() []byte {
	v.Compact()
	return v.compactBin
}

// Counts returns the view's frequency summary with the pending values'
// exact counts folded in, or nil for a view made without counts. It is a
// new summary.
func (v *View) Counts() *lossy.Summary {
	if v.history == nil {
		return nil
	}
	c := v.history.Copy()
	var n int64
	for _, r := range v.pending {
		n += r.Count
	}
	if n > 0 {
		c.MergeCounts(lossy.FromRuns(v.eps, n, v.pending, 0))
	}
	return c
}

// Count reports the number of values the view is about.
func (v *View) Count() int64 { return v.q.Count() }

// Epsilon reports the view's ε: the stream's, or for a merged view the
// count-weighted mean of its parts' (see MergeViews). Every answer is
// within Epsilon·Count.
func (v *View) Epsilon() float64 { return v.eps }

// Quantile returns the φ-quantile: a value whose rank is within
// ε·Count of ⌈φ·Count⌉, with bounds on that rank; all zero
// for an empty view.
func (v *View) Quantile(phi float64) (x float64, rankMin, rankMax int64) {
	t := v.q.Quantile(phi)
	return t.Value, t.RMin, t.RMax
}

// Rank returns bounds on the number of values ≤ x.
func (v *View) Rank(x float64) (lo, hi int64) { return v.q.Rank(x) }

// MaxRankError bounds the rank error of every quantile answer.
func (v *View) MaxRankError() int64 { return v.q.MaxError() }

// Frequency returns bounds on the count of x: hi − lo ≤ ε·Count.
func (v *View) Frequency(x float64) (lo, hi int64) {
	lo, hi = v.history.Estimate(x)
	c := v.pendingCount(x)
	return lo + c, hi + c
}

func (v *View) pendingCount(x float64) int64 {
	i, ok := slices.BinarySearchFunc(v.pending, x, func(r lossy.Run, x float64) int { return cmp.Compare(r.Value, x) })
	if !ok {
		return 0
	}
	return v.pending[i].Count
}

// HeavyHitters returns every value whose count may reach support·Count:
// all values with count ≥ support·Count and none below
// (support − ε)·Count, largest first, each with its count bounds (Count,
// Count+Delta).
func (v *View) HeavyHitters(support float64) []lossy.Entry {
	total := v.Count()
	maxErr := v.history.MaxError()
	cut := support*float64(total) - float64(maxErr)
	var out []lossy.Entry
	add := func(x float64) {
		lo, hi := v.Frequency(x)
		if float64(lo) >= cut && lo > 0 {
			out = append(out, lossy.Entry{Value: x, Count: lo, Delta: hi - lo})
		}
	}
	// Candidates: the values with entries, and the pending values without
	// one (their lower bound is their exact pending count).
	for _, e := range v.history.Entries() {
		add(e.Value)
	}
	for _, r := range v.pending {
		if lo, hi := v.history.Estimate(r.Value); lo == 0 && hi == v.history.Absent() {
			add(r.Value)
		}
	}
	slices.SortFunc(out, func(a, b lossy.Entry) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out
}

// MaxCountError bounds the width of Frequency's bounds.
func (v *View) MaxCountError() int64 { return v.history.MaxError() }

// Round returns v as the stream stores it: rounded to the nearest float32
// (ties to even) unless the stream keeps float64, and −0 as +0. A finite v
// beyond the range of float32 rounds to ±Inf in a float32 stream, which
// holds no such value. The pipeline rounds every value it accepts with
// Round, and queries round the values they ask about with it, so that a
// value asked about matches the values it stands for.
func (c Config) Round(v float64) float64 {
	if !c.Float64 {
		v = float64(float32(v))
	}
	return v + 0 // −0 becomes +0
}
