package ingest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"streamd/feed"
	"streamd/items"
)

// Limits of the decoders.
const (
	// DefaultMaxLineBytes is the default length limit of a line.
	DefaultMaxLineBytes = 1 << 20

	// MaxFrameLen is the longest frame body the framed protocol allows,
	// and the default limit of a Decoder.
	MaxFrameLen = 16 << 20
)

const (
	// batchLen is the most values handed to Sink.Accept at once.
	batchLen = 1 << 16

	// readBufferSize is the size of the read buffer of a connection.
	readBufferSize = 64 << 10

	// batchItemBytes is the most item bytes handed to Sink.Accept at
	// once (beside at most batchLen items).
	batchItemBytes = 4 << 20
)

// A Decoder decodes the input of one producer, in either protocol, and
// hands the values to its Sink. A Decoder holds only configuration and may
// be used for many inputs at once.
type Decoder struct {
	// Sink receives the values and the rejects. It must be set.
	Sink Sink

	// MaxLineBytes is the length limit of a line, not counting its line
	// ending. Zero means DefaultMaxLineBytes.
	MaxLineBytes int

	// MaxFrameBytes is the length limit of a frame body, at most
	// MaxFrameLen. Zero means MaxFrameLen.
	MaxFrameBytes int

	// bufSize, when not zero, replaces readBufferSize, for tests.
	bufSize int
}

// limits returns d's limits with the defaults applied, or an error if they
// are out of range.
func (d *Decoder) limits() (maxLine, maxFrame int, err error) {
	maxLine, maxFrame = d.MaxLineBytes, d.MaxFrameBytes
	if maxLine == 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxFrame == 0 {
		maxFrame = MaxFrameLen
	}
	if maxLine < 0 {
		return 0, 0, fmt.Errorf("max line bytes %d is negative", maxLine)
	}
	if maxFrame < 0 || maxFrame > MaxFrameLen {
		return 0, 0, fmt.Errorf("max frame bytes %d is not in [0, %d]", maxFrame, MaxFrameLen)
	}
	return maxLine, maxFrame, nil
}

// Decode reads r until it ends and hands its values to d.Sink, in the
// protocol that the first bytes of r choose. It returns nil at the end of
// r; an error wrapping ErrUnknownFormat or ErrFrameTooLarge when the input
// cannot be decoded further (the reject is counted already); an error from
// reading r; or an error from Sink.Accept other than feed.ErrStreamLimit and
// feed.ErrMemoryBudget. In
// every case the values decoded before the end are handed to the sink first,
// except when Accept itself failed.
//
// Decode reads through a buffer of 64 KiB and allocates nothing per value;
// see the package documentation for the protocols and how bad input is
// counted. ctx is passed to Sink.Accept, and Decode returns when ctx ends and
// Accept reports it.
func (d *Decoder) Decode(ctx context.Context, r io.Reader) error {
	if d.Sink == nil {
		return errors.New("decode: no sink")
	}
	maxLine, maxFrame, err := d.limits()
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	size := d.bufSize
	if size == 0 {
		size = readBufferSize
	}
	br := bufio.NewReaderSize(r, size)
	first, err := br.Peek(1)
	if len(first) == 0 {
		if err == io.EOF {
			return nil
		}
		return fmt.Errorf("read: %w", err)
	}
	b := &batch{ctx: ctx, sink: d.Sink}
	switch c := first[0]; {
	case c == Magic[0]:
		magic, err := br.Peek(len(Magic))
		if string(magic) != Magic {
			if err != nil && err != io.EOF {
				return fmt.Errorf("read: %w", err)
			}
			d.Sink.Reject("", feed.Local, feed.ReasonUnknownFormat, 1)
			return fmt.Errorf("first bytes %q: %w", magic, ErrUnknownFormat)
		}
		br.Discard(len(Magic))
		// The header of a frame with a valid name, and an item with its
		// length, must fit in the buffer, which only tests make smaller
		// than that.
		br = bufio.NewReaderSize(br, max(2+feed.MaxNameLen+1, 2+items.MaxLen))
		fd := frameDecoder{br: br, b: b, max: maxFrame, hints: newHinter(d.Sink)}
		return fd.run()
	case feed.IsNameByte(c), isBlank(c), c == '\r', c == '\n', c == '#':
		ld := lineDecoder{br: br, b: b, max: maxLine}
		return ld.run()
	default:
		d.Sink.Reject("", feed.Local, feed.ReasonUnknownFormat, 1)
		return fmt.Errorf("first byte %q: %w", c, ErrUnknownFormat)
	}
}

// A batch gathers the values, items or pairs of one stream for one call
// of Sink.Accept: float64 values (from lines and float64 frames, cleaned
// when they are handed on), float32 values (from float32 frames, cleaned
// and measured as they are decoded), items, or pairs (from pair lines and
// pair frames, cleaned when they are handed on).
type batch struct {
	ctx       context.Context
	sink      Sink
	stream    string
	lineItems bool            // the line protocol reads stream's tokens as items (set by the line decoder)
	vals      []float64       // len ≤ batchLen; grows as needed
	f32       []float32       // len ≤ batchLen; clean
	px, py    []float64       // pairs, len ≤ batchLen; cleaned by flush
	moments   feed.Moments    // of f32
	list      items.Batch     // items; a batch holds one kind of payload
	names     interner        // stream names as strings
	err       error           // the first error of Accept; the batch is dead
	rejects   []pendingReject // rejects of stream, counted by flush (reject)
	fb        feed.Batch      // handed to Accept
}

// A pendingReject is n inputs of a batch's stream rejected for reason.
type pendingReject struct {
	reason feed.Reason
	n      int
}

// reject counts n inputs of b's stream rejected for reason once the
// values and items gathered before them are handed to the sink (flush), so
// that the stream the input creates counts the bad parts of its first
// input: a reject counted first would find no stream and belong to none.
func (b *batch) reject(reason feed.Reason, n int) {
	for i := range b.rejects {
		if b.rejects[i].reason == reason {
			b.rejects[i].n += n
			return
		}
	}
	b.rejects = append(b.rejects, pendingReject{reason, n})
}

// rejectNonFinite counts nan inputs of b's stream rejected as NaN and inf
// as ±Inf, as reject does.
func (b *batch) rejectNonFinite(nan, inf int) {
	if nan > 0 {
		b.reject(feed.ReasonNaN, nan)
	}
	if inf > 0 {
		b.reject(feed.ReasonInf, inf)
	}
}

// rejectFor counts n inputs of stream rejected for reason: as b.reject
// does for b's stream, at once for another stream.
func (b *batch) rejectFor(stream string, reason feed.Reason, n int) {
	if stream != "" && stream == b.stream {
		b.reject(reason, n)
		return
	}
	b.count(stream, reason, n)
}

// count counts n inputs of stream rejected for reason at once.
func (b *batch) count(stream string, reason feed.Reason, n int) {
	b.sink.Reject(stream, feed.Local, reason, n)
}

// itemRoom reports whether the batch takes more items before it must be
// flushed.
func (b *batch) itemRoom() bool {
	return b.list.Len() < batchLen && b.list.Size() < batchItemBytes
}

// room returns how many more values the batch takes before it must be
// flushed.
func (b *batch) room() int {
	return batchLen - len(b.vals) - len(b.f32) - len(b.px)
}

// setStream flushes b and makes name its stream. name must be valid.
func (b *batch) setStream(name []byte) error {
	if err := b.flush(); err != nil {
		return err
	}
	b.stream = b.names.intern(name)
	return nil
}

// flush hands the values or items of b to the sink, and empties b; then
// it counts the rejects of b's stream (reject). Values refused for their
// stream (feed.RefusalReason) are counted; any other error of Accept is
// returned, now and by every later call.
func (b *batch) flush() error {
	err := b.flushData()
	for _, r := range b.rejects {
		b.sink.Reject(b.stream, feed.Local, r.reason, r.n)
	}
	b.rejects = b.rejects[:0]
	return err
}

// flushData is flush without the rejects.
func (b *batch) flushData() error {
	if b.err != nil {
		return b.err
	}
	b.fb = feed.Batch{Stream: b.stream, Source: feed.Local}
	switch {
	case b.list.Len() > 0:
		b.fb.Items = &b.list
	case len(b.f32) > 0:
		b.fb.Float32, b.fb.Moments = b.f32, b.moments
	case len(b.vals) > 0:
		b.fb.Values = b.vals // cleaned as they were decoded
	case len(b.px) > 0:
		x, y, nan, inf := feed.CleanPairs(b.px, b.py)
		b.rejectNonFinite(nan, inf)
		b.fb.Pairs = feed.Pairs{X: x, Y: y}
	}
	if n := b.fb.Len(); n > 0 {
		_, err := b.sink.Accept(b.ctx, &b.fb)
		if _, err = settle(err, b.stream, n, b.count); err != nil {
			b.err = fmt.Errorf("accept %d values or items of stream %q: %w", n, b.stream, err)
		}
	}
	b.vals, b.f32, b.moments = b.vals[:0], b.f32[:0], feed.Moments{}
	b.px, b.py = b.px[:0], b.py[:0]
	b.list.Reset()
	b.fb = feed.Batch{}
	return b.err
}

// settle sorts out err, the error of a sink's Accept of n values or items
// of stream: accepted reports whether it is nil; a refusal for the stream
// (feed.RefusalReason) is counted through reject as n rejects and settled;
// any other error is returned, for the caller to wrap and stop on.
func settle(err error, stream string, n int, reject func(stream string, reason feed.Reason, n int)) (accepted bool, _ error) {
	if err == nil {
		return true, nil
	}
	if reason, ok := feed.RefusalReason(err); ok {
		reject(stream, reason, n)
		return false, nil
	}
	return false, err
}

// end flushes b when the input has ended with err, and returns the error
// Decode reports: nil at io.EOF, else the error of Accept or of the read.
func (b *batch) end(err error) error {
	if ferr := b.flush(); ferr != nil {
		return ferr
	}
	if err == io.EOF {
		return nil
	}
	return fmt.Errorf("read: %w", err)
}
