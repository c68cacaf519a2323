package ingest

import (
	"context"
	"errors"

	"streamd/feed"
)

// Sink receives what the inputs decode, one batch at a time, and counts
// what they reject. Accept may block: that is the back-pressure that stops
// TCP reads and Kafka fetches when sorting falls behind.
type Sink interface {
	// Accept hands the payload of b to the streams and returns how many of
	// its values or items were accepted (counted by the next query). Of
	// the rest, Accept has counted those it rejected itself (such as
	// values beyond a float32 stream's range) when it returns a nil error;
	// with an error it has accepted none. An error wrapping
	// feed.ErrStreamLimit, feed.ErrMemoryBudget or feed.ErrWrongKind
	// refuses the payload for its stream, and the caller counts it
	// (feed.RefusalReason); any other error (ctx ended, the sink closed)
	// stops the input. The caller may reuse b and its payload once Accept
	// returns.
	Accept(ctx context.Context, b *feed.Batch) (accepted int, err error)
	// Reject counts n values, items or messages of stream from src
	// rejected for reason (one of the feed.Reason constants). stream may be
	// "" when the stream name itself was unreadable.
	Reject(stream string, src feed.Source, reason feed.Reason, n int)
	// IsItemStream reports whether stream exists and takes items: the line
	// protocol reads the tokens of its lines as items then.
	IsItemStream(stream string) bool
}

// A Prefetcher is a Sink that takes hints of the streams whose batches
// come next. The framed protocol's decoder and the Kafka consumer tell it
// the streams of the frames or messages they have read ahead, so that a
// sink holding many streams can fetch their state from memory side by
// side before the batches come (see pipeline.Pipeline.Prefetch). A hint
// changes nothing that Accept or Reject would see. The names are the
// caller's buffers: valid only during the call, and not to be written.
//
// Prefetch returns how many of the names are streams it fetched: the
// callers give fewer hints while most are not, as while a connection
// creates its streams.
type Prefetcher interface {
	Prefetch(names [][]byte) (found int)
}

// Errors of this package, to be checked with errors.Is.
var (
	// ErrUnknownFormat is returned by Decode when the input speaks neither
	// the line protocol nor the framed protocol.
	ErrUnknownFormat = errors.New("unknown input format")

	// ErrFrameTooLarge is returned by Decode when a frame is longer than the
	// limit, and by AppendFrame when the frame would be longer than
	// MaxFrameLen.
	ErrFrameTooLarge = errors.New("frame too large")
)
