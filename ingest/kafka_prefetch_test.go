package ingest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
)

// lockedPrefetchSink is a prefetchSink for the partitions' goroutines,
// which call it at once.
type lockedPrefetchSink struct {
	mu sync.Mutex
	s  *prefetchSink
}

func (l *lockedPrefetchSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Accept(ctx, b)
}

func (l *lockedPrefetchSink) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	l.s.Reject(stream, src, reason, n)
}

func (l *lockedPrefetchSink) IsItemStream(stream string) bool { return l.s.IsItemStream(stream) }

func (l *lockedPrefetchSink) Prefetch(names [][]byte) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Prefetch(names)
}

// TestKafkaPrefetch checks that the Kafka consumer tells a Prefetcher the
// streams of its messages' keys ahead, and that the sink then receives
// what a sink that takes no hints does: keys in random order over every
// partition, runs of one key, messages without a key (the topic's stream,
// never told) and with a bad key.
func TestKafkaPrefetch(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "prefetch")
	rng := rand.New(rand.NewPCG(7, 8))
	var msgs []kafka.Message
	var want result
	keys := make(map[string]bool)
	for i := range 400 {
		p := rng.IntN(testPartitions)
		v := float64(i)
		switch {
		case i%50 == 0:
			msgs = append(msgs, message(p, nil, fmt.Appendf(nil, "%v", v), ""))
			want.add(topic, v)
		case i%70 == 0:
			msgs = append(msgs, message(p, []byte("bad key"), fmt.Appendf(nil, "%v", v), ""))
			want.reject("", feed.ReasonBadStreamName, 1)
		default:
			key := fmt.Sprintf("k%d", rng.IntN(100))
			if i%3 == 0 {
				key = "run" // runs of one key: one unit, told once
			}
			keys[key] = true
			msgs = append(msgs, message(p, []byte(key), f64s(v, v+0.5), ContentTypeBinary64))
			want.add(key, v, v+0.5)
		}
	}
	produce(t, brokers, topic, msgs)

	ps := newPrefetchSink()
	sink := &lockedPrefetchSink{s: ps}
	c := testConsumer(t, brokers, "g-prefetch", sink, topic)
	stop := start(t, c)
	waitMultiset(t, want, ps.recordSink)
	stop()

	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(ps.bad) > 0 {
		t.Errorf("hints break the contract: %q", ps.bad)
	}
	t.Logf("%d hints, %d accepts", len(ps.hints), ps.accepts)
	if len(ps.hints) == 0 {
		t.Fatal("no hints")
	}
	for _, hint := range ps.hints {
		for _, name := range hint {
			if !keys[name] && name != "bad key" {
				t.Errorf("hint of %q, no key of a message", name)
			}
		}
	}
	told := make(map[string]bool)
	for _, hint := range ps.hints {
		for _, name := range hint {
			told[name] = true
		}
	}
	if len(told) < len(keys)/2 {
		t.Errorf("hints named %d of the %d keys: %s", len(told), len(keys), strings.Join(sortedKeys(told), " "))
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
