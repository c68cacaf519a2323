package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
	"streamd/items"
)

// A partitionConsumer consumes one partition for one generation: a fetcher
// goroutine reads batches of messages from the partition's leader while the
// calling goroutine delivers the previous batch to the sink.
type partitionConsumer struct {
	c     *KafkaConsumer
	tp    feed.Source
	state *partitionState
	log   *slog.Logger

	// Delivery state, used by the delivering goroutine only.
	format  Format       // the topic's default format
	names   interner     // stream names as strings
	vals    []float64    // values of the unit being delivered
	list    items.Batch  // or its items
	px, py  []float64    // or its pairs
	rejects []unitReject // the rejects of the unit (reject)
	hints   hinter       // tells the sink the streams of the units ahead
}

// A unitReject is n inputs of stream rejected for reason.
type unitReject struct {
	stream string
	reason feed.Reason
	n      int
}

// A fetched batch of messages of a partition.
type fetched struct {
	msgs []kafka.Message
	next int64 // the offset after the batch, ≥ the last message's + 1
}

// run consumes the partition from offset start (or its earliest offset if
// start is kafka.FirstOffset) until pctx ends or delivery fails. Accept is
// called with ctx, which ends only when the consumer stops, so that a
// rebalance does not interrupt an Accept: the generation ends between two
// Accepts. run returns nil when pctx ends, and the error of Accept
// otherwise.
func (p *partitionConsumer) run(ctx, pctx context.Context, start int64) error {
	p.format = p.c.Formats[p.tp.Topic]
	if !p.c.StreamFromTopic {
		// A topic of one stream needs no hints.
		p.hints = newHinter(p.c.Sink)
	}
	fctx, cancel := context.WithCancel(pctx)
	defer cancel()
	ch := make(chan fetched, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		p.fetch(fctx, start, ch)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for {
		var f fetched
		var ok bool
		select {
		case f, ok = <-ch:
		case <-pctx.Done():
		}
		if !ok || pctx.Err() != nil {
			return nil
		}
		if err := p.deliver(ctx, pctx, f); err != nil {
			if pctx.Err() != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) {
				return nil // the consumer or the generation ended
			}
			return err
		}
	}
}

// fetch reads the partition from start and sends batches of messages to ch
// until ctx ends. It retries failures until then, with a growing backoff.
func (p *partitionConsumer) fetch(ctx context.Context, start int64, ch chan<- fetched) {
	maxBytes := p.c.FetchMaxBytes
	if maxBytes == 0 {
		maxBytes = DefaultKafkaFetchMaxBytes
	}
	maxWait := p.c.FetchMaxWait
	if maxWait == 0 {
		maxWait = DefaultKafkaFetchMaxWait
	}
	var (
		conn    *kafka.Conn
		stop    func() bool
		offset  = start
		backoff time.Duration
	)
	closeConn := func() {
		if conn != nil {
			stop()
			conn.Close()
			conn = nil
		}
	}
	defer closeConn()
	fail := func(msg string, err error) {
		closeConn()
		backoff = min(max(2*backoff, 100*time.Millisecond), kafkaMaxBackoff)
		p.log.Warn(msg, "err", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	for ctx.Err() == nil {
		if conn == nil {
			c, err := p.dial(ctx)
			if err != nil {
				if ctx.Err() == nil {
					fail("dial kafka partition leader", err)
				}
				continue
			}
			conn = c
			// Closing the connection ends a fetch in progress.
			stop = context.AfterFunc(ctx, func() { c.Close() })
		}
		if offset < 0 {
			first, err := conn.ReadFirstOffset()
			if err != nil {
				fail("read first offset of kafka partition", err)
				continue
			}
			offset = first
		}
		if !p.state.started.Load() {
			p.c.setNext(p.tp, offset)
			p.state.started.Store(true)
			p.caughtUp(-1)
		}
		if _, err := conn.Seek(offset, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
			fail("seek kafka partition", err)
			continue
		}
		conn.SetReadDeadline(time.Now().Add(maxWait + 30*time.Second))
		batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: maxBytes, MaxWait: maxWait})
		var msgs []kafka.Message
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			msgs = append(msgs, m)
		}
		next := batch.Offset()
		hwm := batch.HighWaterMark()
		err := batch.Close()
		if errors.Is(err, kafka.RequestTimedOut) {
			// kafka-go's way of saying that the fetch found no new
			// message before FetchMaxWait.
			err = nil
		}
		if err == nil {
			p.state.hwm.Store(hwm)
			// A response cut short leaves hwm 0, not the end of the log.
			if hwm > 0 {
				p.caughtUp(hwm)
			}
		}
		if len(msgs) > 0 {
			next = max(next, msgs[len(msgs)-1].Offset+1)
		}
		if next > offset {
			select {
			case ch <- fetched{msgs: msgs, next: next}:
			case <-ctx.Done():
				return
			}
			offset = next
		}
		switch {
		case err == nil:
			backoff = 0
		case ctx.Err() != nil:
			return
		case errors.Is(err, kafka.OffsetOutOfRange):
			p.log.Warn("kafka offset out of range: consuming from the earliest offset", "offset", offset)
			offset = kafka.FirstOffset
		default:
			fail("fetch kafka partition", err)
		}
	}
}

// caughtUp ends the partition's catching up (KafkaConsumer.CatchingUp)
// once its next offset reaches the group's committed offset, or end, the
// end of its log as a fetch reported it (-1 if unknown): a committed
// offset past the end of the log is not one this log will reach. (An
// empty log, whose end 0 cannot be told from a fetch cut short, catches up
// with its first message.)
func (p *partitionConsumer) caughtUp(end int64) {
	mark := p.state.behind.Load()
	if mark < 0 {
		return
	}
	next, ok := p.c.Position(p.tp)
	if !ok || (next < mark && (end < 0 || next < end)) {
		return
	}
	if p.state.behind.CompareAndSwap(mark, -1) {
		p.log.Info("kafka partition caught up: at the group's committed offset, or at the end of its log", "offset", next, "committed", mark)
	}
}

// dial connects to the leader of the partition through the first broker
// that answers.
func (p *partitionConsumer) dial(ctx context.Context) (*kafka.Conn, error) {
	d := p.c.Dialer
	if d == nil {
		d = kafka.DefaultDialer
	}
	var errs []error
	for _, b := range p.c.Brokers {
		conn, err := d.DialLeader(ctx, "tcp", b, p.tp.Topic, p.tp.Partition)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("broker %s: %w", b, err))
	}
	return nil, errors.Join(errs...)
}

// deliver hands the messages of f to the sink in units, each under the gate
// and recorded in the next offset of the partition when it is done: a unit
// is one call of Accept with the values of consecutive messages of one
// stream (up to batchLen values, unless one message has more), together
// with the rejected messages among them. deliver stops between two units
// when pctx ends.
func (p *partitionConsumer) deliver(ctx, pctx context.Context, f fetched) error {
	msgs := f.msgs
	for {
		if err := p.c.gate.enter(pctx); err != nil {
			return err
		}
		if p.hints.due() {
			p.hintAhead(msgs)
		}
		n, err := p.unit(ctx, msgs)
		if err == nil {
			next := f.next
			if n < len(msgs) {
				next = msgs[n].Offset
			}
			p.c.setNext(p.tp, next)
			p.caughtUp(-1)
		}
		p.c.gate.exit()
		if err != nil {
			return err
		}
		msgs = msgs[n:]
		if len(msgs) == 0 {
			return nil
		}
		if err := pctx.Err(); err != nil {
			return err
		}
	}
}

// hintAhead tells the sink the streams of the units of msgs from the
// first on (see hinter): their messages' keys, up to prefetchFrames of
// them, counting a unit for each change of key. A message without a key
// goes to the topic's stream, which is not told (hinter.add).
func (p *partitionConsumer) hintAhead(msgs []kafka.Message) {
	units := 0
	var last []byte
	for i := range msgs {
		key := msgs[i].Key
		if i > 0 && bytes.Equal(key, last) {
			continue
		}
		if units == prefetchFrames {
			break
		}
		units++
		last = key
		p.hints.add(key)
	}
	p.hints.tell(units)
}

// unit delivers the first unit of msgs and returns the number of messages
// it holds.
func (p *partitionConsumer) unit(ctx context.Context, msgs []kafka.Message) (int, error) {
	c := p.c
	defer p.countRejects()
	p.vals = p.vals[:0]
	p.list.Reset()
	p.px, p.py = p.px[:0], p.py[:0]
	stream := ""
	var at time.Time // the unit's arrival time, with MessageTime
	i := 0
	for ; i < len(msgs); i++ {
		m := &msgs[i]
		name, nameOK := p.streamName(m)
		format, formatOK := messageFormat(m, p.format)
		if size := len(p.vals) + p.list.Len() + len(p.px); nameOK && formatOK && size > 0 &&
			(name != stream || (format == FormatItems) != (p.list.Len() > 0) || format.isPairs() != (len(p.px) > 0) ||
				size+maxValues(format, len(m.Value)) > batchLen ||
				(c.MessageTime && !m.Time.Equal(at))) {
			break // m starts the next unit
		}
		c.stats.messages.Add(1)
		c.stats.bytes.Add(uint64(len(m.Key) + len(m.Value)))
		switch {
		case !nameOK:
			p.reject("", feed.ReasonBadStreamName, 1)
			continue
		case !formatOK:
			p.reject(name, feed.ReasonUnknownFormat, 1)
			continue
		case format == FormatItems:
			n := p.list.Len()
			if appendItemLines(&p.list, m.Value, func(r feed.Reason) { p.reject(name, r, 1) }) == 0 {
				p.reject(name, feed.ReasonMalformed, 1)
			}
			if p.list.Len() > n {
				stream, at = name, m.Time
			}
			continue
		case format.isPairs():
			if p.pairs(name, m, format) {
				stream, at = name, m.Time
			}
			continue
		}
		n := len(p.vals)
		var bad, nan, inf int
		switch format {
		case FormatBinary64, FormatBinary32:
			size := 8
			if format == FormatBinary32 {
				size = 4
			}
			if len(m.Value) == 0 || len(m.Value)%size != 0 {
				bad = 1 // a binary message cut short or without values
			} else {
				if size == 8 {
					p.vals, nan, inf = DecodeFloat64(p.vals, m.Value)
				} else {
					p.vals, _, nan, inf = DecodeFloat32(p.vals, m.Value)
				}
			}
		default:
			var tokens int
			p.vals, tokens, bad = appendText(p.vals, m.Value)
			if tokens == 0 {
				bad = 1
			}
			var kept []float64
			kept, nan, inf = feed.CleanValues(p.vals[n:])
			p.vals = p.vals[:n+len(kept)]
		}
		p.rejectMessage(name, nan, inf, bad)
		if len(p.vals) > n {
			stream, at = name, m.Time
		}
	}
	if !c.MessageTime {
		at = time.Time{}
	}
	b := &feed.Batch{Stream: stream, Source: p.tp, At: at}
	switch {
	case p.list.Len() > 0:
		b.Items = &p.list
	case len(p.px) > 0:
		b.Pairs = feed.Pairs{X: p.px, Y: p.py}
	default:
		b.Values = p.vals
	}
	n := b.Len()
	if n == 0 {
		return i, nil
	}
	accepted, err := p.c.Sink.Accept(ctx, b)
	ok, err := settle(err, stream, n, p.reject)
	if err != nil {
		return 0, fmt.Errorf("accept %d values or items of stream %q from kafka partition %s: %w", n, stream, p.tp, err)
	}
	if ok {
		c.stats.values.Add(uint64(accepted))
		c.stats.rejected.Add(uint64(n - accepted)) // rejected by the sink
	}
	if cap(p.vals) > 4*batchLen {
		p.vals = nil // do not keep a huge message's memory
	}
	if cap(p.px) > 4*batchLen {
		p.px, p.py = nil, nil
	}
	if p.list.Size() > 4*batchItemBytes {
		p.list = items.Batch{} // do not keep a huge message's memory
	}
	return i, nil
}

// streamName returns the stream of m. ok is false if its key is not a valid
// stream name.
func (p *partitionConsumer) streamName(m *kafka.Message) (name string, ok bool) {
	if p.c.StreamFromTopic || len(m.Key) == 0 {
		return p.tp.Topic, feed.IsValidName(p.tp.Topic)
	}
	if !feed.IsValidName(m.Key) {
		return "", false
	}
	return p.names.intern(m.Key), true
}
