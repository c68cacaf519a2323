package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/synth"
)

// zipfStrings returns n Zipf-distributed item strings.
func zipfStrings(n int, distinct uint64, seed uint64) []string {
	ranks, _ := synth.Generate(synth.Spec{Dist: synth.Zipf, Distinct: distinct, S: 1.1, Seed: seed}, n)
	out := make([]string, n)
	for i, r := range ranks {
		out[i] = synth.ItemName(r)
	}
	return out
}

// sendItemFrames sends list to stream over the TCP binary protocol.
func sendItemFrames(t *testing.T, addr, stream string, list []string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := []byte(ingest.Magic)
	for i := 0; i < len(list); i += 5000 {
		if buf, err = ingest.AppendItemsFrame(buf, stream, list[i:min(i+5000, len(list))]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Write(buf); err != nil {
		t.Fatal(err)
	}
}

// checkItemAnswers checks a daemon's heavy hitters and frequencies of an
// item stream against the exact counts of list: each count within its
// bounds, the lower bound at most εN below it.
func checkItemAnswers(t *testing.T, c pb.StreamdClient, stream string, list []string, eps float64) {
	t.Helper()
	ctx := context.Background()
	exact := make(map[string]uint64)
	for _, x := range list {
		exact[x]++
	}
	n := float64(len(list))
	for _, support := range []float64{0.005, 0.05} {
		hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: support})
		if err != nil {
			t.Fatal(err)
		}
		if hh.Count != uint64(len(list)) {
			t.Fatalf("heavy hitters count %d, want %d", hh.Count, len(list))
		}
		seen := make(map[string]bool)
		for _, it := range hh.Items {
			k, ok := exact[it.Item]
			if !ok || k < it.CountMin || k > it.CountMax || float64(k-it.CountMin) > eps*n || float64(k) < (support-eps)*n {
				t.Fatalf("support %v: %q counted %d (known %v), bounds [%d, %d]", support, it.Item, k, ok, it.CountMin, it.CountMax)
			}
			seen[it.Item] = true
		}
		for x, k := range exact {
			if float64(k) >= support*n && !seen[x] {
				t.Fatalf("support %v: %q counted %d missing", support, x, k)
			}
		}
	}
	ask := []string{"item-0", "item-1", "item-a", "absent item"}
	fr, err := c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Items: ask})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Items) != len(ask) {
		t.Fatalf("frequencies of %d items: %d answers", len(ask), len(fr.Items))
	}
	for i, it := range fr.Items {
		if k := exact[ask[i]]; it.Item != ask[i] || k < it.CountMin || k > it.CountMax || float64(k-it.CountMin) > eps*n || it.Shared {
			t.Fatalf("frequency of %q: %v, true count %d", ask[i], it, k)
		}
	}
}

// TestItemStreams feeds an item stream over the binary and line protocols
// and gRPC Push, checks its answers, the errors for the wrong kind, time
// windows, and that a restart keeps its strings and fingerprints.
func TestItemStreams(t *testing.T) {
	dir := t.TempDir()
	tcp := func(cfg *Config) { cfg.TCPAddr = "127.0.0.1:0" }
	d, c := openOn(t, dir, io.Discard, tcp)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: "urls", Kind: pb.StreamKind_STREAM_KIND_ITEMS}); err != nil {
		t.Fatal(err)
	}
	list := zipfStrings(60000, 5000, 1)
	sendItemFrames(t, d.TCPAddr(), "urls", list[:40000])
	// The line protocol, with quoted items and bad ones.
	conn, err := net.Dial("tcp", d.TCPAddr())
	if err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i := 40000; i < 50000; i += 10 {
		lines.WriteString("urls")
		for _, x := range list[i : i+10] {
			fmt.Fprintf(&lines, " %q", x)
		}
		lines.WriteString("\n")
	}
	lines.WriteString("urls \"\" " + strings.Repeat("x", 2000) + "\n")
	if _, err := io.WriteString(conn, lines.String()); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	p, err := c.Push(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Send(&pb.PushRequest{Stream: "urls", Items: append(list[50000:], "")}); err != nil {
		t.Fatal(err)
	}
	resp, err := p.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Accepted != 10000 || resp.Rejected != 1 {
		t.Errorf("push: %v, want 10000 accepted, 1 rejected", resp)
	}
	st := waitCount(t, c, "urls", uint64(len(list)))
	if st.Kind != pb.StreamKind_STREAM_KIND_ITEMS || st.Rejected["empty_item"] != 2 || st.Rejected["item_too_long"] != 1 {
		t.Errorf("stats: kind %v, rejects %v", st.Kind, st.Rejected)
	}
	checkItemAnswers(t, c, "urls", list, 0.001)

	// The wrong kind of question or input.
	if _, err := c.Quantiles(ctx, &pb.QuantilesRequest{Stream: "urls", Phis: []float64{0.5}}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("quantiles of an item stream: %v, want FailedPrecondition", err)
	}
	p, _ = c.Push(ctx)
	_ = p.Send(&pb.PushRequest{Stream: "urls", Values: []float64{1}})
	if _, err := p.CloseAndRecv(); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("values pushed to an item stream: %v, want FailedPrecondition", err)
	}

	// Time windows: everything arrived within the last hour, nothing in
	// the future.
	hh, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "urls", Support: 0.01, Last: durationpb.New(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	w := hh.Window
	if w == nil || w.Count != uint64(min(len(list), 50000)) && !w.Truncated || w.Count != hh.Count || w.FirstUnixNano > w.LastUnixNano || w.LastUnixNano > time.Now().UnixNano() {
		t.Errorf("last hour: count %d, window %v", hh.Count, w)
	}
	if _, err := c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "urls", Support: 0.01, Last: durationpb.New(time.Hour), LastN: 10}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("last and last_n: %v, want InvalidArgument", err)
	}

	// A restart keeps the strings and the key: the same items count on.
	closeDaemon(t, d)
	d, c = openOn(t, dir, io.Discard, tcp)
	defer closeDaemon(t, d)
	checkItemAnswers(t, c, "urls", list, 0.001)
	sendItemFrames(t, d.TCPAddr(), "urls", list[:20000])
	waitCount(t, c, "urls", uint64(len(list)+20000))
	checkItemAnswers(t, c, "urls", append(list, list[:20000]...), 0.001)
}
