package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
)

// Defaults of a KafkaConsumer.
const (
	// DefaultKafkaSessionTimeout is the default group session timeout: a
	// member that sends no heartbeat for this long is dropped from the
	// group. Brokers refuse less than 6s by default.
	DefaultKafkaSessionTimeout = 10 * time.Second

	// DefaultKafkaFetchMaxBytes is the default most bytes one fetch of a
	// partition returns.
	DefaultKafkaFetchMaxBytes = 8 << 20

	// DefaultKafkaFetchMaxWait is the default longest time the broker
	// holds a fetch while a partition has no new message.
	DefaultKafkaFetchMaxWait = 500 * time.Millisecond

	// kafkaShutdownTimeout bounds Revoked and the offset commit when Run's
	// context has ended.
	kafkaShutdownTimeout = 10 * time.Second

	// kafkaMaxBackoff is the longest wait before a failed fetch is tried
	// again.
	kafkaMaxBackoff = 5 * time.Second
)

// A KafkaConsumer consumes Kafka topics as a member of a consumer group and
// hands the values of their messages to its Sink. Several consumers (in one
// process or in several daemons) with the same Group share the partitions of
// the topics; each partition is consumed by one member at a time, in offset
// order.
//
// # Messages
//
// The stream of a message is its key, or its topic when the key is empty or
// StreamFromTopic is set. Its value is in the format that its
// ContentTypeHeader names, or else in the format Formats gives its topic
// (FormatText by default):
//
//   - FormatText: decimal numbers separated by blanks, commas or newlines,
//     such as "12.5 13.1" or "1,2,3\n4".
//   - FormatBinary64 and FormatBinary32: little-endian IEEE 754 numbers,
//     8 or 4 bytes each, and nothing else.
//   - FormatItems: items for an item stream, one a line. An empty line is
//     an empty item, rejected as "empty_item"; items too long or not UTF-8
//     count "item_too_long" and "bad_utf8"; items for a value stream (and
//     values for an item stream) count "wrong_kind" each.
//   - FormatPairsText and FormatPairs64: pairs for a pair stream, as
//     tokens x:y (as in the TCP line protocol) or as little-endian
//     binary64 x then y, 16 bytes a pair. A pair with a NaN or ±Inf counts
//     one "nan" or "inf"; pairs for a value or item stream (and values or
//     items for a pair stream) count "wrong_kind" each.
//
// The values of a message are handed to the Sink in one call of Accept,
// possibly together with those of neighbouring messages of the same stream
// and partition (and, with MessageTime, the same timestamp), after
// feed.CleanValues, in a feed.Batch whose Source is the partition: the Sink
// keeps each partition's values apart. A bad message is counted with
// Sink.Reject and skipped; it never stops or stalls its partition:
//
//   - A key that is not a valid stream name (see feed.ValidName) counts
//     one "bad_stream_name" under the stream "".
//   - A content-type header that names no known format counts one
//     "unknown_format" under the message's stream.
//   - A binary value whose length is not a multiple of the value size, and
//     a value without any number (an empty value, or a text of separators
//     only), count one "malformed" under the message's stream; none of its
//     values is used.
//   - In a text value, each token that is not a number counts one
//     "malformed"; the other values of the message are used.
//   - NaN and ±Inf count one "nan" or "inf" each, and the values that
//     Accept refuses with feed.ErrStreamLimit or feed.ErrMemoryBudget one
//     "stream_limit" or "memory_budget" each.
//
// # Offsets
//
// At the start of each generation of the group, a partition assigned to the
// consumer starts at the largest of: the offset Resume returns for it, the
// group's committed offset, and the offset where this consumer left off if
// it consumed the partition in an earlier generation. If there is none of
// these, it starts at the earliest offset. With Assigned set, it starts
// where Assigned says instead. A partition whose start offset is
// out of range (the messages were deleted, or the topic was recreated) is
// consumed from its earliest offset, with a warning. A partition that
// Assigned starts behind the group's committed offset (the state it
// resumes is older than what a member that died had consumed and
// committed) is catching up until its next offset reaches that offset, or
// the end of its log (CatchingUp).
//
// The consumer records the next offset of each partition as it delivers
// messages, one Accept (or one rejected message) at a time. Barrier reports
// these offsets at a moment when no Accept is in progress; Revoked receives
// them at the end of each generation, and they are then committed to the
// group. The consumer commits nothing else by itself: call Commit once a
// checkpoint covers the offsets.
//
// # Fetching
//
// Each assigned partition is read by its own connection to its leader with
// fetches of up to FetchMaxBytes, and delivered by its own goroutine while
// the next fetch is on its way; Accept is called concurrently for different
// partitions.
//
// Set the exported fields, then call Run; they must not change afterwards.
type KafkaConsumer struct {
	// Brokers are the "host:port" addresses of the bootstrap brokers. At
	// least one is required.
	Brokers []string

	// Topics are the topics to consume. At least one is required.
	Topics []string

	// Group is the consumer group. It is required.
	Group string

	// Formats gives the format of the messages of a topic that have no
	// ContentTypeHeader. A topic not in Formats is FormatText.
	Formats map[string]Format

	// StreamFromTopic makes the topic the stream name of every message,
	// whatever its key.
	StreamFromTopic bool

	// MessageTime makes each message's timestamp the arrival time of its
	// values, for the streams' time windows, instead of the daemon's clock
	// when they are accepted. Timestamps that go back within a stream are
	// taken as the newest so far (a stream's arrival times never go back).
	MessageTime bool

	// Sink receives the values and the rejects. Its methods are called
	// concurrently, one goroutine for each assigned partition. It must be
	// set.
	Sink Sink

	// Logger receives generation changes and errors. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Resume, if not nil, returns the offset at which to resume a
	// partition that has just been assigned, typically the offset that
	// the last checkpoint of the daemon holds for it, and ok false if there
	// is none. It is called at the start of each generation, once for each
	// assigned partition.
	Resume func(topic string, partition int) (offset int64, ok bool)

	// Revoked, if not nil, is called at the end of each generation in
	// which the consumer was assigned partitions, after delivery to the
	// Sink has stopped and before the partitions are given up: when the
	// group rebalances, when the connection to the group is lost, and when
	// Run's context ends. offsets holds the next offset of each partition
	// of the generation whose start offset was known. If Revoked returns
	// nil, the consumer commits offsets to the group; if it returns an
	// error, the error is logged and nothing is committed. The rebalance
	// must wait for Revoked, so it should be quick, well within
	// RebalanceTimeout. When Run's context has ended, ctx is a context that
	// ends 10 seconds later.
	Revoked func(ctx context.Context, offsets map[feed.Source]int64) error

	// Assigned, if not nil, is called at the start of each generation with
	// its id and the partitions assigned to the consumer, sorted, before any of them is
	// fetched, and returns the offset at which each starts: for a sink
	// whose state of a partition must match the offset exactly, this
	// replaces the rule of the Offsets section.
	// A partition it leaves out, or gives a negative offset, starts at its
	// earliest offset. Barrier reports no offset for the partitions until
	// Assigned returns, and then the ones it returned. If Assigned returns
	// an error, the error is logged (unless ctx ended) and the consumer
	// consumes nothing until the generation ends. ctx ends with the
	// generation.
	Assigned func(ctx context.Context, generation int, partitions []feed.Source) (map[feed.Source]int64, error)

	// Dialer, if not nil, replaces kafka-go's default dialer, for example
	// to use TLS or SASL.
	Dialer *kafka.Dialer

	// SessionTimeout is the group session timeout; zero means
	// DefaultKafkaSessionTimeout. Brokers require at least 6s by default.
	SessionTimeout time.Duration

	// HeartbeatInterval is the time between the heartbeats that tell the
	// group the consumer is alive and tell the consumer the group is
	// rebalancing; zero means a third of SessionTimeout.
	HeartbeatInterval time.Duration

	// RebalanceTimeout is how long the group waits for its members to
	// rejoin when it rebalances; zero means 30s.
	RebalanceTimeout time.Duration

	// JoinGroupBackoff is the wait before joining the group again after a
	// failure; zero means 5s.
	JoinGroupBackoff time.Duration

	// FetchMaxBytes is the most bytes one fetch of a partition returns;
	// zero means DefaultKafkaFetchMaxBytes. A larger message is still
	// fetched whole.
	FetchMaxBytes int

	// FetchMaxWait is the longest time the broker holds a fetch of a
	// partition without new messages; zero means DefaultKafkaFetchMaxWait.
	FetchMaxWait time.Duration

	gate gate // between deliveries and Barrier

	mu       sync.Mutex
	running  bool
	gen      *kafka.Generation               // the current generation, nil between generations
	assigned map[feed.Source]*partitionState // the partitions of gen
	next     map[feed.Source]int64           // next offset of every partition c has consumed

	commitMu sync.Mutex // serialises commits

	stats struct {
		messages, values, rejected, bytes atomic.Uint64
	}
}

// KafkaStats are counters of a KafkaConsumer since it was created.
type KafkaStats struct {
	Messages   uint64 // messages read, rejected ones included
	Values     uint64 // values accepted by the sink
	Rejected   uint64 // values and messages rejected (the sum of Reject's n)
	Bytes      uint64 // bytes of message keys and values read
	Partitions int    // partitions assigned now
	Generation int    // the group generation now, 0 between generations

	// Lag is the number of messages the assigned partitions hold beyond
	// the next offsets, as of the last fetch of each; partitions not yet
	// fetched count 0.
	Lag int64
}

// partitionState is the state of an assigned partition that Stats reads.
type partitionState struct {
	hwm     atomic.Int64 // high watermark of the last fetch, -1 before one
	started atomic.Bool  // the start offset is known and in next
	// behind is the group's committed offset when the partition started
	// behind it, until its next offset reaches it (see CatchingUp); -1
	// otherwise.
	behind atomic.Int64
}

// Errors of a KafkaConsumer.
var (
	// ErrKafkaRunning is returned by Run when the consumer is already
	// running.
	ErrKafkaRunning = errors.New("kafka consumer already running")
)

// Run joins the group and consumes the partitions assigned to the consumer
// until ctx ends, through as many generations of the group as it takes.
// When ctx ends, Run stops delivery, calls Revoked and commits (see
// Revoked), leaves the group and returns nil. It returns an error at once if
// the fields are not valid, and when Sink.Accept fails with an error other
// than feed.ErrStreamLimit, feed.ErrMemoryBudget or that of ctx (after the end of the generation as
// above). Errors of the brokers and the network are logged and retried.
func (c *KafkaConsumer) Run(ctx context.Context) error {
	if err := c.check(); err != nil {
		return fmt.Errorf("run kafka consumer: %w", err)
	}
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return ErrKafkaRunning
	}
	c.running = true
	if c.next == nil {
		c.next = make(map[feed.Source]int64)
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
	}()

	log := c.logger()
	cg, err := kafka.NewConsumerGroup(c.groupConfig(log))
	if err != nil {
		return fmt.Errorf("run kafka consumer: %w", err)
	}
	defer cg.Close()
	// Closing the group as soon as ctx ends makes kafka-go leave the group
	// once the generation's function returns (after Revoked and the
	// commit), instead of joining it again first.
	context.AfterFunc(ctx, func() { cg.Close() })
	log.Info("kafka consumer joining group", "group", c.Group, "topics", c.Topics, "brokers", c.Brokers)
	for {
		gen, err := cg.Next(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, kafka.RebalanceInProgress) {
			log.Debug("join kafka consumer group: rebalance in progress", "group", c.Group)
			continue
		}
		if err != nil {
			// kafka-go waits before it tries again.
			log.Warn("join kafka consumer group", "group", c.Group, "err", err)
			continue
		}
		done := make(chan error, 1)
		gen.Start(func(gctx context.Context) { done <- c.consume(ctx, gctx, gen) })
		if err := <-done; err != nil {
			return fmt.Errorf("run kafka consumer: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// check reports whether c's fields are valid.
func (c *KafkaConsumer) check() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("no brokers")
	case len(c.Topics) == 0:
		return errors.New("no topics")
	case c.Group == "":
		return errors.New("no group")
	case c.Sink == nil:
		return errors.New("no sink")
	case c.FetchMaxBytes < 0:
		return fmt.Errorf("fetch max bytes %d is negative", c.FetchMaxBytes)
	}
	for topic, f := range c.Formats {
		if !f.valid() {
			return fmt.Errorf("topic %q: unknown format %d", topic, f)
		}
	}
	return nil
}

func (c *KafkaConsumer) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// groupConfig returns the configuration of c's consumer group.
func (c *KafkaConsumer) groupConfig(log *slog.Logger) kafka.ConsumerGroupConfig {
	session := c.SessionTimeout
	if session == 0 {
		session = DefaultKafkaSessionTimeout
	}
	heartbeat := c.HeartbeatInterval
	if heartbeat == 0 {
		heartbeat = session / 3
	}
	return kafka.ConsumerGroupConfig{
		ID:                c.Group,
		Brokers:           c.Brokers,
		Dialer:            c.Dialer,
		Topics:            c.Topics,
		HeartbeatInterval: heartbeat,
		SessionTimeout:    session,
		RebalanceTimeout:  c.RebalanceTimeout,
		JoinGroupBackoff:  c.JoinGroupBackoff,
		StartOffset:       kafka.FirstOffset,
		Logger: kafka.LoggerFunc(func(format string, args ...any) {
			log.Debug("kafka group: "+fmt.Sprintf(format, args...), "group", c.Group)
		}),
		ErrorLogger: kafka.LoggerFunc(func(format string, args ...any) {
			log.Warn("kafka group: "+fmt.Sprintf(format, args...), "group", c.Group)
		}),
	}
}

// consume consumes the partitions of gen until ctx or gctx, the context of
// the generation, ends, or delivery fails; then it revokes them.
func (c *KafkaConsumer) consume(ctx, gctx context.Context, gen *kafka.Generation) error {
	log := c.logger().With("group", c.Group, "generation", gen.ID)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(gctx, cancel)
	defer stop()

	committed := make(map[feed.Source]int64)
	for topic, parts := range gen.Assignments {
		for _, p := range parts {
			committed[feed.Source{Topic: topic, Partition: p.ID}] = p.Offset
		}
	}
	var starts map[feed.Source]int64
	if c.Assigned != nil {
		var err error
		if starts, err = c.assign(pctx, int(gen.ID), committed); err != nil {
			if pctx.Err() == nil {
				log.Error("kafka partitions assigned: not consuming them in this generation", "err", err)
			}
			<-pctx.Done()
			return nil
		}
	} else {
		starts = make(map[feed.Source]int64, len(committed))
		for tp, off := range committed {
			starts[tp] = c.startOffset(tp, off)
		}
	}
	assigned := make(map[feed.Source]*partitionState, len(starts))
	for tp, start := range starts {
		ps := new(partitionState)
		ps.hwm.Store(-1)
		ps.started.Store(c.Assigned != nil && start >= 0)
		ps.behind.Store(-1)
		if off := committed[tp]; off >= 0 && start < off {
			ps.behind.Store(off)
			log.Info("kafka partition starts behind the group's committed offset: catching up", "partition", tp.String(), "start", start, "committed", off)
		}
		assigned[tp] = ps
	}
	c.mu.Lock()
	c.gen, c.assigned = gen, assigned
	c.mu.Unlock()
	log.Info("kafka generation started", "member", gen.MemberID, "partitions", len(starts))

	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		fatal   error
	)
	for tp, start := range starts {
		wg.Go(func() {
			pc := partitionConsumer{c: c, tp: tp, state: assigned[tp], log: log.With("partition", tp.String())}
			if err := pc.run(ctx, pctx, start); err != nil {
				errOnce.Do(func() { fatal = err })
				cancel()
			}
		})
	}
	if len(starts) == 0 {
		<-pctx.Done()
	}
	wg.Wait()

	// Delivery has stopped: revoke the partitions.
	c.mu.Lock()
	c.gen, c.assigned = nil, nil
	offsets := make(map[feed.Source]int64, len(starts))
	for tp, ps := range assigned {
		if ps.started.Load() {
			offsets[tp] = c.next[tp]
		}
	}
	c.mu.Unlock()
	c.revoke(ctx, log, gen, offsets)
	log.Info("kafka generation ended", "partitions", len(starts))
	return fatal
}

// assign calls Assigned with the partitions of a new generation (the keys
// of committed) and returns where each starts: the offsets it returned,
// which become the partitions' next offsets, or kafka.FirstOffset.
func (c *KafkaConsumer) assign(ctx context.Context, generation int, committed map[feed.Source]int64) (map[feed.Source]int64, error) {
	tps := slices.SortedFunc(maps.Keys(committed), feed.Source.Compare)
	// Until Assigned says where they start, Barrier reports no offset for
	// the partitions: the one where c left them may no longer match the
	// sink's state of them.
	c.mu.Lock()
	for _, tp := range tps {
		delete(c.next, tp)
	}
	c.mu.Unlock()
	offsets, err := c.Assigned(ctx, generation, slices.Clone(tps))
	if err != nil {
		return nil, err
	}
	starts := make(map[feed.Source]int64, len(tps))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tp := range tps {
		off, ok := offsets[tp]
		if !ok || off < 0 {
			starts[tp] = kafka.FirstOffset
			continue
		}
		starts[tp] = off
		c.next[tp] = off
	}
	return starts, nil
}

// Assignment returns the group generation the consumer is in and the
// partitions assigned to it, sorted, once it knows where each starts
// (after Assigned returns); generation 0 and no partitions between
// generations.
func (c *KafkaConsumer) Assignment() (generation int, partitions []feed.Source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		return 0, nil
	}
	return int(c.gen.ID), slices.SortedFunc(maps.Keys(c.assigned), feed.Source.Compare)
}

// Position returns the next offset of tp, as Barrier reports it, without
// waiting for the deliveries in progress; ok is false if there is none.
func (c *KafkaConsumer) Position(tp feed.Source) (offset int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	offset, ok = c.next[tp]
	return offset, ok
}

// CatchingUp reports whether tp, assigned to c in its current generation,
// started behind the offset the group had committed for it (Assigned
// returned an older offset, or none) and has not reached it yet; mark is
// that committed offset. Values before the group's committed offset were
// consumed and checkpointed by a member of the group, so until the
// partition's next offset reaches it, its values are fewer than the group
// has already counted. A partition also stops catching up when it reaches
// the end of its log, for a committed offset past the end (of a topic
// deleted and created again).
func (c *KafkaConsumer) CatchingUp(tp feed.Source) (mark int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.assigned[tp]
	if ps == nil {
		return 0, false
	}
	mark = ps.behind.Load()
	return mark, mark >= 0
}

// Partitions returns every partition of the consumer's topics, sorted, as
// the first broker that answers lists them.
func (c *KafkaConsumer) Partitions(ctx context.Context) ([]feed.Source, error) {
	d := c.Dialer
	if d == nil {
		d = kafka.DefaultDialer
	}
	var errs []error
	for _, b := range c.Brokers {
		conn, err := d.DialContext(ctx, "tcp", b)
		if err != nil {
			errs = append(errs, fmt.Errorf("broker %s: %w", b, err))
			continue
		}
		if dl, ok := ctx.Deadline(); ok {
			conn.SetDeadline(dl)
		}
		parts, err := conn.ReadPartitions(c.Topics...)
		conn.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("broker %s: %w", b, err))
			continue
		}
		out := make([]feed.Source, 0, len(parts))
		for _, p := range parts {
			out = append(out, feed.Source{Topic: p.Topic, Partition: p.ID})
		}
		slices.SortFunc(out, feed.Source.Compare)
		return out, nil
	}
	return nil, fmt.Errorf("read kafka partitions: %w", errors.Join(errs...))
}

// startOffset returns where to start tp in a new generation, given the
// group's committed offset (kafka.FirstOffset if there is none): the
// largest of the committed offset, Resume's offset and the offset where c
// left off, or kafka.FirstOffset if none of them is known.
func (c *KafkaConsumer) startOffset(tp feed.Source, committed int64) int64 {
	start := committed
	if c.Resume != nil {
		if off, ok := c.Resume(tp.Topic, tp.Partition); ok && off >= 0 {
			start = max(start, off)
		}
	}
	c.mu.Lock()
	if off, ok := c.next[tp]; ok {
		start = max(start, off)
	}
	c.mu.Unlock()
	if start < 0 {
		return kafka.FirstOffset
	}
	return start
}

// revoke calls Revoked with offsets, then commits them if it succeeds.
func (c *KafkaConsumer) revoke(ctx context.Context, log *slog.Logger, gen *kafka.Generation, offsets map[feed.Source]int64) {
	if len(offsets) == 0 {
		return
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), kafkaShutdownTimeout)
		defer cancel()
	}
	if c.Revoked != nil {
		if err := c.Revoked(ctx, maps.Clone(offsets)); err != nil {
			log.Error("kafka partitions revoked: offsets not committed", "err", err)
			return
		}
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if err := commitOffsets(ctx, gen, offsets); err != nil {
		log.Warn("commit kafka offsets at the end of the generation", "err", err)
		return
	}
	log.Debug("kafka offsets committed", "offsets", len(offsets))
}

// Barrier waits until no Accept of c is in progress and keeps new ones from
// starting, calls fn with the next offset of every partition that c has
// consumed (one past the last message delivered, or where the partition
// starts if nothing has been delivered from it yet), then lets
// delivery go on. What the Sink has accepted when fn is called is exactly
// the messages before these offsets, so a snapshot of the Sink taken in fn
// and the offsets are a consistent cut.
//
// Partitions that the group has since given to another member are included,
// with the offset at which c stopped; [KafkaConsumer.Commit] leaves them
// out. Barrier returns ctx's error if ctx ends while it waits (fn is not
// called), and otherwise fn's error. Barriers run one at a time.
func (c *KafkaConsumer) Barrier(ctx context.Context, fn func(offsets map[feed.Source]int64) error) error {
	if err := c.gate.pause(ctx); err != nil {
		return fmt.Errorf("kafka barrier: %w", err)
	}
	defer c.gate.resume()
	c.mu.Lock()
	offsets := maps.Clone(c.next)
	c.mu.Unlock()
	if offsets == nil {
		offsets = make(map[feed.Source]int64)
	}
	return fn(offsets)
}

// Commit commits offsets to the group, for the partitions among them that
// are assigned to c now; the others belong to another member or to none,
// and are left out. It returns nil if there is nothing to commit. A
// daemon calls Commit once a checkpoint that covers the offsets is
// durable, so that the group's offsets (and the lag tools report) follow
// its progress. If ctx ends first, Commit returns ctx's error, and the
// commit may still happen.
func (c *KafkaConsumer) Commit(ctx context.Context, offsets map[feed.Source]int64) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	gen := c.gen
	mine := make(map[feed.Source]int64, len(offsets))
	for tp, off := range offsets {
		if _, ok := c.assigned[tp]; ok && off >= 0 {
			mine[tp] = off
		}
	}
	c.mu.Unlock()
	if gen == nil || len(mine) == 0 {
		return nil
	}
	if err := commitOffsets(ctx, gen, mine); err != nil {
		return fmt.Errorf("commit kafka offsets: %w", err)
	}
	return nil
}

// commitOffsets commits offsets in generation gen, or returns ctx's error
// if ctx ends first.
func commitOffsets(ctx context.Context, gen *kafka.Generation, offsets map[feed.Source]int64) error {
	byTopic := make(map[string]map[int]int64)
	for tp, off := range offsets {
		if byTopic[tp.Topic] == nil {
			byTopic[tp.Topic] = make(map[int]int64)
		}
		byTopic[tp.Topic][tp.Partition] = off
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// CommitOffsets takes no context; it is bounded by the group's
	// network timeout.
	done := make(chan error, 1)
	go func() { done <- gen.CommitOffsets(byTopic) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the counters of c. They are read one by one, not as one
// snapshot.
func (c *KafkaConsumer) Stats() KafkaStats {
	s := KafkaStats{
		Messages: c.stats.messages.Load(),
		Values:   c.stats.values.Load(),
		Rejected: c.stats.rejected.Load(),
		Bytes:    c.stats.bytes.Load(),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != nil {
		s.Generation = int(c.gen.ID)
	}
	s.Partitions = len(c.assigned)
	for tp, ps := range c.assigned {
		next, ok := c.next[tp]
		if hwm := ps.hwm.Load(); ok && hwm > next {
			s.Lag += hwm - next
		}
	}
	return s
}

// setNext records off as the next offset of tp.
func (c *KafkaConsumer) setNext(tp feed.Source, off int64) {
	c.mu.Lock()
	c.next[tp] = off
	c.mu.Unlock()
}

// reject counts n rejects with the sink and in the consumer's stats, when
// the unit being delivered ends (countRejects): after its values or items
// are accepted, so that the stream they create counts the bad parts of its
// first messages, which counted first would find no stream and belong to
// none.
func (p *partitionConsumer) reject(stream string, reason feed.Reason, n int) {
	if k := len(p.rejects) - 1; k >= 0 && p.rejects[k].stream == stream && p.rejects[k].reason == reason {
		p.rejects[k].n += n
		return
	}
	p.rejects = append(p.rejects, unitReject{stream, reason, n})
}

// rejectMessage counts the rejects of a message of stream, as reject does:
// nan values that are NaN, inf that are ±Inf, and bad malformed parts.
func (p *partitionConsumer) rejectMessage(stream string, nan, inf, bad int) {
	if nan > 0 {
		p.reject(stream, feed.ReasonNaN, nan)
	}
	if inf > 0 {
		p.reject(stream, feed.ReasonInf, inf)
	}
	if bad > 0 {
		p.reject(stream, feed.ReasonMalformed, bad)
	}
}

// countRejects counts the rejects of the unit delivered.
func (p *partitionConsumer) countRejects() {
	for _, r := range p.rejects {
		p.c.stats.rejected.Add(uint64(r.n))
		p.c.Sink.Reject(r.stream, p.tp, r.reason, r.n)
	}
	p.rejects = p.rejects[:0]
}

// A gate lets deliveries run concurrently with each other but not with a
// barrier: it is a readers–writer lock whose waits end with a context.
type gate struct {
	mu      sync.Mutex
	active  int           // deliveries in progress
	paused  chan struct{} // non-nil while a barrier holds or waits; closed when it ends
	idle    chan struct{} // non-nil while a barrier waits for active to reach 0
	barrier chan struct{} // one slot: the barrier that holds or waits
}

// enter waits until no barrier holds or waits, and starts a delivery.
func (g *gate) enter(ctx context.Context) error {
	g.mu.Lock()
	for g.paused != nil {
		ch := g.paused
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		g.mu.Lock()
	}
	g.active++
	g.mu.Unlock()
	return nil
}

// exit ends a delivery.
func (g *gate) exit() {
	g.mu.Lock()
	g.active--
	if g.active == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
	g.mu.Unlock()
}

// pause waits for the other barriers, stops new deliveries, and waits until
// the deliveries in progress end. If ctx ends first, it undoes all that and
// returns ctx's error.
func (g *gate) pause(ctx context.Context) error {
	g.mu.Lock()
	if g.barrier == nil {
		g.barrier = make(chan struct{}, 1)
	}
	sem := g.barrier
	g.mu.Unlock()
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	g.paused = make(chan struct{})
	var idle chan struct{}
	if g.active > 0 {
		g.idle = make(chan struct{})
		idle = g.idle
	}
	g.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			g.resume()
			return ctx.Err()
		}
	}
	return nil
}

// resume lets deliveries go on after pause.
func (g *gate) resume() {
	g.mu.Lock()
	close(g.paused)
	g.paused, g.idle = nil, nil
	sem := g.barrier
	g.mu.Unlock()
	<-sem
}
