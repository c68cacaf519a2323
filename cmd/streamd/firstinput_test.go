package main

import (
	"context"
	"maps"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
)

// checkFirst checks a stream's kind, count and rejects, waiting for the
// count.
func checkFirst(t *testing.T, c pb.StreamdClient, stream string, kind pb.StreamKind, count uint64, rejects map[string]uint64) {
	t.Helper()
	st := waitCount(t, c, stream, count)
	if st.Kind != kind {
		t.Errorf("stream %s: kind %v, want %v", stream, st.Kind, kind)
	}
	if !maps.Equal(st.Rejected, rejects) && !(len(st.Rejected) == 0 && len(rejects) == 0) {
		t.Errorf("stream %s: rejects %v, want %v", stream, st.Rejected, rejects)
	}
}

// checkNone checks that a stream does not exist.
func checkNone(t *testing.T, c pb.StreamdClient, stream string) {
	t.Helper()
	if st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: stream}); err == nil {
		t.Errorf("stream %s exists: %v", stream, st)
	}
}

// waitRejected waits until the daemon counts want as rejects that belong
// to no stream.
func waitRejected(t *testing.T, d *Daemon, want map[feed.Reason]uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for got := d.Pipeline().Rejected(); !maps.Equal(got, want); got = d.Pipeline().Rejected() {
		if time.Now().After(deadline) {
			t.Fatalf("rejects of no stream %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func sendTCP(t *testing.T, addr string, data []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(data); err != nil {
		t.Fatal(err)
	}
}

const (
	values = pb.StreamKind_STREAM_KIND_VALUES
	itemsK = pb.StreamKind_STREAM_KIND_ITEMS
)

// TestFirstInputKind sends first inputs that mix good and bad parts to new
// streams over every input: a stream's kind comes from its good values or
// items, which it keeps, and counts the bad ones; input with no good part
// creates no stream, and its rejects are counted as belonging to none.
func TestFirstInputKind(t *testing.T) {
	ctx := context.Background()

	t.Run("lines", func(t *testing.T) {
		d, c := startDaemon(t, nil)
		sendTCP(t, d.TCPAddr(), []byte("l1 abc 1.5 NaN\nl2 abc def\nl3 NaN 4e38\nl1 2.5\n"))
		checkFirst(t, c, "l1", values, 2, map[string]uint64{"malformed": 1, "nan": 1})
		waitRejected(t, d, map[feed.Reason]uint64{"malformed": 2, "nan": 1, "inf": 1})
		checkNone(t, c, "l2")
		checkNone(t, c, "l3")
	})

	t.Run("frames", func(t *testing.T) {
		d, c := startDaemon(t, nil)
		in := []byte(ingest.Magic)
		for _, f := range []struct {
			stream string
			list   []string
		}{{"f1", []string{"ok", ""}}, {"f2", []string{"\xff", "ok"}}, {"f3", []string{"", "\xff"}}} {
			var err error
			if in, err = ingest.AppendItemsFrame(in, f.stream, f.list); err != nil {
				t.Fatal(err)
			}
		}
		in, _ = ingest.AppendFrame(in, "f4", []float64{math.NaN(), math.Inf(1)}, false)
		sendTCP(t, d.TCPAddr(), in)
		checkFirst(t, c, "f1", itemsK, 1, map[string]uint64{"empty_item": 1})
		checkFirst(t, c, "f2", itemsK, 1, map[string]uint64{"bad_utf8": 1})
		waitRejected(t, d, map[feed.Reason]uint64{"empty_item": 1, "bad_utf8": 1, "nan": 1, "inf": 1})
		checkNone(t, c, "f3")
		checkNone(t, c, "f4")
		// Later items are taken.
		in, _ = ingest.AppendItemsFrame([]byte(ingest.Magic), "f1", []string{"a", "b"})
		in, _ = ingest.AppendItemsFrame(in, "f2", []string{"c"})
		sendTCP(t, d.TCPAddr(), in)
		checkFirst(t, c, "f1", itemsK, 3, map[string]uint64{"empty_item": 1})
		checkFirst(t, c, "f2", itemsK, 2, map[string]uint64{"bad_utf8": 1})
	})

	t.Run("push", func(t *testing.T) {
		d, c := startDaemon(t, nil)
		push := func(reqs ...*pb.PushRequest) *pb.PushResponse {
			t.Helper()
			p, err := c.Push(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reqs {
				if err := p.Send(r); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := p.CloseAndRecv()
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		resp := push(&pb.PushRequest{Stream: "p1", Items: []string{"ok", ""}},
			&pb.PushRequest{Stream: "p2", Items: []string{"", strings.Repeat("x", 1025)}},
			&pb.PushRequest{Stream: "p3", Values: []float64{math.NaN(), 4e38}},
			&pb.PushRequest{Stream: "p4", Values: []float64{2, 4e38}})
		// 4e38 is beyond float32's range: rejected (inf), not accepted.
		if resp.Accepted != 2 || resp.Rejected != 6 {
			t.Errorf("push: %v, want 2 accepted, 6 rejected", resp)
		}
		// The good parts create p1 and p4, which count their rejects.
		checkFirst(t, c, "p1", itemsK, 1, map[string]uint64{"empty_item": 1})
		checkFirst(t, c, "p4", values, 1, map[string]uint64{"inf": 1})
		checkNone(t, c, "p2")
		checkNone(t, c, "p3")
		waitRejected(t, d, map[feed.Reason]uint64{"empty_item": 1, "item_too_long": 1, "nan": 1, "inf": 1})
		// Later items are taken, and the names without a stream take
		// either kind.
		resp = push(&pb.PushRequest{Stream: "p1", Items: []string{"a"}},
			&pb.PushRequest{Stream: "p2", Items: []string{"b"}},
			&pb.PushRequest{Stream: "p3", Values: []float64{1}})
		if resp.Accepted != 3 || resp.Rejected != 0 {
			t.Errorf("push: %v, want 3 accepted", resp)
		}
		checkFirst(t, c, "p1", itemsK, 2, map[string]uint64{"empty_item": 1})
		checkFirst(t, c, "p2", itemsK, 1, nil)
		checkFirst(t, c, "p3", values, 1, nil)
	})

	t.Run("kafka", func(t *testing.T) {
		if testing.Short() {
			t.Skip("consumer-group joins take seconds")
		}
		brokers, topic := kafkaTopic(t, 1)
		itemsH := []kafka.Header{{Key: ingest.ContentTypeHeader, Value: []byte(ingest.ContentTypeItems)}}
		writeMessages(t, brokers, topic, []kafka.Message{
			{Key: []byte("k1"), Value: []byte("ok\n"), Headers: itemsH},
			{Key: []byte("k1"), Value: []byte("\xff\nfine"), Headers: itemsH},
			{Key: []byte("k2"), Value: []byte("abc 1.5 nan")},
			{Key: []byte("k3"), Value: []byte("abc nan")},
			{Key: []byte("k4"), Value: []byte("\n\xff"), Headers: itemsH},
			{Key: []byte("k1"), Value: []byte("more"), Headers: itemsH},
		})
		d, c := startDaemon(t, kafkaConfig(brokers, topic, "first"))
		checkFirst(t, c, "k1", itemsK, 3, map[string]uint64{"bad_utf8": 1})
		checkFirst(t, c, "k2", values, 1, map[string]uint64{"malformed": 1, "nan": 1})
		waitRejected(t, d, map[feed.Reason]uint64{"malformed": 1, "nan": 1, "empty_item": 1, "bad_utf8": 1})
		checkNone(t, c, "k3")
		checkNone(t, c, "k4")
	})
}

// TestStrayTraffic sends the TCP ingest port what a browser or curl and a
// gRPC client on the wrong port send: no stream is created, and each line
// is counted as a reject of no stream.
func TestStrayTraffic(t *testing.T) {
	d, c := startDaemon(t, nil)
	sendTCP(t, d.TCPAddr(), []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1:7071\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n"))
	sendTCP(t, d.TCPAddr(), []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	// GET's two tokens, one each of Host:, User-Agent: and Accept:, PRI's
	// two, and one for SM's line without values.
	waitRejected(t, d, map[feed.Reason]uint64{"malformed": 8})
	list, err := c.ListStreams(context.Background(), &pb.ListStreamsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Streams) != 0 {
		t.Errorf("stray traffic created streams %q", list.Streams)
	}
}
