package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
)

// itemsPerCall and rejectsPerCall are the items and rejects of one call of
// an itemPushClient: four messages of 2,000 entries, one in ten not an
// address.
const itemsPerCall, rejectsPerCall = 4 * 1800, 4 * 200

// itemPushClient pushes addresses, one in ten not one, to a hierarchy
// stream in back-to-back calls until the daemon refuses it, and counts
// what the daemon reported accepted and rejected. Its first call is
// durable, so that the stream is in a checkpoint once it has started.
type itemPushClient struct {
	stream             string
	accepted, rejected atomic.Uint64
	started            atomic.Bool
	err                error
}

func (p *itemPushClient) run(c pb.StreamdClient) {
	list := make([]string, 2000)
	for i := range list {
		list[i] = fmt.Sprintf("10.%d.%d.%d", i%7, i%251, i%13)
		if i%10 == 0 {
			list[i] = "not-an-address"
		}
	}
	for {
		call, err := c.Push(context.Background())
		if err != nil {
			p.err = err
			return
		}
		var sendErr error
		for i := 0; sendErr == nil && i < 4; i++ {
			sendErr = call.Send(&pb.PushRequest{Stream: p.stream, Items: list, Durable: !p.started.Load()})
		}
		resp, err := call.CloseAndRecv()
		if err != nil {
			p.err = err
			for _, d := range status.Convert(err).Details() {
				if r, ok := d.(*pb.PushResponse); ok {
					resp = r
				}
			}
		}
		if resp != nil {
			p.accepted.Add(resp.Accepted)
			p.rejected.Add(resp.Rejected)
		}
		if err != nil {
			return
		}
		p.started.Store(true)
	}
}

// TestSignalDuringHierarchyPushes pushes items to two hierarchy streams
// and values to plain streams, and stops the real daemon with SIGTERM or
// SIGKILL. After SIGTERM, a daemon started on its data dir counts exactly
// the items and rejects each client was told of; after SIGKILL, at most
// those and the call in flight: Push accepts each message as it comes, so
// a checkpoint may hold messages of a call whose answer the kill stopped.
// Either way every level of a hierarchy stream counts the same items: its
// hierarchical heavy hitters answer.
func TestSignalDuringHierarchyPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildStreamd(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, "serve", "--grpc-addr", "127.0.0.1:0", "--tcp-addr", "", "--metrics-addr", "",
				"--data-dir", dir, "--sorter", "cpu", "--window-size", "4096", "--sliding-window", "50000",
				"--checkpoint-interval", "100ms", "--shutdown-timeout", "60s")
			addrs, log := startBinary(t, cmd, "grpc")
			conn := dialGRPC(t, addrs["grpc"])
			c := pb.NewStreamdClient(conn)
			items := []*itemPushClient{{stream: "hhh.a"}, {stream: "hhh.b"}}
			var wg sync.WaitGroup
			for _, p := range items {
				if _, err := c.CreateStream(context.Background(), &pb.CreateStreamRequest{Stream: p.stream, Hierarchy: "ipv4"}); err != nil {
					t.Fatal(err)
				}
				wg.Go(func() { p.run(c) })
			}
			values, vwg := pushClients(t, c)
			deadline := time.Now().Add(20 * time.Second)
			for _, p := range items {
				for !p.started.Load() {
					if time.Now().After(deadline) {
						t.Fatalf("client %s not started: %v", p.stream, p.err)
					}
					time.Sleep(time.Millisecond)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); sig == syscall.SIGTERM && err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, log.String())
			}
			wg.Wait()
			vwg.Wait()

			d, c := openOn(t, dir, io.Discard, nil)
			defer closeDaemon(t, d)
			if sig == syscall.SIGTERM {
				checkAcknowledged(t, c, values)
			}
			for _, p := range items {
				st, err := c.Stats(context.Background(), &pb.StatsRequest{Stream: p.stream})
				if err != nil {
					t.Fatal(err)
				}
				acked, rejected := p.accepted.Load(), p.rejected.Load()
				switch {
				case sig == syscall.SIGTERM && (st.Count != acked || st.RejectedTotal != rejected):
					t.Errorf("%s: restored %d items and %d rejects, want the %d and %d acknowledged", p.stream, st.Count, st.RejectedTotal, acked, rejected)
				case st.Count > acked+itemsPerCall || st.RejectedTotal > rejected+rejectsPerCall:
					t.Errorf("%s: restored %d items and %d rejects, more than the %d and %d acknowledged and a call in flight", p.stream, st.Count, st.RejectedTotal, acked, rejected)
				case st.Count != 9*st.RejectedTotal:
					t.Errorf("%s: restored %d items and %d rejects, want nine items a reject", p.stream, st.Count, st.RejectedTotal)
				}
				a, err := c.HierarchicalHeavyHitters(context.Background(), &pb.HierarchicalHeavyHittersRequest{Stream: p.stream, Support: 0.1})
				if err != nil {
					t.Fatalf("%s: %v", p.stream, err)
				}
				if a.Count != st.Count {
					t.Errorf("%s: the answer counts %d items, the stream %d", p.stream, a.Count, st.Count)
				}
				t.Logf("%s: %d items and %d rejects acknowledged, %d and %d restored", p.stream, acked, rejected, st.Count, st.RejectedTotal)
			}
		})
	}
}
