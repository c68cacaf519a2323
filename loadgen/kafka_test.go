package loadgen_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/feed"
	"streamd/loadgen"
	"streamd/synth"
)

// collectSink is an ingest.Sink that keeps what it accepts, up to limit
// values, then fails with loadgen.ErrRecordFull.
type collectSink struct {
	mu       sync.Mutex
	limit    int
	n        int
	values   map[string][]float64
	rejected map[feed.Reason]int
}

func (c *collectSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values[b.Stream] = append(c.values[b.Stream], b.Values...)
	c.n += len(b.Values)
	if c.n >= c.limit {
		return len(b.Values), loadgen.ErrRecordFull
	}
	return len(b.Values), nil
}

func (c *collectSink) IsItemStream(string) bool { return false }

func (c *collectSink) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rejected[reason] += n
}

func TestKafka(t *testing.T) {
	const topic = "values"
	for _, format := range []loadgen.KafkaFormat{loadgen.KafkaFloat64, loadgen.KafkaFloat32, loadgen.KafkaText} {
		t.Run(string(format), func(t *testing.T) {
			c := fakeKafka(t, 3, topic)
			brokers := c.ListenAddrs()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Normal, Seed: 5}, Count: 5000, Streams: []string{"k.a", "k.b", "k.c"}}
			target := &loadgen.Kafka{Brokers: brokers, Topic: topic, Format: format, ValuesPerMessage: 300}
			res, err := (&loadgen.Runner{Source: src, Target: target, Conns: 2, Keep: true}).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != 5000 {
				t.Fatalf("sent %d values, want 5000", res.Sent)
			}

			// Every message has its stream as key and the format's
			// content type.
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 50 * time.Millisecond})
			defer r.Close()
			m, err := r.ReadMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(src.Streams, string(m.Key)) || len(m.Headers) != 1 ||
				m.Headers[0].Key != "content-type" || string(m.Headers[0].Value) != format.ContentType() {
				t.Errorf("message key %q headers %v", m.Key, m.Headers)
			}

			// Read back everything.
			sink := &collectSink{limit: 5000, values: make(map[string][]float64), rejected: make(map[feed.Reason]int)}
			if err := loadgen.ReadKafka(ctx, brokers, topic, loadgen.KafkaFloat64, nil, sink); err != nil {
				t.Fatal(err)
			}
			for _, name := range src.Streams {
				want := res.Streams[name].Values
				if format == loadgen.KafkaFloat32 {
					want = slices.Clone(want)
					for i, v := range want {
						want[i] = float64(float32(v))
					}
				}
				// The stream stays on one partition, in order.
				if got := sink.values[name]; !slices.Equal(got, want) {
					t.Errorf("stream %s: read back %d values, not the %d sent", name, len(got), len(want))
				}
			}
		})
	}
}

func TestDecodeMessage(t *testing.T) {
	sink := &collectSink{limit: math.MaxInt, values: make(map[string][]float64), rejected: make(map[feed.Reason]int)}
	header := func(ct string) []kafka.Header { return []kafka.Header{{Key: "content-type", Value: []byte(ct)}} }
	msgs := []kafka.Message{
		{Key: []byte("a"), Value: loadgen.AppendKafkaValue(nil, loadgen.KafkaFloat64, []float64{1, math.NaN(), 2})},
		{Key: []byte("a"), Value: []byte("3 x 4\n5"), Headers: header("text/plain")},
		{Value: loadgen.AppendKafkaValue(nil, loadgen.KafkaFloat32, []float64{6}), Headers: header(loadgen.ContentTypeFloat32)},
		{Key: []byte("a"), Value: []byte{1, 2, 3}},                           // not whole values
		{Key: []byte("a"), Value: []byte("1"), Headers: header("image/png")}, // unknown format
		{Key: []byte("bad name"), Value: []byte("1")},
	}
	var buf []float64
	var err error
	for _, m := range msgs {
		if buf, err = loadgen.DecodeMessage(context.Background(), sink, "topic", m, loadgen.KafkaFloat64, buf); err != nil {
			t.Fatal(err)
		}
	}
	if got := sink.values["a"]; !slices.Equal(got, []float64{1, 2, 3, 4, 5}) {
		t.Errorf("stream a: %v", got)
	}
	if got := sink.values["topic"]; !slices.Equal(got, []float64{6}) {
		t.Errorf("stream topic (no key): %v", got)
	}
	want := map[feed.Reason]int{feed.ReasonNaN: 1, feed.ReasonMalformed: 3, feed.ReasonBadStreamName: 1}
	for r, n := range want {
		if sink.rejected[r] != n {
			t.Errorf("rejected %v, want %v", sink.rejected, want)
			break
		}
	}
}

// fakeKafka starts a Kafka cluster of one broker with topic in
// partitions, closed once the test and its other cleanups are done.
func fakeKafka(t *testing.T, partitions int32, topic string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(0), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestKafkaNoKey: without keys, one stream's messages — values, and items
// — spread over every partition, and read back as the topic's stream; its
// values are not taken as sent in order (Verify checks no last-n answer).
func TestKafkaNoKey(t *testing.T) {
	for _, items := range []bool{false, true} {
		t.Run(fmt.Sprintf("items=%v", items), func(t *testing.T) { testKafkaNoKey(t, items) })
	}
}

func testKafkaNoKey(t *testing.T, items bool) {
	const topic = "spread"
	c := fakeKafka(t, 3, topic)
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 6}, Count: 3000, Streams: []string{topic}, Items: items}
	target := &loadgen.Kafka{Brokers: brokers, Topic: topic, ValuesPerMessage: 100, NoKey: true}
	res, err := (&loadgen.Runner{Source: src, Target: target, Conns: 1, Keep: true}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The partitions are consumed side by side: the stream's values
	// arrive in another order than sent, over one connection though.
	if st := res.Streams[topic]; st == nil || st.Ordered {
		t.Errorf("stream %s spread over the partitions: taken as sent in order (or not kept)", topic)
	}
	got := 0 // items read back
	for p := range 3 {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxWait: 50 * time.Millisecond})
		m, err := r.ReadMessage(ctx)
		for err == nil && items {
			// Every message of the partition, up to its high-water mark.
			got += bytes.Count(m.Value, []byte("\n"))
			lag, lerr := r.ReadLag(ctx)
			if lerr != nil || lag == 0 {
				err = lerr
				break
			}
			m, err = r.ReadMessage(ctx)
		}
		r.Close()
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		if m.Key != nil {
			t.Errorf("partition %d: message key %q", p, m.Key)
		}
	}
	if items {
		if got != 3000 {
			t.Fatalf("read back %d items, want 3000", got)
		}
		return
	}
	sink := &collectSink{limit: 3000, values: make(map[string][]float64), rejected: make(map[feed.Reason]int)}
	if err := loadgen.ReadKafka(ctx, brokers, topic, loadgen.KafkaFloat64, nil, sink); err != nil {
		t.Fatal(err)
	}
	if got := len(sink.values[topic]); got != 3000 {
		t.Fatalf("read back %d values of stream %q, want 3000", got, topic)
	}
}
