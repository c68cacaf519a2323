package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
)

// A Recorder is an ingest.Sink that writes the values it accepts to a file
// in the framed protocol of package ingest, as float64 (items as item
// frames, pairs as pair frames), so that a Recording replays them. Its methods may be called concurrently; the
// values of each call are written as one or more frames, in the order of
// the calls.
type Recorder struct {
	// Limit, if positive, is the most values the recorder takes: Accept
	// writes the first values up to it, closes Full, and fails with
	// ErrRecordFull from then on.
	Limit int64
	// ItemStreams names the streams whose lines carry items, as the
	// daemon's item streams do; a stream also counts as one once an item
	// frame for it arrives. Lines of other streams carry values.
	ItemStreams map[string]bool

	mu       sync.Mutex
	w        *bufio.Writer
	buf      []byte
	err      error
	values   int64
	streams  map[string]int64
	rejected map[feed.Reason]int64
	full     chan struct{}
	wide     []float64 // float32 values of a batch, widened
}

// NewRecorder returns a Recorder that writes to w, starting with
// ingest.Magic.
func NewRecorder(w io.Writer) *Recorder {
	r := &Recorder{
		w:        bufio.NewWriterSize(w, 256<<10),
		streams:  make(map[string]int64),
		rejected: make(map[feed.Reason]int64),
		full:     make(chan struct{}),
	}
	_, r.err = r.w.WriteString(ingest.Magic)
	return r
}

// Accept implements ingest.Sink: it writes values as float64 frames, and
// items as item frames (b.Source and b.At are not recorded). Limit counts
// items as values.
func (r *Recorder) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	switch {
	case b.Items != nil:
		return r.writeItems(b.Stream, b.Items)
	case len(b.Pairs.X) > 0:
		return r.writePairs(b.Stream, b.Pairs.X, b.Pairs.Y)
	}
	values := batchValues(b, &r.wide)
	n, err := r.room(len(values))
	if err != nil {
		return 0, err
	}
	values = values[:n]
	// ingest's decoders hand over at most 65536 values at a time, well
	// under the frame limit; cut longer slices anyway.
	const most = 1 << 20
	for rest := values; len(rest) > 0; {
		n := min(len(rest), most)
		if err := r.write(ingest.AppendFrame(r.buf[:0], b.Stream, rest[:n], false)); err != nil {
			return 0, err
		}
		rest = rest[n:]
	}
	r.count(b.Stream, len(values))
	return len(values), nil
}

// room returns how many of n values the recorder takes before its Limit,
// and ErrRecordFull when it takes none. The caller holds r.mu.
func (r *Recorder) room(n int) (int, error) {
	if r.Limit > 0 {
		if r.values >= r.Limit {
			return 0, ErrRecordFull
		}
		n = int(min(int64(n), r.Limit-r.values))
	}
	return n, nil
}

// write writes buf, a frame as an Append function returned it with err,
// unless err is set, and keeps buf for the next frame. It returns the
// first error, which sticks in r.err. The caller holds r.mu.
func (r *Recorder) write(buf []byte, err error) error {
	r.buf = buf
	if err == nil {
		_, err = r.w.Write(buf)
	}
	if err != nil {
		r.err = fmt.Errorf("record: %w", err)
	}
	return r.err
}

// count counts n values written of stream, and closes r.full when they
// reach the Limit. The caller holds r.mu.
func (r *Recorder) count(stream string, n int) {
	r.values += int64(n)
	r.streams[stream] += int64(n)
	if r.Limit > 0 && r.values == r.Limit {
		close(r.full)
	}
}

// writeItems writes the items of b as item frames of stream. The caller
// holds r.mu.
func (r *Recorder) writeItems(stream string, b *items.Batch) (int, error) {
	n, err := r.room(b.Len())
	if err != nil {
		return 0, err
	}
	// 1024 items of at most items.MaxLen bytes fit in a frame.
	for i := 0; i < n; i += 1024 {
		if err := r.write(ingest.AppendBatchFrame(r.buf[:0], stream, b, i, min(i+1024, n))); err != nil {
			return 0, err
		}
	}
	if r.ItemStreams == nil {
		r.ItemStreams = make(map[string]bool)
	}
	r.ItemStreams[stream] = true
	r.count(stream, n)
	return n, nil
}

// writePairs writes the pairs (x[i], y[i]) as pair frames of stream,
// each pair counting as a value. The caller holds r.mu.
func (r *Recorder) writePairs(stream string, x, y []float64) (int, error) {
	n, err := r.room(len(x))
	if err != nil {
		return 0, err
	}
	const most = 1 << 19 // pairs of a frame, well under its limit
	for i := 0; i < n; i += most {
		j := min(i+most, n)
		if err := r.write(ingest.AppendPairsFrame(r.buf[:0], stream, x[i:j], y[i:j])); err != nil {
			return 0, err
		}
	}
	r.count(stream, n)
	return n, nil
}

// IsItemStream implements ingest.Sink: the lines of a stream in
// ItemStreams record as items, the others as values.
func (r *Recorder) IsItemStream(stream string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ItemStreams[stream]
}

// Reject implements ingest.Sink: it counts bad input.
func (r *Recorder) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	r.mu.Lock()
	r.rejected[reason] += int64(n)
	r.mu.Unlock()
}

// Full returns a channel that is closed once the recorder holds Limit
// values.
func (r *Recorder) Full() <-chan struct{} { return r.full }

// Flush writes buffered frames to the underlying writer.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if err := r.w.Flush(); err != nil {
		r.err = fmt.Errorf("record: %w", err)
	}
	return r.err
}

// RecordStats are the counts of a Recorder.
type RecordStats struct {
	Values   int64                 // values written
	Streams  map[string]int64      // values written, by stream
	Rejected map[feed.Reason]int64 // bad input, by reason
}

// Stats returns the recorder's counts so far.
func (r *Recorder) Stats() RecordStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := RecordStats{Values: r.values, Streams: make(map[string]int64), Rejected: make(map[feed.Reason]int64)}
	for k, v := range r.streams {
		s.Streams[k] = v
	}
	for k, v := range r.rejected {
		s.Rejected[k] = v
	}
	return s
}

// DecodeMessage decodes the value of a Kafka message in the format its
// content-type header names, or in def when it has none, and hands the
// values to sink for the stream the key names, or for the stream topic when
// the key is empty. A message of an unknown format, or whose length is not
// a whole number of values, is counted as one feed.ReasonMalformed; a
// text token that is not a number is counted as one malformed value.
// Non-finite values are counted as feed.CleanValues counts them.
func DecodeMessage(ctx context.Context, sink ingest.Sink, topic string, m kafka.Message, def KafkaFormat, buf []float64) ([]float64, error) {
	stream := string(m.Key)
	if stream == "" {
		stream = topic
	}
	if feed.ValidName(stream) != nil {
		sink.Reject("", feed.Local, feed.ReasonBadStreamName, 1)
		return buf, nil
	}
	format := def
	for _, h := range m.Headers {
		if h.Key == ContentTypeHeader {
			f, err := ParseKafkaFormat(string(h.Value))
			if err != nil {
				sink.Reject(stream, feed.Local, feed.ReasonMalformed, 1)
				return buf, nil
			}
			format = f
		}
	}
	vals := buf[:0]
	switch format {
	case KafkaFloat64, KafkaFloat32:
		size := 8
		if format == KafkaFloat32 {
			size = 4
		}
		if len(m.Value)%size != 0 {
			sink.Reject(stream, feed.Local, feed.ReasonMalformed, 1)
			return buf, nil
		}
		for b := m.Value; len(b) > 0; b = b[size:] {
			if size == 8 {
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			} else {
				vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
			}
		}
	case KafkaText:
		bad := 0
		for _, tok := range bytes.Fields(m.Value) {
			v, err := strconv.ParseFloat(string(tok), 64)
			if err != nil {
				bad++
				continue
			}
			vals = append(vals, v)
		}
		if bad > 0 {
			sink.Reject(stream, feed.Local, feed.ReasonMalformed, bad)
		}
	default:
		sink.Reject(stream, feed.Local, feed.ReasonMalformed, 1)
		return buf, nil
	}
	return vals, acceptValues(ctx, sink, stream, vals)
}

// ReadKafka reads every partition of topic, from its first offset, and
// hands the values of each message to sink (see DecodeMessage) until ctx
// ends or sink.Accept fails. It returns nil when ctx ends or Accept fails
// with ErrRecordFull. dialer may be nil.
func ReadKafka(ctx context.Context, brokers []string, topic string, def KafkaFormat, dialer *kafka.Dialer, sink ingest.Sink) error {
	if len(brokers) == 0 || topic == "" {
		return errors.New("read kafka: brokers and topic are required")
	}
	if dialer == nil {
		dialer = kafka.DefaultDialer
	}
	var parts []kafka.Partition
	var err error
	for _, b := range brokers {
		var conn *kafka.Conn
		if conn, err = dialer.DialContext(ctx, "tcp", b); err != nil {
			continue
		}
		parts, err = conn.ReadPartitions(topic)
		conn.Close()
		if err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("read kafka: partitions of %s: %w", topic, err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex // sink's calls are serialised
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() {
			r := kafka.NewReader(kafka.ReaderConfig{
				Brokers: brokers, Topic: topic, Partition: p.ID, Dialer: dialer,
				MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 250 * time.Millisecond,
			})
			defer r.Close()
			if err := r.SetOffset(kafka.FirstOffset); err != nil {
				cancel(fmt.Errorf("read kafka: partition %d: %w", p.ID, err))
				return
			}
			var buf []float64
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						cancel(fmt.Errorf("read kafka: partition %d: %w", p.ID, err))
					}
					return
				}
				mu.Lock()
				buf, err = DecodeMessage(ctx, sink, topic, m, def, buf)
				mu.Unlock()
				if err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	err = context.Cause(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrRecordFull) {
		return nil
	}
	return err
}
