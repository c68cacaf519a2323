package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"streamd/ingest"
	"streamd/items"
	"streamd/lossy"
	"streamd/summary"
	"streamd/window"
)

// itemStream is the item half of an item stream: the hash of its items and
// the strings that answers name.
type itemStream struct {
	hash    items.Hash
	names   *items.Names
	windows []itemWindow // the windows in flight and their positions
	table   []uint64     // scratch: the lossy table's fingerprints
}

// itemWindow is a full window of an item stream in flight, and the stream
// position of its first item.
type itemWindow struct {
	w     *window.Window
	start int64
}

// addWindow records the position of a window in flight.
func (it *itemStream) addWindow(w *window.Window, start int64) {
	it.windows = append(it.windows, itemWindow{w, start})
}

// newItems returns the item half of the item stream sum, with hash (nil:
// the pipeline's keyed SipHash) and names (nil: empty).
func (p *Pipeline) newItems(sum *summary.Stream, hash items.Hash, names *items.Names) *itemStream {
	if hash == nil {
		hash = p.itemHash
	}
	if names == nil {
		names = items.NewNames(sum.Config().WindowSize, sum.Recent().RawCapacity())
	}
	return &itemStream{hash: hash, names: names}
}

// sync keeps the strings in step with the lossy table after the window w
// was added to it.
func (it *itemStream) sync(w *window.Window, counts *lossy.Summary) {
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

// itemBuf is the scratch space of one AcceptItems: the items'
// fingerprints and the values that carry them.
type itemBuf struct {
	fps    []uint64
	values []float64
}

// AcceptItems adds items to an item stream, creating it with the default
// config (as an item stream) on first items. It returns once the items are
// accepted: every later query counts them. The items must be valid
// (items.Check; ingest rejects the others). at is their arrival time; zero
// means the pipeline's clock. It fails with ErrWrongKind for a value
// stream.
func (p *Pipeline) AcceptItems(ctx context.Context, name string, b *items.Batch, at time.Time) error {
	cfg := p.cfg.Defaults
	cfg.Items = true
	s, _, err := p.getOrCreate(name, cfg)
	if err != nil {
		return err
	}
	return p.AcceptItemsTo(ctx, s, b, at)
}

// AcceptItemsTo adds items to s; see AcceptItems.
func (p *Pipeline) AcceptItemsTo(ctx context.Context, s *Stream, b *items.Batch, at time.Time) error {
	if s.items == nil {
		return fmt.Errorf("%w: items for value stream %q", ErrWrongKind, s.name)
	}
	if at.IsZero() {
		at = p.cfg.Now()
	}
	buf, _ := p.itemBufs.Get().(*itemBuf)
	if buf == nil {
		buf = new(itemBuf)
	}
	defer p.itemBufs.Put(buf)
	buf.fps = b.AppendFingerprints(buf.fps[:0], s.items.hash)
	buf.values = buf.values[:0]
	for _, fp := range buf.fps {
		buf.values = append(buf.values, items.Value(fp))
	}
	s.mu.Lock()
	s.items.names.Append(buf.fps, b)
	full := s.appendLocked(buf.values, at.UnixNano())
	s.mu.Unlock()
	return p.send(ctx, s, full)
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
// items.Names). It panics if s is not an item stream.
func (s *Stream) ItemNames(values []float64) []string {
	fps := make([]uint64, len(values))
	for i, v := range values {
		fps[i] = items.FromValue(v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items.names.Lookup(fps)
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
// stream (ingest.ItemSink).
func (p *Pipeline) IsItemStream(name string) bool {
	s, err := p.Stream(name)
	return err == nil && s.items != nil
}

var (
	_ ingest.ItemSink  = (*Pipeline)(nil)
	_ ingest.TimedSink = (*Pipeline)(nil)
)
