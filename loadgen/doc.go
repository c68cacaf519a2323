// Package loadgen feeds streamd: it replays recorded streams and generates
// synthetic ones into the daemon's TCP protocols, its gRPC Push call or a
// Kafka topic, at a chosen rate, and checks the daemon's answers against
// the exact ones.
//
// A [Source] produces values for named streams: [TextFile] (one value per
// line), [CSVFile] (one stream per chosen column), [Recording] (a file in
// either protocol of package ingest, as written by [Recorder]) and [Synth]
// (the distributions and arrival orders of package synth; or items for
// item streams, or pairs of a latency and a size for pair streams). A
// [Target] opens connections that carry values (and items and pairs):
// [TCP] (the line or the framed protocol), [GRPC] (Push) and [Kafka]. A [Runner] drives a Source into a
// Target over one or more connections, paces it, stops it after a count or
// a duration, and reports progress; [Verify] compares what was sent with
// what the daemon answers.
//
// For many streams of different sizes — a million, of sizes drawn from
// [synth.Sizes] — [Synth] with Sizes sends the streams' batches in a
// random interleaving, drawing each batch as it goes; [Runner] with
// SplitStreams keeps each stream on one connection, and with Track keeps
// the counts and values of only the streams that [SampleStreams] picks
// (the large ones and a random sample of the others), which Verify then
// checks.
//
// For the most values per second into the framed protocol, a
// [FrameRunner] sends [Payload]s: streams drawn on all cores
// ([SynthPayload]) and rendered once as frames, which each connection's
// goroutine writes over and over with nothing shared per frame. Its Result
// keeps each rendered value with the number of times it was sent, which
// is what Verify checks against.
//
// Values that are not finite are counted and skipped, never sent, as are
// missing or malformed values in files: see [Result].
//
// # Kafka messages
//
// Each message carries values of one stream: its key is the stream name
// and its "content-type" header says how its value is encoded:
//
//	application/x-streamd-f64le   IEEE 754 binary64 values, little-endian, back to back
//	application/x-streamd-f32le   IEEE 754 binary32 values, little-endian, back to back
//	text/plain                    decimal numbers separated by blanks or newlines
//	text/x-streamd-items          items, one a line
//	text/x-streamd-pairs          pairs x:y separated by blanks (KafkaText)
//	application/x-streamd-pairs-f64le  pairs as binary64 x then y, little-endian
//
// A message without the header is read in a default format chosen by the
// reader (see [DecodeMessage]).
package loadgen

import "errors"

// Errors of this package, to be checked with errors.Is.
var (
	// ErrVerify is returned, wrapped, by Verification.Err when an answer
	// of the daemon breaks its guarantee.
	ErrVerify = errors.New("verification failed")

	// ErrRecordFull is returned by Recorder.Accept once the recorder
	// holds its Limit of values.
	ErrRecordFull = errors.New("recording full")
)
