package loadgen

import (
	"context"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
)

// cleanValues applies the daemon's value rule (feed.CleanValues) to vals,
// the values of stream, in place, counting those it leaves out with
// reject, and returns the values to send. With f32 set they are sent as
// float32, so the rule applies to the values as float32 rounds them: a
// finite value beyond float32's range, which would go out as ±Inf, is left
// out and counted as ±Inf is, and one float32 rounds to zero is sent as
// +0. Other values are kept as they are; the connection rounds them.
func cleanValues(vals []float64, f32 bool, reject func(feed.Reason, int)) []float64 {
	if f32 {
		for i, v := range vals {
			if w := float64(float32(v)); w-w != 0 || w == 0 {
				vals[i] = w
			}
		}
	}
	vals, nan, inf := feed.CleanValues(vals)
	if nan > 0 {
		reject(feed.ReasonNaN, nan)
	}
	if inf > 0 {
		reject(feed.ReasonInf, inf)
	}
	return vals
}

// sendsFloat32 reports whether t sends values as float32.
func sendsFloat32(t Target) bool {
	switch t := t.(type) {
	case *TCP:
		return t.Float32
	case *Kafka:
		return t.Format == KafkaFloat32
	}
	return false
}

// skipCount counts the values cleanValues leaves out, by reason.
type skipCount map[feed.Reason]int64

// add counts n values left out for reason.
func (s skipCount) add(reason feed.Reason, n int) { s[reason] += int64(n) }

// acceptValues hands vals, values of stream as a source reads them, to
// sink after the value rule (feed.CleanValues), which changes vals in
// place; it counts the values the rule leaves out with sink.Reject once
// the others are accepted.
func acceptValues(ctx context.Context, sink ingest.Sink, stream string, vals []float64) error {
	vals, nan, inf := feed.CleanValues(vals)
	if len(vals) > 0 {
		if _, err := sink.Accept(ctx, &feed.Batch{Stream: stream, Source: feed.Local, Values: vals}); err != nil {
			return err
		}
	}
	if nan > 0 {
		sink.Reject(stream, feed.Local, feed.ReasonNaN, nan)
	}
	if inf > 0 {
		sink.Reject(stream, feed.Local, feed.ReasonInf, inf)
	}
	return nil
}

// acceptItems hands b, items of stream, to sink.
func acceptItems(ctx context.Context, sink ingest.Sink, stream string, b *items.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	_, err := sink.Accept(ctx, &feed.Batch{Stream: stream, Source: feed.Local, Items: b})
	return err
}

// batchValues returns the values of b's payload as float64: b.Values, or
// b.Float32 widened into *buf.
func batchValues(b *feed.Batch, buf *[]float64) []float64 {
	if len(b.Float32) == 0 {
		return b.Values
	}
	vals := (*buf)[:0]
	for _, v := range b.Float32 {
		vals = append(vals, float64(v))
	}
	*buf = vals
	return vals
}
