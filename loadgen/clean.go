package loadgen

import (
	"context"
	"errors"

	"streamd/feed"
	"streamd/ingest"
)

// cleanValues applies the daemon's value rules (ingest.CleanValues) to
// vals, the values of stream, in place, counting those it leaves out with
// sink.Reject, and returns the values to send. With f32 set they are sent
// as float32, so the rules apply to the values as float32 rounds them: a
// finite value beyond float32's range, which would go out as ±Inf, is left
// out and counted as ±Inf is, and one float32 rounds to zero is sent as +0.
// Other values are kept as they are; the connection rounds them.
func cleanValues(stream string, vals []float64, f32 bool, sink ingest.Sink) []float64 {
	if f32 {
		for i, v := range vals {
			if w := float64(float32(v)); w-w != 0 || w == 0 {
				vals[i] = w
			}
		}
	}
	return ingest.CleanValues(stream, vals, sink)
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

// skipCount is an ingest.Sink that only counts the values cleanValues
// leaves out, by reason.
type skipCount map[feed.Reason]int64

// Reject implements ingest.Sink.
func (s skipCount) Reject(_ string, reason feed.Reason, n int) { s[reason] += int64(n) }

// Accept implements ingest.Sink; a skipCount takes no values.
func (s skipCount) Accept(context.Context, string, []float64) error {
	return errors.New("skipCount takes no values")
}
