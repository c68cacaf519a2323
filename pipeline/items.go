package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"streamd/feed"
	"streamd/internal/membudget"
	"streamd/items"
	"streamd/lossy"
	"streamd/slidingwindow"
	"streamd/summary"
	"streamd/window"
)

// itemStream is the item half of an item stream: the hash of its items and
// the strings of its newest items, from every source, that last-n and
// time-window answers name.
type itemStream struct {
	hash   items.Hash
	recent *items.Names // no table (items.NewRecentNames)
}

// itemPart is the item half of a part of an item stream: the strings of
// its lossy table and of its windows not yet summarised.
type itemPart struct {
	names   *items.Names // retain 0
	windows []itemWindow // the windows in flight and their positions
	table   []uint64     // scratch: the lossy table's fingerprints
}

// itemWindow is a full window of an item stream in flight, and the part's
// position of its first item.
type itemWindow struct {
	w     *window.Buffer
	start int64
}

// newItems returns the item half of an item stream of cfg whose sliding
// window is recent, with hash (nil: cfg.ItemHash if set, else the
// pipeline's keyed SipHash) and the strings of recent (nil: none).
func (p *Pipeline) newItems(cfg summary.Config, recent *slidingwindow.Window, hash items.Hash) *itemStream {
	if hash == nil {
		hash = cfg.ItemHash
	}
	if hash == nil {
		hash = p.itemHash
	}
	limit := recentNamesLimit(cfg.WindowSize, recent.RawCapacity())
	return &itemStream{hash: hash, recent: items.NewRecentNames(cfg.WindowSize, recent.RawCapacity(), limit)}
}

// newItemPart returns the item half of a part of cfg with names (nil:
// none yet).
func newItemPart(cfg summary.Config, names *items.Names) *itemPart {
	if names == nil {
		names = items.NewNames(cfg.WindowSize, 0)
	}
	return &itemPart{names: names}
}

// addWindow records the position of a window in flight.
func (it *itemPart) addWindow(w *window.Buffer, start int64) {
	it.windows = append(it.windows, itemWindow{w, start})
}

// sync keeps the strings in step with the lossy table after the window w
// was added to it.
func (it *itemPart) sync(w *window.Buffer, counts *lossy.Summary) {
	i := slices.IndexFunc(it.windows, func(x itemWindow) bool { return x.w == w })
	if i < 0 {
		panic("pipeline: an item window without its position")
	}
	start := it.windows[i].start
	it.windows = slices.Delete(it.windows, i, i+1)
	it.table = it.table[:0]
	for _, e := range counts.Entries() {
		it.table = append(it.table, items.FromValue(e.Value))
	}
	it.names.Sync(start, it.table)
}

// itemBuf is the scratch space of one Accept of items: the items'
// fingerprints and the values that carry them.
type itemBuf struct {
	fps    []uint64
	values []float64
}

// parallelItems is the fewest items of a batch whose hashing is split
// between two goroutines: hashing them takes about half a millisecond.
const parallelItems = 16384

// fingerprint sets buf.fps to the fingerprints under hash of b's items and
// buf.values to the values that carry them. A large batch is split with a
// second goroutine when there is more than one core: the connection that
// sent it decodes its next batch only once this one is accepted, so the
// hashing of one batch is what limits one connection into one stream.
func (buf *itemBuf) fingerprint(b *items.Batch, hash items.Hash) {
	n := b.Len()
	buf.fps = slices.Grow(buf.fps[:0], n)[:n]
	buf.values = slices.Grow(buf.values[:0], n)[:n]
	put := func(i, j int) {
		b.PutFingerprints(buf.fps[i:j], hash, i)
		for k, fp := range buf.fps[i:j] {
			buf.values[i+k] = items.Value(fp)
		}
	}
	if n < parallelItems || runtime.GOMAXPROCS(0) < 2 {
		put(0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { put(n/2, n) })
	put(0, n/2)
	wg.Wait()
}

// acceptItems is Accept for b's items.
func (p *Pipeline) acceptItems(ctx context.Context, b *feed.Batch) (int, error) {
	s, err := p.itemStream(b.Stream, b.Source, b.Items)
	if s == nil {
		return 0, err
	}
	if s.hier != nil {
		return p.acceptHierarchy(ctx, s, b.Source, b.Items, b.At)
	}
	if err := p.acceptItemsFrom(ctx, s, b.Source, b.Items, b.At); err != nil {
		return 0, err
	}
	return b.Items.Len(), nil
}

// itemStream returns the named stream for the items of b from src,
// creating it as an item stream with the default config if b holds any;
// nil and a nil error for a valid name without a stream when b is empty.
func (p *Pipeline) itemStream(name string, src feed.Source, b *items.Batch) (*Stream, error) {
	if s := p.lookup(name); s != nil {
		return s, nil
	}
	if err := feed.ValidName(name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadName, err)
	}
	if b.Len() == 0 {
		return nil, nil
	}
	cfg := p.cfg.Defaults
	cfg.Items = true
	s, _, err := p.getOrCreate(name, cfg, src)
	return s, err
}

// acceptItemsFrom adds items from src to s. The strings it keeps of them
// are charged to the memory budget first (chargeItems): it may wait, or
// refuse them all with an error wrapping ErrMemoryBudget.
func (p *Pipeline) acceptItemsFrom(ctx context.Context, s *Stream, src feed.Source, b *items.Batch, at time.Time) error {
	if s.items == nil {
		return fmt.Errorf("%w: items for %s stream %q", ErrWrongKind, s.kind(), s.name)
	}
	if at.IsZero() {
		at = p.cfg.Now()
	}
	if err := p.chargeItems(ctx, s, src, b); err != nil {
		return fmt.Errorf("items for stream %q: %w", s.name, err)
	}
	buf, _ := p.itemBufs.Get().(*itemBuf)
	if buf == nil {
		buf = new(itemBuf)
	}
	defer p.itemBufs.Put(buf)
	buf.fingerprint(b, s.items.hash)
	open, err := p.lockOpen()
	if err != nil {
		return err
	}
	s.mu.Lock()
	full := s.pendingQ
	s.pendingQ = nil
	if len(buf.values) > 0 {
		pt := s.partLocked(src)
		s.items.recent.Append(buf.fps, b)
		pt.items.names.Append(buf.fps, b)
		full = s.appendLocked(pt, buf.values, nil, feed.Moments{Count: int64(len(buf.values))}, at.UnixNano(), full)
	}
	s.mu.Unlock()
	return p.send(ctx, s, full, open)
}

// chargeItems charges the memory budget for the strings that s is about
// to keep of b's items (items.Names.Cost), which the budget does not
// reserve: those of its newest items, up to their limit, and those of the
// windows not yet summarised of its part of src; and for the growth of its
// buffers that the items' values need (Stream.growthLocked). While the budget cannot
// hold them and the stream has windows in flight it waits, as Accept does;
// when nothing in flight would free memory it fails with an error wrapping
// ErrMemoryBudget, and the items are refused. Windows left unsent by a
// cancelled Accept are sent first, since the wait may need them
// summarised. held are streams charged before s for the same batch, whose
// windows it fills only once s is charged too: it never waits for those.
func (p *Pipeline) chargeItems(ctx context.Context, s *Stream, src feed.Source, b *items.Batch, held ...*Stream) error {
	if b.Len() == 0 {
		return nil
	}
	// send unlocks what lockOpen locks; once closed, the windows left
	// unsent stay in the stream.
	open, err := p.lockOpen()
	if err != nil {
		return err
	}
	s.mu.Lock()
	full := s.pendingQ
	s.pendingQ = nil
	pt := s.partLocked(src)
	grow, windows := s.growthLocked(pt, b.Len())
	cost := s.items.recent.Cost(b) + pt.items.names.Cost(b) + grow
	s.mu.Unlock()
	if err := p.send(ctx, s, full, open); err != nil {
		return err
	}
	accounts := make([]*membudget.Account, len(held))
	for i, h := range held {
		accounts[i] = &h.account
	}
	return s.account.Grow(ctx, cost, windows, accounts...)
}

// IsItems reports whether s is an item stream.
func (s *Stream) IsItems() bool { return s.items != nil }

// ItemValue returns the value that carries item's fingerprint in the item
// stream s: what to ask its summaries about item. It panics if s is not an
// item stream.
func (s *Stream) ItemValue(item string) float64 {
	return items.Value(items.Fingerprint(s.items.hash([]byte(item))))
}

// ItemNames returns the strings of the items whose fingerprints the values
// carry, "" for one whose string the stream does not keep (see
// items.Names): the strings of its parts' lossy tables and windows not yet
// summarised first, local part first, then those of its newest items. It
// panics if s is not an item stream.
func (s *Stream) ItemNames(values []float64) []string {
	out := make([]string, len(values))
	fps := make([]uint64, len(values))
	for i, v := range values {
		fps[i] = items.FromValue(v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sources := []*items.Names{}
	for _, it := range s.itemPartsLocked() {
		sources = append(sources, it.names)
	}
	sources = append(sources, s.items.recent)
	want, at := fps, make([]int, len(fps)) // fingerprints not found yet, and where they go
	for i := range at {
		at[i] = i
	}
	for _, names := range sources {
		if len(want) == 0 {
			break
		}
		found := names.Lookup(want)
		k := 0
		for j, x := range found {
			if x != "" {
				out[at[j]] = x
				continue
			}
			want[k], at[k] = want[j], at[j]
			k++
		}
		want, at = want[:k], at[:k]
	}
	return out
}

// ItemCount is an item of an item stream with bounds on its count among
// the values an answer covers.
type ItemCount struct {
	// Item is the item's string: for a heavy hitter, the string the stream
	// keeps for its fingerprint ("" if it keeps none); for a frequency, the
	// item asked about.
	Item string
	// Fingerprint is the item's fingerprint (package items).
	Fingerprint uint64
	// Min and Max bound the total count of the items with this
	// fingerprint, so Max bounds Item's own count; Min bounds Item's own
	// count too unless another item shares the fingerprint, which is
	// unlikely (see package items) and, where the stream knows of it,
	// reported by Shared with Min 0.
	Min, Max int64
	// Shared reports that the stream keeps another item's string for this
	// fingerprint: the two collide, and Min is 0.
	Shared bool
}

// Counter answers counts: the all-history summary.View or a last-n or
// time-window slidingwindow.Snapshot of an item stream.
type Counter interface {
	Frequency(v float64) (lo, hi int64)
	HeavyHitters(support float64) []lossy.Entry
}

// HeavyItems returns the heavy hitters of c, an answer of the item stream
// s, with their strings, in c's order (largest count first).
func (s *Stream) HeavyItems(c Counter, support float64) []ItemCount {
	hh := c.HeavyHitters(support)
	values := make([]float64, len(hh))
	for i, e := range hh {
		values[i] = e.Value
	}
	names := s.ItemNames(values)
	out := make([]ItemCount, len(hh))
	for i, e := range hh {
		out[i] = ItemCount{Item: names[i], Fingerprint: items.FromValue(e.Value), Min: e.Count, Max: e.Count + e.Delta}
	}
	return out
}

// ItemFrequencies returns bounds on the counts of list's items in c, an
// answer of the item stream s. An item whose fingerprint the stream knows
// under another string gets Shared and Min 0.
func (s *Stream) ItemFrequencies(c Counter, list []string) []ItemCount {
	values := make([]float64, len(list))
	for i, x := range list {
		values[i] = s.ItemValue(x)
	}
	names := s.ItemNames(values)
	out := make([]ItemCount, len(list))
	for i, x := range list {
		lo, hi := c.Frequency(values[i])
		ic := ItemCount{Item: x, Fingerprint: items.FromValue(values[i]), Min: lo, Max: hi}
		if names[i] != "" && names[i] != x {
			ic.Shared, ic.Min = true, 0
		}
		out[i] = ic
	}
	return out
}

// IsItemStream reports whether the named stream exists and is an item
// stream: the line protocol reads the tokens of its lines as items then
// (ingest.Sink).
func (p *Pipeline) IsItemStream(name string) bool {
	s := p.lookup(name)
	return s != nil && s.items != nil
}
