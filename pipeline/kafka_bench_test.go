package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/feed"
	"streamd/ingest"
)

// BenchmarkKafkaManyKeys consumes messages of 20 float64 values, one
// stream per key, 100,000 keys in random order over the 4 partitions of an
// in-process kfake broker, into a pipeline, twice: the first pass creates
// the streams, the second feeds them in a new order. With hints the
// pipeline is the consumer's sink, as in the daemon; without, a sink that
// hides its Prefetch. values/s is the second half of the values, from the
// Accept that passes half of them to the last.
func BenchmarkKafkaManyKeys(b *testing.B) {
	const keys, perMsg, partitions = 100000, 20, 4
	cluster, err := kfake.NewCluster(kfake.Ports(0), kfake.SeedTopics(partitions, "many"))
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	rng := rand.New(rand.NewPCG(1, 2))
	var msgs []kafka.Message
	for range 2 {
		for _, k := range rng.Perm(keys) {
			value := make([]byte, 0, 8*perMsg)
			for j := range perMsg {
				value = binary.LittleEndian.AppendUint64(value, math.Float64bits(float64(k*perMsg+j)))
			}
			msgs = append(msgs, kafka.Message{Key: fmt.Appendf(nil, "host%06d.cpu", k), Value: value,
				Headers: []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypeBinary64)}}})
		}
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: "many", Balancer: &kafka.Hash{},
		BatchTimeout: time.Millisecond, BatchSize: 1000, BatchBytes: 1_000_000, Transport: &kafka.Transport{}}
	if err := w.WriteMessages(context.Background(), msgs...); err != nil {
		b.Fatal(err)
	}
	w.Close()
	total := int64(len(msgs) * perMsg)
	for _, hints := range []bool{false, true} {
		b.Run(fmt.Sprint("hints=", hints), func(b *testing.B) {
			var second time.Duration
			for b.Loop() {
				p := open(b, Config{MaxMemory: 8 << 30})
				sink := &halfTimedSink{Sink: p, half: total / 2}
				var s ingest.Sink = sink
				if hints {
					s = hintingSink{sink, p}
				}
				// A new group each time, which reads the topic from its start.
				group := fmt.Sprintf("g-%d", time.Now().UnixNano())
				c := &ingest.KafkaConsumer{Brokers: brokers, Topics: []string{"many"}, Group: group, Sink: s,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), FetchMaxWait: 100 * time.Millisecond}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				for sink.values.Load() < total {
					time.Sleep(time.Millisecond)
				}
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				second += sink.last.Sub(sink.halfAt)
				_ = p.Close(context.Background())
			}
			b.ReportMetric(float64(total/2)*float64(b.N)/second.Seconds(), "values/s")
		})
	}
}

// halfTimedSink is a Sink that counts the values accepted and records
// when half were, and when the last were.
type halfTimedSink struct {
	ingest.Sink
	half         int64
	values       atomic.Int64
	mu           sync.Mutex
	halfAt, last time.Time
}

func (s *halfTimedSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	n, err := s.Sink.Accept(ctx, b)
	now := time.Now()
	v := s.values.Add(int64(n))
	s.mu.Lock()
	if v >= s.half && s.halfAt.IsZero() {
		s.halfAt = now
	}
	s.last = now
	s.mu.Unlock()
	return n, err
}

// hintingSink is a halfTimedSink that passes hints on to the pipeline.
type hintingSink struct {
	*halfTimedSink
	p *Pipeline
}

func (s hintingSink) Prefetch(names [][]byte) int { return s.p.Prefetch(names) }
