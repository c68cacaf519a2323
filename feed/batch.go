package feed

import (
	"time"

	"streamd/items"
)

// A Batch is what one accept carries from an input to the streams: values,
// items or pairs for one stream, from one Source, with their arrival time.
// Exactly one of Values, Float32, Items and Pairs is the payload; the
// others are empty. A Batch with an empty payload carries nothing.
type Batch struct {
	// Stream is the name of the stream the payload is for.
	Stream string
	// Source is where the payload comes from: Local for the daemon's own
	// inputs (TCP, gRPC Push), a Kafka partition otherwise.
	Source Source
	// At is the payload's arrival time; zero means the pipeline's clock.
	At time.Time

	// Values are clean values (CleanValues: finite, no −0). A float32
	// stream rounds them (Float32), which may still reject some.
	Values []float64
	// Float32 are clean values decoded from float32 (finite, no −0), with
	// their moments in Moments. A stream of either precision takes them
	// as they are.
	Float32 []float32
	// Moments are the moments of Float32, Measure(Float32), measured as
	// they were decoded.
	Moments Moments
	// Items are valid items (items.Check) for an item stream.
	Items *items.Batch
	// Pairs are clean pairs (CleanPairs) for a pair stream.
	Pairs Pairs
}

// Pairs are pairs (X[i], Y[i]) of float64 for a pair stream: X and Y have
// the same length.
type Pairs struct {
	X, Y []float64
}

// Len returns the number of values, items or pairs in b's payload.
func (b *Batch) Len() int {
	n := len(b.Values) + len(b.Float32) + len(b.Pairs.X)
	if b.Items != nil {
		n += b.Items.Len()
	}
	return n
}
