package ingest

import (
	"bytes"

	"streamd/feed"
)

// prefetchFrames is the most batches (frames, or Kafka units) whose
// streams a hint names: enough for the memory of a few dozen streams to be
// fetched side by side, few enough that it is still in the cache when
// their batches come.
const prefetchFrames = 32

// prefetchBackoff is how many batches go without a hint after one whose
// names were mostly of no stream the sink holds, as while a connection
// creates its streams, or of a sink that fetches nothing: the sink's
// lookups would be wasted.
const prefetchBackoff = 256

// A hinter tells a Prefetcher sink the streams of the batches ahead of
// the next one, every prefetchFrames batches or so, as a decoder finds
// them in what it has read but not yet decoded.
type hinter struct {
	to    Prefetcher // nil: the sink takes no hints
	left  int        // batches to hand over before the next hint
	names [][]byte   // the names of the hint being made
}

// newHinter returns a hinter for sink, which gives hints only if sink is
// a Prefetcher.
func newHinter(sink Sink) hinter {
	pf, _ := sink.(Prefetcher)
	return hinter{to: pf}
}

// due reports whether a hint is due before the next batch: the caller
// then adds the names ahead (add) and tells them (tell). Otherwise it
// counts the batch.
func (h *hinter) due() bool {
	if h.to == nil {
		return false
	}
	if h.left > 0 {
		h.left--
		return false
	}
	return true
}

// add adds name, the stream of a batch ahead, to the hint, unless it is
// the stream of the batch before or a name no stream can have (empty, or
// longer than feed.MaxNameLen: a hostile frame's name is not hashed for
// nothing).
func (h *hinter) add(name []byte) {
	if len(name) == 0 || len(name) > feed.MaxNameLen {
		return
	}
	if k := len(h.names); k == 0 || !bytes.Equal(name, h.names[k-1]) {
		h.names = append(h.names, name)
	}
}

// tell hands the names added to the sink, for the next batches, of which
// they cover `batches` (the next one first). The next hint is due after
// those, or prefetchBackoff batches later if the sink found fewer than
// half of the streams. It keeps no view of the names.
func (h *hinter) tell(batches int) {
	h.left = max(batches, 1) - 1 // the next batch is one of them
	if len(h.names) > 0 {
		if found := h.to.Prefetch(h.names); 2*found < len(h.names) {
			h.left += prefetchBackoff
		}
	}
	clear(h.names)
	h.names = h.names[:0]
}
