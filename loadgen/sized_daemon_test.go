package loadgen_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/loadgen"
	"streamd/loadgen/daemontest"
	"streamd/synth"
)

// TestZipfStreamsVerify sends 20,000 streams of Zipf-distributed sizes,
// interleaved, in frames to a daemon — over two TCP connections, from
// three lanes over three, each stream on one, and rendered ahead as
// float32 over three — keeps the values of a
// sample of them (every stream of at least 2,000 values and 200 others),
// verifies the daemon's answers for the sample, and checks that the
// daemon lists every stream.
func TestZipfStreamsVerify(t *testing.T) {
	n, k := 20_000, 200
	if testing.Short() {
		n, k = 5_000, 50
	}
	sizes := synth.Sizes{Min: 5, Max: 20_000, S: 1}.Draw(1, n)
	names := streamNames("zipf", n)
	const big = 2_000
	sample := loadgen.SampleStreams(sizes, big, k, 1)
	tracked := make(map[string]bool)
	var bigs int
	for _, i := range sample {
		tracked[names[i]] = true
		if sizes[i] >= big {
			bigs++
		}
	}
	if bigs == 0 {
		t.Fatal("no stream of 2,000 values or more")
	}
	var total int64
	for _, s := range sizes {
		total += s
	}
	for _, tt := range []struct {
		name         string
		conns, lanes int
		rendered     bool
	}{
		{"conns=2", 2, 0, false},
		{"lanes=3", 3, 3, false},
		{"rendered", 3, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := daemontest.Start(t)
			src := &loadgen.Synth{Spec: synth.Spec{Dist: synth.LogNormal, Seed: 1}, Streams: names, Sizes: sizes, Batch: 512}
			track := func(s string) bool { return tracked[s] }
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var res *loadgen.Result
			if tt.rendered {
				frames, err := loadgen.RenderSized(src, tt.conns, true, track)
				if err != nil {
					t.Fatal(err)
				}
				res, err = (&loadgen.FrameRunner{Addr: d.TCPAddr, Sized: frames, Conns: tt.conns}).Run(ctx)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				r := &loadgen.Runner{
					Source: src,
					Target: &loadgen.TCP{Addr: d.TCPAddr, Binary: true}, Conns: tt.conns, SplitStreams: tt.lanes > 0, Lanes: tt.lanes,
					Keep: true, Track: track,
				}
				var err error
				if res, err = r.Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if res.Sent != total || len(res.Streams) != len(sample) {
				t.Fatalf("sent %d values, tracked %d streams; want %d and %d", res.Sent, len(res.Streams), total, len(sample))
			}
			v, err := loadgen.Verify(ctx, d.Client, res, loadgen.VerifyConfig{Timeout: 30 * time.Second, Poll: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			v.WriteBrief(&out)
			if !v.OK() || len(v.Streams) != len(sample) {
				t.Fatalf("verified %d streams of %d:\n%s", len(v.Streams), len(sample), out.String())
			}
			if lines := strings.Count(out.String(), ": ok\n"); lines != len(sample) {
				t.Errorf("%d lines of streams ok, want %d:\n%s", lines, len(sample), out.String())
			}
			// A stream goes over one connection when the streams are
			// dealt to the connections: then its answers over the last
			// n values are checked too.
			ordered := tt.lanes > 0 || tt.rendered
			for _, s := range v.Streams {
				var lastN int
				for _, q := range s.Quantiles {
					if q.LastN > 0 {
						lastN++
					}
				}
				if (lastN > 0) != ordered || (ordered && lastN < 2*len(loadgen.DefaultPhis())) {
					t.Errorf("stream %s of %d values: %d answers over the last n values checked", s.Stream, s.N, lastN)
				}
			}
			var ls []string
			for tok := ""; ; {
				resp, err := d.Client.ListStreams(ctx, &pb.ListStreamsRequest{PageSize: 10_000, PageToken: tok, Prefix: "zipf."})
				if err != nil {
					t.Fatal(err)
				}
				ls = append(ls, resp.Streams...)
				if tok = resp.NextPageToken; tok == "" {
					break
				}
			}
			if !slices.Equal(ls, slices.Sorted(slices.Values(names))) {
				t.Errorf("the daemon lists %d streams, want the %d sent, in order", len(ls), n)
			}
		})
	}
}

// TestZipfKeysKafka sends 10,000 streams of Zipf-distributed sizes as
// messages keyed by stream to a Kafka topic, has a daemon consume the
// topic, and checks that it counts every value of every stream. The
// connections gather the messages of many streams into each produce
// request: a request for each batch of a stream would take a million
// requests for a million streams.
func TestZipfKeysKafka(t *testing.T) {
	const topic = "many"
	n := 10_000
	if testing.Short() {
		n = 2_000
	}
	c := fakeKafka(t, 4, topic)
	var produces atomic.Int64
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		produces.Add(1)
		return nil, nil, false // counted, then handled by the cluster
	})
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	sizes := synth.Sizes{Min: 5, Max: 2_000, S: 1}.Draw(2, n)
	names := streamNames("key", n)
	r := &loadgen.Runner{
		Source: &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 2}, Streams: names, Sizes: sizes, Batch: 256},
		Target: &loadgen.Kafka{Brokers: brokers, Topic: topic, ValuesPerMessage: 1000},
		Conns:  2,
		Track:  func(string) bool { return false },
	}
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var total, batches int64
	for _, s := range sizes {
		total += s
		batches += (s + 255) / 256
	}
	if res.Sent != total || len(res.Streams) != 0 {
		t.Fatalf("sent %d values, tracked %d streams; want %d and none", res.Sent, len(res.Streams), total)
	}
	if p := produces.Load(); p == 0 || p > batches/50 {
		t.Errorf("%d produce requests for %d batches, want at most %d", p, batches, batches/50)
	}

	d := daemontest.Start(t)
	consumer := consumeKafka(ctx, t, d, brokers, topic)
	// Every stream, one after the other, until the daemon counts its size.
	for i, name := range names {
		for {
			st, err := d.Client.Stats(ctx, &pb.StatsRequest{Stream: name})
			if err == nil && int64(st.Count) == sizes[i] {
				break
			}
			if err == nil && int64(st.Count) > sizes[i] {
				t.Fatalf("stream %s: the daemon counts %d values, %d were sent", name, st.Count, sizes[i])
			}
			select {
			case <-ctx.Done():
				t.Fatalf("stream %s: the daemon counts %v (%v), %d were sent", name, st.GetCount(), err, sizes[i])
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	if got := consumer.Stats(); got.Values != uint64(total) || got.Rejected != 0 {
		t.Errorf("the consumer read %d values and rejected %d, want %d and none", got.Values, got.Rejected, total)
	}
}

// consumeKafka has d consume topic from brokers, in a group of its own,
// until the test ends or ctx does.
func consumeKafka(ctx context.Context, t *testing.T, d *daemontest.Daemon, brokers []string, topic string) *ingest.KafkaConsumer {
	t.Helper()
	consumer := &ingest.KafkaConsumer{
		Brokers: brokers, Topics: []string{topic}, Group: "streamd", Sink: d.Pipeline,
		Logger:            slog.New(slog.DiscardHandler),
		SessionTimeout:    6 * time.Second,
		HeartbeatInterval: 100 * time.Millisecond,
		JoinGroupBackoff:  100 * time.Millisecond,
		FetchMaxWait:      100 * time.Millisecond,
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("consumer: %v", err)
		}
	})
	return consumer
}

// TestVerifyKafkaNoKey sends one stream to Kafka without keys, spread over
// the topic's partitions, over one connection, has a daemon consume the
// topic, and verifies its answers: they hold, and none over the last n
// values is asked, since the daemon consumes the partitions side by side
// and the values arrive in another order than sent.
func TestVerifyKafkaNoKey(t *testing.T) {
	const topic = "spread.verify"
	c := fakeKafka(t, 3, topic)
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := &loadgen.Runner{
		Source: &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 3}, Count: 6000, Streams: []string{topic}},
		Target: &loadgen.Kafka{Brokers: brokers, Topic: topic, ValuesPerMessage: 100, NoKey: true},
		Conns:  1,
		Keep:   true,
	}
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}

	d := daemontest.Start(t)
	consumeKafka(ctx, t, d, brokers, topic)
	v, err := loadgen.Verify(ctx, d.Client, res, loadgen.VerifyConfig{Timeout: 45 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	v.WriteTo(&out)
	if !v.OK() {
		t.Fatalf("verify failed:\n%s", out.String())
	}
	for _, s := range v.Streams {
		for _, q := range s.Quantiles {
			if q.LastN > 0 {
				t.Fatalf("stream %s: an answer over the last %d values checked:\n%s", s.Stream, q.LastN, out.String())
			}
		}
	}
}
