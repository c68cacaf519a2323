package ingest

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/feed"
	"streamd/items"
)

// The tests of KafkaConsumer run against an in-process kfake cluster, or
// against the cluster whose brokers KAFKA_BROKERS lists (comma-separated),
// which must allow creating topics. Each test creates its own topics and
// groups, so that they start empty.

// testPartitions is the number of partitions of the test topics.
const testPartitions = 4

// testBrokers returns the brokers of the cluster for t.
func testBrokers(t testing.TB) []string {
	t.Helper()
	if env := os.Getenv("KAFKA_BROKERS"); env != "" {
		return strings.Split(env, ",")
	}
	c, err := kfake.NewCluster(kfake.Ports(0), kfake.SeedTopics(testPartitions, "t"))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// createTopic creates a topic of testPartitions partitions with a name
// unique to t and suffix, and returns its name.
func createTopic(t testing.TB, brokers []string, suffix string) string {
	t.Helper()
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	topic := fmt.Sprintf("streamd-%s-%s-%d", name, suffix, time.Now().UnixNano())
	conn, err := kafka.Dial("tcp", brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatal(err)
	}
	cc, err := kafka.Dial("tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if err := cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: testPartitions, ReplicationFactor: 1}); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	return topic
}

// partitionHeader is a header of test messages that names the partition the
// test balancer writes them to.
const partitionHeader = "test-partition"

// produce writes msgs to topic, each to the partition its partitionHeader
// names, in order, and waits until all replicas have them.
func produce(t testing.TB, brokers []string, topic string, msgs []kafka.Message) {
	t.Helper()
	w := &kafka.Writer{
		Addr:  kafka.TCP(brokers...),
		Topic: topic,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, partitions ...int) int {
			for _, h := range m.Headers {
				if h.Key == partitionHeader {
					p, _ := strconv.Atoi(string(h.Value))
					return partitions[p%len(partitions)]
				}
			}
			return partitions[0]
		}),
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		BatchSize:    1000,
		BatchBytes:   1_000_000, // brokers refuse batches over 1 MiB by default
		// Not the shared default transport, whose metadata may predate
		// the topic.
		Transport: &kafka.Transport{},
	}
	defer w.Close()
	defer w.Transport.(*kafka.Transport).CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		msg := err.Error()
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		t.Fatalf("produce %d messages: %s", len(msgs), msg)
	}
}

// message returns a message for partition p.
func message(p int, key, value []byte, contentType string) kafka.Message {
	m := kafka.Message{
		Key:     key,
		Value:   value,
		Headers: []kafka.Header{{Key: partitionHeader, Value: []byte(strconv.Itoa(p))}},
	}
	if contentType != "" {
		m.Headers = append(m.Headers, kafka.Header{Key: ContentTypeHeader, Value: []byte(contentType)})
	}
	return m
}

// seqValues returns the n values of message k of partition p of a
// sequence: p·10⁷ + k·10³ + j for j < n ≤ 1000, so that each value says
// where it comes from.
func seqValues(p, k, n int) []float64 {
	vals := make([]float64, n)
	for j := range vals {
		vals[j] = float64(p*10_000_000 + k*1000 + j)
	}
	return vals
}

// seqOrigin returns the partition and message of a value of seqValues.
func seqOrigin(v float64) (p, k int) {
	return int(v) / 10_000_000, int(v) % 10_000_000 / 1000
}

// seqMessages returns messages k of [from, to) of each partition, of n
// binary64 values each, for streams "s<p>", and the values they hold.
func seqMessages(from, to, n int) ([]kafka.Message, result) {
	var msgs []kafka.Message
	var want result
	for p := range testPartitions {
		stream := fmt.Sprintf("s%d", p)
		for k := from; k < to; k++ {
			vals := seqValues(p, k, n)
			msgs = append(msgs, message(p, []byte(stream), f64s(vals...), ContentTypeBinary64))
			want.add(stream, vals...)
		}
	}
	return msgs, want
}

// multiset returns r with the values of each stream sorted, so that results
// compare as multisets.
func multiset(r result) result {
	for _, v := range r.values {
		slices.Sort(v)
	}
	return r
}

// union returns the values and rejects of rs together.
func union(rs ...result) result {
	var u result
	for _, r := range rs {
		for s, v := range r.values {
			u.add(s, v...)
		}
		for k, n := range r.rejects {
			u.reject(k.stream, k.reason, n)
		}
	}
	return u
}

// testConsumer returns a consumer of topics in group with short group
// timings, which logs to t's output.
func testConsumer(t testing.TB, brokers []string, group string, sink Sink, topics ...string) *KafkaConsumer {
	return &KafkaConsumer{
		Logger:            slog.New(slog.NewTextHandler(t.Output(), nil)),
		Brokers:           brokers,
		Topics:            topics,
		Group:             group,
		Sink:              sink,
		SessionTimeout:    6 * time.Second,
		HeartbeatInterval: 100 * time.Millisecond,
		RebalanceTimeout:  5 * time.Second,
		JoinGroupBackoff:  100 * time.Millisecond,
		FetchMaxWait:      100 * time.Millisecond,
	}
}

// start runs c until the returned function is called, which stops c and
// fails t if Run returns an error.
func start(t testing.TB, c *KafkaConsumer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("Run did not return 20s after its context ended")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitMultiset waits until the sinks together have received exactly want,
// as multisets of values, and fails t if that takes more than 20 s.
func waitMultiset(t *testing.T, want result, sinks ...*recordSink) {
	t.Helper()
	want = multiset(union(want))
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var got []result
		for _, s := range sinks {
			got = append(got, s.result())
		}
		d := diff(multiset(union(got...)), want)
		if d == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the values:\n%s", d)
		}
		<-tick.C
	}
}

func TestKafkaConsume(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "mixed")
	nan, inf := math.NaN(), math.Inf(1)

	var msgs []kafka.Message
	var want result
	add := func(p int, key, value, ct string, stream string, vals ...float64) {
		var k []byte
		if key != "" {
			k = []byte(key)
		}
		msgs = append(msgs, message(p, k, []byte(value), ct))
		if len(vals) > 0 {
			want.add(stream, vals...)
		}
	}
	// Good messages, in every format, with and without a key and header.
	add(0, "a", string(f64s(1.5, -2, 0)), ContentTypeBinary64, "a", 1.5, -2, 0)
	add(0, "a", string(f32s(0.25, 3)), ContentTypeBinary32, "a", 0.25, 3)
	add(1, "b", "4 5,6\n7\r\n8\t9", "", "b", 4, 5, 6, 7, 8, 9)
	add(1, "b", "10", "Text/Plain; charset=utf-8", "b", 10)
	add(2, "", "11 12", "", topic, 11, 12)
	add(2, "", string(f64s(13)), ContentTypeBinary64, topic, 13)
	add(3, "c", string(f64s(math.Copysign(0, -1))), ContentTypeBinary64, "c", 0)
	// Bad messages and bad values.
	add(0, "a", "14 x 15 1e400 NaN", ContentTypeText, "a", 14, 15)
	want.reject("a", feed.ReasonMalformed, 1)
	want.reject("a", feed.ReasonInf, 1)
	want.reject("a", feed.ReasonNaN, 1)
	add(1, "b", "1234567", ContentTypeBinary64, "b")
	want.reject("b", feed.ReasonMalformed, 1)
	add(1, "b", "123", ContentTypeBinary32, "b")
	want.reject("b", feed.ReasonMalformed, 1)
	add(2, "bad key", "16", "", "")
	want.reject("", feed.ReasonBadStreamName, 1)
	add(2, "d", "17", "application/json", "")
	want.reject("d", feed.ReasonUnknownFormat, 1)
	add(3, "c", "", "", "")
	add(3, "c", " ,\n", "", "")
	add(3, "c", "", ContentTypeBinary64, "")
	want.reject("c", feed.ReasonMalformed, 3)
	add(3, "c", string(f64s(18, nan, inf, -inf, 19)), ContentTypeBinary64, "c", 18, 19)
	want.reject("c", feed.ReasonNaN, 1)
	want.reject("c", feed.ReasonInf, 2)
	// Messages after the bad ones still arrive.
	for p := range testPartitions {
		add(p, "e", "20", "", "e", 20)
	}
	produce(t, brokers, topic, msgs)

	sink := newRecordSink()
	c := testConsumer(t, brokers, "g-consume", sink, topic)
	stop := start(t, c)
	waitMultiset(t, want, sink)
	st := c.Stats()
	if st.Messages != uint64(len(msgs)) || st.Values != 24 || st.Rejected != 13 || st.Partitions != testPartitions || st.Lag != 0 {
		t.Errorf("Stats() = %+v, want %d messages, 24 values, 13 rejected, %d partitions, lag 0", st, len(msgs), testPartitions)
	}
	stop()

	// StreamFromTopic puts every value under the topic, and a format
	// per topic applies to messages without a header.
	sink2 := newRecordSink()
	c2 := testConsumer(t, brokers, "g-consume-topic", sink2, topic)
	c2.StreamFromTopic = true
	c2.Formats = map[string]Format{topic: FormatBinary32}
	var want2 result
	for s, v := range want.values {
		if s == "b" || s == topic || s == "e" {
			continue // text without a header is binary32 now
		}
		want2.add(topic, v...)
	}
	want2.add(topic, 10, 13) // text with a header; binary64 with a header
	text32, _, _, _ := DecodeFloat32[float64](nil, []byte("4 5,6\n7\r\n8\t9"))
	want2.add(topic, text32...)
	start(t, c2)
	poll(t, "all messages", func() bool { return c2.Stats().Messages == uint64(len(msgs)) })
	got := multiset(sink2.result())
	got.rejects = nil
	if d := diff(got, multiset(want2)); d != "" {
		t.Errorf("StreamFromTopic with binary32 by default:\n%s", d)
	}
}

func TestKafkaGroupShare(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "share")
	msgs, want := seqMessages(0, 50, 100)
	produce(t, brokers, topic, msgs)

	sinks := []*recordSink{newRecordSink(), newRecordSink()}
	var cs []*KafkaConsumer
	for _, s := range sinks {
		c := testConsumer(t, brokers, "g-share", s, topic)
		c.FetchMaxBytes = 4 << 10 // small fetches, so that the first consumer is not done at once
		cs = append(cs, c)
		start(t, c)
	}
	poll(t, "both consumers to share the partitions", func() bool {
		return cs[0].Stats().Partitions == testPartitions/2 && cs[1].Stats().Partitions == testPartitions/2
	})
	msgs2, want2 := seqMessages(50, 100, 100)
	produce(t, brokers, topic, msgs2)
	waitMultiset(t, union(want, want2), sinks...)
	for i, c := range cs {
		if c.Stats().Values == 0 {
			t.Errorf("consumer %d delivered no value", i)
		}
	}
}

func TestKafkaBarrier(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "barrier")
	const perMsg = 100
	msgs, want := seqMessages(0, 200, perMsg)
	produce(t, brokers, topic, msgs)

	sink := &blockSink{recordSink: newRecordSink(), entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := testConsumer(t, brokers, "g-barrier", sink, topic)
	c.FetchMaxBytes = 16 << 10
	start(t, c)
	barriers := 0
	check := func(offsets map[feed.Source]int64) error {
		barriers++
		delivered := make(map[feed.Source]int64)
		for _, vals := range sink.result().values {
			for _, v := range vals {
				p, _ := seqOrigin(v)
				delivered[feed.Source{Topic: topic, Partition: p}]++
			}
		}
		for tp, n := range delivered {
			if n%perMsg != 0 || n/perMsg != offsets[tp] {
				t.Errorf("barrier %d: %d values of %s delivered, offset %d", barriers, n, tp, offsets[tp])
			}
		}
		return nil
	}
	for c.Stats().Values < uint64(len(msgs)*perMsg) {
		if err := c.Barrier(context.Background(), check); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Barrier(context.Background(), check); err != nil {
		t.Fatal(err)
	}
	waitMultiset(t, want, sink.recordSink)
	if barriers < 2 {
		t.Errorf("%d barriers", barriers)
	}

	// Barrier ends with its context while an Accept is in progress.
	sink.block.Store(true)
	produce(t, brokers, topic, msgs[:1])
	<-sink.entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.Barrier(ctx, func(map[feed.Source]int64) error { panic("fn called") })
	if err == nil {
		t.Errorf("Barrier with an Accept in progress returned nil after its context ended")
	}
	close(sink.release)
	poll(t, "the last message", func() bool { return c.Stats().Values == uint64((len(msgs)+1)*perMsg) })
	if err := c.Barrier(context.Background(), func(offsets map[feed.Source]int64) error {
		if got := offsets[feed.Source{Topic: topic, Partition: 0}]; got != 201 {
			t.Errorf("offset of partition 0 = %d, want 201", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// blockSink is a recordSink whose Accept, once block is set, signals entered
// and waits for release to be closed or ctx to end.
type blockSink struct {
	*recordSink
	block   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *blockSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if s.block.Load() {
		s.entered <- struct{}{}
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return s.recordSink.Accept(ctx, b)
}

func TestKafkaResumeCommit(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "resume")
	const n, perMsg = 20, 10
	msgs, _ := seqMessages(0, n, perMsg)
	produce(t, brokers, topic, msgs)
	from := func(k0 []int, to int) result {
		var r result
		for p := range testPartitions {
			for k := k0[p]; k < to; k++ {
				r.add(fmt.Sprintf("s%d", p), seqValues(p, k, perMsg)...)
			}
		}
		return r
	}
	all := func(off int64) map[feed.Source]int64 {
		m := make(map[feed.Source]int64)
		for p := range testPartitions {
			m[feed.Source{Topic: topic, Partition: p}] = off
		}
		return m
	}

	// A resumes partitions 0 and 1 in the middle and the others at the
	// start; it commits 5 everywhere, and nothing when it stops.
	sinkA := newRecordSink()
	a := testConsumer(t, brokers, "g-resume", sinkA, topic)
	a.Resume = func(tp string, p int) (int64, bool) {
		if tp != topic {
			t.Errorf("Resume(%q, %d)", tp, p)
		}
		return []int64{3, 7, 0, 0}[p], p < 2
	}
	a.Revoked = func(ctx context.Context, offsets map[feed.Source]int64) error {
		return fmt.Errorf("no checkpoint")
	}
	stopA := start(t, a)
	waitMultiset(t, from([]int{3, 7, 0, 0}, n), sinkA)
	if err := a.Barrier(context.Background(), func(offsets map[feed.Source]int64) error {
		if !maps.Equal(offsets, all(n)) {
			t.Errorf("Barrier offsets = %v, want %v", offsets, all(n))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	other := feed.Source{Topic: "other", Partition: 0}
	if err := a.Commit(context.Background(), maps.Collect(func(yield func(feed.Source, int64) bool) {
		for tp, off := range all(5) {
			yield(tp, off)
		}
		yield(other, 1)
	})); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	stopA()

	// B starts at the committed offsets, even where Resume says less;
	// when it stops, Revoked gets its offsets and they are committed.
	sinkB := newRecordSink()
	b := testConsumer(t, brokers, "g-resume", sinkB, topic)
	b.Resume = func(string, int) (int64, bool) { return 1, true }
	var revoked []map[feed.Source]int64
	b.Revoked = func(ctx context.Context, offsets map[feed.Source]int64) error {
		revoked = append(revoked, offsets)
		return nil
	}
	stopB := start(t, b)
	waitMultiset(t, from([]int{5, 5, 5, 5}, n), sinkB)
	stopB()
	if len(revoked) != 1 || !maps.Equal(revoked[0], all(n)) {
		t.Errorf("Revoked offsets = %v, want once %v", revoked, all(n))
	}

	// C starts where B stopped.
	msgs2, want2 := seqMessages(n, n+5, perMsg)
	produce(t, brokers, topic, msgs2)
	sinkC := newRecordSink()
	start(t, testConsumer(t, brokers, "g-resume", sinkC, topic))
	waitMultiset(t, want2, sinkC)
}

func TestKafkaConsumerCheck(t *testing.T) {
	for _, c := range []*KafkaConsumer{
		{Topics: []string{"t"}, Group: "g", Sink: newRecordSink()},
		{Brokers: []string{"b"}, Group: "g", Sink: newRecordSink()},
		{Brokers: []string{"b"}, Topics: []string{"t"}, Sink: newRecordSink()},
		{Brokers: []string{"b"}, Topics: []string{"t"}, Group: "g"},
		{Brokers: []string{"b"}, Topics: []string{"t"}, Group: "g", Sink: newRecordSink(), Formats: map[string]Format{"t": 7}},
	} {
		if err := c.Run(context.Background()); err == nil {
			t.Errorf("Run with brokers %q, topics %q, group %q, sink %v, formats %v returned nil", c.Brokers, c.Topics, c.Group, c.Sink, c.Formats)
		}
	}
}

func TestFormatContentType(t *testing.T) {
	for _, f := range Formats() {
		m := kafka.Message{Headers: []kafka.Header{{Key: "Content-Type", Value: []byte(strings.ToUpper(f.ContentType()))}}}
		if got, ok := messageFormat(&m, 7); !ok || got != f {
			t.Errorf("messageFormat with %q = %v, %v; want %v", f.ContentType(), got, ok, f)
		}
	}
	if got := Format(9).String(); got != "Format(9)" {
		t.Errorf("Format(9).String() = %q", got)
	}
}

// BenchmarkKafkaIngest consumes binary messages of 1,000 float64 values
// from 4 partitions of an in-process kfake broker (or KAFKA_BROKERS) into a
// sink that counts them. Each iteration is a new consumer in a new group
// that consumes all the messages; values/s is measured from the first
// Accept to the last, leaving out the group join, which ns/op includes.
func BenchmarkKafkaIngest(b *testing.B) {
	const perMsg, msgsPerPartition = 1000, 2000
	brokers := testBrokers(b)
	topic := createTopic(b, brokers, "bench")
	value := make([]byte, 0, 8*perMsg)
	for j := range perMsg {
		value = binary.LittleEndian.AppendUint64(value, math.Float64bits(float64(j)))
	}
	var msgs []kafka.Message
	for p := range testPartitions {
		for range msgsPerPartition {
			msgs = append(msgs, message(p, []byte(fmt.Sprintf("s%d", p)), value, ContentTypeBinary64))
		}
	}
	for i := 0; i < len(msgs); i += 1000 {
		produce(b, brokers, topic, msgs[i:min(i+1000, len(msgs))])
	}
	total := uint64(testPartitions * msgsPerPartition * perMsg)
	var consuming time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sink := &timedSink{}
		c := testConsumer(b, brokers, fmt.Sprintf("g-bench-%d-%d", time.Now().UnixNano(), i), sink, topic)
		c.Logger = slog.New(slog.DiscardHandler)
		i++
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		for c.Stats().Values < total {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		consuming += sink.last.Sub(sink.first)
	}
	b.ReportMetric(float64(total)*float64(b.N)/consuming.Seconds(), "values/s")
}

// timedSink counts values and records when the first and the last Accept
// ended.
type timedSink struct {
	mu          sync.Mutex
	values      int
	first, last time.Time
}

func (s *timedSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	now := time.Now()
	s.mu.Lock()
	if s.values == 0 {
		s.first = now
	}
	s.values += b.Len()
	s.last = now
	s.mu.Unlock()
	return b.Len(), nil
}

func (s *timedSink) Reject(string, feed.Source, feed.Reason, int) {}

func (s *timedSink) IsItemStream(string) bool { return false }

// partitionRecordSink records what each partition delivers, and all of
// it in its recordSink.
type partitionRecordSink struct {
	*recordSink
	mu    sync.Mutex
	bySrc map[feed.Source]*recordSink
}

func (s *partitionRecordSink) of(tp feed.Source) *recordSink {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bySrc[tp] == nil {
		s.bySrc[tp] = newRecordSink()
	}
	return s.bySrc[tp]
}

func (s *partitionRecordSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if b.Source == feed.Local {
		panic("Accept of values from no partition")
	}
	if _, err := s.of(b.Source).Accept(ctx, b); err != nil {
		return 0, err
	}
	return s.recordSink.Accept(ctx, b)
}

func (s *partitionRecordSink) Reject(stream string, tp feed.Source, reason feed.Reason, n int) {
	if tp == feed.Local {
		panic("Reject of input from no partition")
	}
	s.of(tp).Reject(stream, tp, reason, n)
	s.recordSink.Reject(stream, tp, reason, n)
}

// TestKafkaAssigned: with Assigned set, each partition starts exactly where
// it says (or at its earliest offset), whatever the group committed, and a
// PartitionSink receives every partition's values apart.
func TestKafkaAssigned(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "assigned")
	msgs, _ := seqMessages(0, 10, 3)
	bad := message(2, []byte("s2"), []byte{1, 2, 3}, ContentTypeBinary64)
	produce(t, brokers, topic, append(msgs, bad))

	sink := &partitionRecordSink{recordSink: newRecordSink(), bySrc: make(map[feed.Source]*recordSink)}
	c := testConsumer(t, brokers, "assigned", sink, topic)
	var calls atomic.Int32
	c.Assigned = func(ctx context.Context, gen int, parts []feed.Source) (map[feed.Source]int64, error) {
		calls.Add(1)
		if gen < 1 {
			t.Errorf("generation %d", gen)
		}
		if len(parts) != testPartitions || !slices.IsSortedFunc(parts, feed.Source.Compare) {
			t.Errorf("assigned %v", parts)
		}
		return map[feed.Source]int64{{Topic: topic, Partition: 0}: 5, {Topic: topic, Partition: 2}: -1, {Topic: topic, Partition: 3}: 3}, nil
	}
	start(t, c)
	starts := map[int]int{0: 5, 1: 0, 2: 0, 3: 3}
	var want result
	for p := range testPartitions {
		var w result
		for k := starts[p]; k < 10; k++ {
			w.add(fmt.Sprintf("s%d", p), seqValues(p, k, 3)...)
		}
		if p == 2 {
			w.reject("s2", feed.ReasonMalformed, 1)
		}
		sink.of(feed.Source{Topic: topic, Partition: p}).waitFor(t, w)
		want = union(want, w)
	}
	sink.waitFor(t, want)
	if calls.Load() == 0 {
		t.Fatal("Assigned not called")
	}
	gen, parts := c.Assignment()
	if gen == 0 || len(parts) != testPartitions {
		t.Fatalf("assignment: generation %d, %v", gen, parts)
	}
	all, err := c.Partitions(context.Background())
	if err != nil || !slices.Equal(all, parts) {
		t.Fatalf("partitions %v, %v; want %v", all, err, parts)
	}
	err = c.Barrier(context.Background(), func(off map[feed.Source]int64) error {
		for p := range testPartitions {
			want := int64(10)
			if p == 2 {
				want = 11 // the bad message
			}
			if off[feed.Source{Topic: topic, Partition: p}] != want {
				return fmt.Errorf("partition %d at offset %d, want %d", p, off[feed.Source{Topic: topic, Partition: p}], want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKafkaItems consumes items messages (by header and by topic format),
// with the messages' timestamps as arrival times, into a Sink, which gets
// each partition's items apart.
func TestKafkaItems(t *testing.T) {
	t.Parallel()
	t.Run("sink", func(t *testing.T) {
		t.Parallel()
		testKafkaItems(t, "items", func(s *itemSink) Sink { return s })
	})
	t.Run("partitions", func(t *testing.T) {
		t.Parallel()
		var ps *partitionItemRecorder
		testKafkaItems(t, "items-partitions", func(s *itemSink) Sink {
			ps = &partitionItemRecorder{itemSink: s, parts: make(map[string][]feed.Source)}
			return ps
		})
		ps.mu.Lock()
		defer ps.mu.Unlock()
		for stream, want := range map[string][]int{"ia": {0}, "ib": {1}} {
			var got []int
			for _, tp := range ps.parts[stream] {
				got = append(got, tp.Partition)
			}
			slices.Sort(got)
			if got = slices.Compact(got); !slices.Equal(got, want) {
				t.Errorf("items of %q from partitions %v, want %v", stream, got, want)
			}
		}
	})
}

// partitionItemRecorder is an itemSink that records the partitions that
// delivered items to each stream.
type partitionItemRecorder struct {
	*itemSink
	mu    sync.Mutex
	parts map[string][]feed.Source
}

func (s *partitionItemRecorder) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	n, err := s.itemSink.Accept(ctx, b)
	if err != nil || b.Items == nil {
		return n, err
	}
	s.mu.Lock()
	s.parts[b.Stream] = append(s.parts[b.Stream], b.Source)
	s.mu.Unlock()
	return n, nil
}

// testKafkaItems runs TestKafkaItems on topic and group name, with the
// consumer's Sink made by wrap from the itemSink it checks.
func testKafkaItems(t *testing.T, name string, wrap func(*itemSink) Sink) {
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, name)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var msgs []kafka.Message
	add := func(p int, key, value, ct string, at time.Time) {
		m := message(p, []byte(key), []byte(value), ct)
		m.Time = at
		msgs = append(msgs, m)
	}
	add(0, "ia", "/index.html\n/a b\r\n", ContentTypeItems, t0)
	add(0, "ia", "/index.html\n\n"+strings.Repeat("x", items.MaxLen+1)+"\n\xff", ContentTypeItems, t0.Add(time.Second))
	add(1, "ib", "one", "", t0) // the topic's format: items
	add(1, "values", "two", ContentTypeItems, t0)
	add(2, "ib", "3.5", ContentTypeText, t0) // values for an item stream
	add(3, "ia", "", ContentTypeItems, t0)
	produce(t, brokers, topic, msgs)

	sink := newItemSink()
	c := testConsumer(t, brokers, "g-"+name, wrap(sink), topic)
	c.Formats = map[string]Format{topic: FormatItems}
	c.MessageTime = true
	start(t, c)
	// A message is counted as it is read, before its unit reaches the
	// sink: wait for the items too.
	poll(t, "all messages", func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return c.Stats().Messages == uint64(len(msgs)) && len(sink.items["ia"]) == 3 && len(sink.items["ib"]) == 1
	})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	want := map[string][]string{"ia": {"/index.html", "/a b", "/index.html"}, "ib": {"one"}}
	for k := range want {
		slices.Sort(want[k])
		slices.Sort(sink.items[k])
	}
	if !maps.EqualFunc(sink.items, want, slices.Equal) {
		t.Errorf("items %q, want %q", sink.items, want)
	}
	rejects := map[reject]int{
		{"ia", feed.ReasonEmptyItem}: 1, {"ia", feed.ReasonItemTooLong}: 1, {"ia", feed.ReasonBadUTF8}: 1,
		{"ia", feed.ReasonMalformed}:     1, // the empty message
		{"values", feed.ReasonWrongKind}: 1, {"ib", feed.ReasonWrongKind}: 1,
	}
	if got := sink.got.rejects; !maps.Equal(got, rejects) {
		t.Errorf("rejects %v, want %v", got, rejects)
	}
	for _, at := range sink.times {
		if !at.Equal(t0) && !at.Equal(t0.Add(time.Second)) {
			t.Errorf("arrival time %v, want a message's timestamp", at)
		}
	}
	if len(sink.times) < 3 {
		t.Errorf("%d calls with arrival times, want one per timestamp and stream", len(sink.times))
	}
}

// gatedPartitionSink is a partitionRecordSink whose deliveries from one
// partition wait until open is closed.
type gatedPartitionSink struct {
	*partitionRecordSink
	gated feed.Source
	open  chan struct{}
}

func (s *gatedPartitionSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if b.Source == s.gated {
		select {
		case <-s.open:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return s.partitionRecordSink.Accept(ctx, b)
}

// TestKafkaCatchingUp: a partition that Assigned starts behind the group's
// committed offset is catching up until its next offset reaches it, or
// until it reaches the end of its log when the committed offset is past
// it; a partition started at or after the committed offset never is.
func TestKafkaCatchingUp(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "catchup")
	msgs, want := seqMessages(0, 10, 3)
	produce(t, brokers, topic, msgs)
	tp := func(p int) feed.Source { return feed.Source{Topic: topic, Partition: p} }

	// A consumes everything; the group's committed offsets are then set
	// by hand, the one of partition 2 past the end of its log.
	sinkA := newRecordSink()
	a := testConsumer(t, brokers, "g-catchup", sinkA, topic)
	a.Revoked = func(context.Context, map[feed.Source]int64) error { return fmt.Errorf("no checkpoint") }
	stopA := start(t, a)
	waitMultiset(t, want, sinkA)
	committed := map[feed.Source]int64{tp(0): 10, tp(1): 10, tp(2): 1000, tp(3): 4}
	if err := a.Commit(context.Background(), committed); err != nil {
		t.Fatal(err)
	}
	stopA()

	// B starts partition 1 behind, and its deliveries wait; partition 2
	// behind too, partition 0 at and partition 3 after the committed
	// offset.
	sinkB := &gatedPartitionSink{
		partitionRecordSink: &partitionRecordSink{recordSink: newRecordSink(), bySrc: make(map[feed.Source]*recordSink)},
		gated:               tp(1), open: make(chan struct{}),
	}
	b := testConsumer(t, brokers, "g-catchup", sinkB, topic)
	b.Assigned = func(context.Context, int, []feed.Source) (map[feed.Source]int64, error) {
		return map[feed.Source]int64{tp(0): 10, tp(1): 2, tp(2): 0, tp(3): 6}, nil
	}
	start(t, b)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, parts := b.Assignment()
		_, behind2 := b.CatchingUp(tp(2))
		if len(parts) == testPartitions && !behind2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("assigned %v; partition 2 catching up %v", parts, behind2)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if off, ok := b.Position(tp(2)); !ok || off != 10 {
		t.Errorf("partition 2 stopped catching up at offset %d, %v; want the end of its log, 10", off, ok)
	}
	for p, want := range []bool{false, true, false, false} {
		mark, behind := b.CatchingUp(tp(p))
		if behind != want || (behind && mark != committed[tp(p)]) {
			t.Errorf("partition %d: catching up %v to %d; want %v to %d", p, behind, mark, want, committed[tp(p)])
		}
	}
	close(sinkB.open)
	for {
		_, behind := b.CatchingUp(tp(1))
		if !behind {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("partition 1 still catching up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if off, ok := b.Position(tp(1)); !ok || off != 10 {
		t.Errorf("partition 1 caught up at offset %d, %v; want 10", off, ok)
	}
}
