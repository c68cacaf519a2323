package ingest

import (
	"context"
	"errors"

	"streamd/feed"
)

// Sink receives decoded values. Accept may block: that is the back-pressure that stops TCP reads when sorting falls behind.
type Sink interface {
	// Accept hands values for a stream to the pipeline and returns once they are accepted (counted by the next query), or an error (e.g. the stream limit is reached, or ctx ended). The slice may be reused by the caller after Accept returns.
	Accept(ctx context.Context, stream string, values []float64) error
	// Reject counts n values or messages of stream rejected for reason (one of the feed.Reason constants). stream may be "" when the stream name itself was unreadable.
	Reject(stream string, reason feed.Reason, n int)
}

// An EncodedSink is a Sink that also takes values still in the framed
// protocol's encoding, so that it can decode them straight into where it
// keeps them, without a []float64 in between. The framed decoder uses
// AcceptEncoded when its sink has it.
type EncodedSink interface {
	Sink
	// AcceptEncoded is Accept for the values in data: little-endian IEEE
	// 754 float32 values if size is 4, float64 values if size is 8;
	// len(data) is a multiple of size. It applies the value rules of
	// CleanValues itself: NaN and ±Inf are rejected and counted (with the
	// reasons feed.ReasonNaN and feed.ReasonInf), −0 becomes +0. It returns how many
	// values it accepted. When it fails with feed.ErrStreamLimit or
	// feed.ErrMemoryBudget it has accepted and counted none of them: the caller
	// counts them all (feed.RefusalReason). data may be reused by the caller
	// after AcceptEncoded returns.
	AcceptEncoded(ctx context.Context, stream string, size int, data []byte) (accepted int, err error)
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

// CleanValues applies the value rules of the package to vals, the values of
// stream, in place: it removes NaN and ±Inf, counting them with sink.Reject
// as feed.ReasonNaN and feed.ReasonInf, and turns -0 into +0, so that the pipeline
// never sees -0. It returns the remaining values, a prefix of vals in their
// original order. It makes one pass over vals and allocates nothing.
func CleanValues(stream string, vals []float64, sink Sink) []float64 {
	vals, nan, inf := feed.CleanValues(vals)
	if nan > 0 {
		sink.Reject(stream, feed.ReasonNaN, nan)
	}
	if inf > 0 {
		sink.Reject(stream, feed.ReasonInf, inf)
	}
	return vals
}
