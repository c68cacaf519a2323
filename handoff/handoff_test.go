package handoff

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/feed"
	"streamd/ingest"
	"streamd/pipeline"
)

// The daemon's parts are what the interfaces say.
var (
	_ Pipeline  = (*pipeline.Pipeline)(nil)
	_ Consumer  = (*ingest.KafkaConsumer)(nil)
	_ Directory = (*cluster.Directory)(nil)
)

// fakePipeline holds each partition's parts as given.
type fakePipeline struct {
	mu       sync.Mutex
	parts    map[feed.Source][]pipeline.PartState
	owned    []feed.Source
	replaced []feed.Source // partitions replaced, in order
}

func (p *fakePipeline) PartitionState(tp feed.Source) ([]pipeline.PartState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.parts[tp]), nil
}

func (p *fakePipeline) ReplacePartition(ctx context.Context, tp feed.Source, states []pipeline.PartState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.parts == nil {
		p.parts = make(map[feed.Source][]pipeline.PartState)
	}
	p.parts[tp] = slices.Clone(states)
	p.replaced = append(p.replaced, tp)
	return nil
}

func (p *fakePipeline) OwnPartitions(owned []feed.Source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.owned = slices.Clone(owned)
}

// fakeConsumer reports fixed positions; partitions, if set, lists the
// topics' partitions.
type fakeConsumer struct {
	gen        int
	assigned   []feed.Source
	positions  map[feed.Source]int64
	partitions func(ctx context.Context) ([]feed.Source, error)

	mu       sync.Mutex
	barriers int
}

func (c *fakeConsumer) Assignment() (int, []feed.Source) { return c.gen, c.assigned }

func (c *fakeConsumer) Position(tp feed.Source) (int64, bool) {
	o, ok := c.positions[tp]
	return o, ok
}

func (c *fakeConsumer) CatchingUp(tp feed.Source) (int64, bool) { return 0, false }

func (c *fakeConsumer) Barrier(ctx context.Context, fn func(map[feed.Source]int64) error) error {
	c.mu.Lock()
	c.barriers++
	c.mu.Unlock()
	return fn(maps.Clone(c.positions))
}

func (c *fakeConsumer) Partitions(ctx context.Context) ([]feed.Source, error) {
	if c.partitions == nil {
		return nil, errors.New("no partitions")
	}
	return c.partitions(ctx)
}

// fakeDirectory knows members set by the test and records the
// announcements.
type fakeDirectory struct {
	mu        sync.Mutex
	members   []cluster.Member
	announced []feed.Source
	gen       int
	leaving   bool
}

func (d *fakeDirectory) Sync(ctx context.Context) error { return nil }

func (d *fakeDirectory) Members() []cluster.Member {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.members)
}

func (d *fakeDirectory) setMembers(ms []cluster.Member) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.members = ms
}

func (d *fakeDirectory) Update(gen int, tps []feed.Source) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen, d.announced = gen, slices.Clone(tps)
}

func (d *fakeDirectory) Leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leaving = true
}

// syncBuffer is a log that the handoffs' goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// serve serves srv's Peer service on a new local port and returns its
// address.
func serve(t *testing.T, srv pb.PeerServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	pb.RegisterPeerServer(g, srv)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(ln)
	}()
	t.Cleanup(func() {
		g.Stop()
		<-done
	})
	return ln.Addr().String()
}

// newHandoff returns an open Handoff of member id with p and its Peer
// service served, logging to log.
func newHandoff(t *testing.T, id string, p Pipeline, log *syncBuffer) *Handoff {
	t.Helper()
	peers := &cluster.Peers{}
	t.Cleanup(func() { _ = peers.Close() })
	h := &Handoff{
		Pipeline: p, Peers: peers, MemberID: id, Timeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
	}
	h.Addr = serve(t, Server{Handoff: h})
	if err := h.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h
}

func setOffsets(h *Handoff, off map[feed.Source]int64) {
	_ = h.Offsets(func(held map[feed.Source]int64) error {
		maps.Copy(held, off)
		return nil
	})
}

func offsetsOf(h *Handoff) map[feed.Source]int64 {
	var out map[feed.Source]int64
	_ = h.Offsets(func(held map[feed.Source]int64) error {
		out = maps.Clone(held)
		return nil
	})
	return out
}

var (
	p0 = feed.Source{Topic: "values", Partition: 0}
	p1 = feed.Source{Topic: "values", Partition: 1}
	p2 = feed.Source{Topic: "values", Partition: 2}
)

// TestMove moves partitions from a member that is leaving to one that is
// given them: each partition's state goes from where it goes furthest,
// the new owner starts each right after the state it installed, and the
// old owner's Close returns once its partitions are handed over.
func TestMove(t *testing.T) {
	var logA, logB syncBuffer
	pa := &fakePipeline{parts: map[feed.Source][]pipeline.PartState{
		p0: {{Stream: "s", Data: []byte("a0")}, {Stream: "t", Data: []byte("a0t")}},
		p1: {{Stream: "s", Data: []byte("a1")}},
	}}
	a := newHandoff(t, "a", pa, &logA)
	// a consumed p0 up to 50 and p1 up to 7.
	ca := &fakeConsumer{positions: map[feed.Source]int64{p0: 50, p1: 7}}
	a.Consumer = ca
	a.Directory = &fakeDirectory{members: []cluster.Member{{ID: "b"}}}
	setOffsets(a, map[feed.Source]int64{p0: 42}) // from an older checkpoint

	pB := &fakePipeline{parts: map[feed.Source][]pipeline.PartState{p1: {{Stream: "s", Data: []byte("b1")}}}}
	b := newHandoff(t, "b", pB, &logB)
	dirB := &fakeDirectory{}
	b.Directory, b.Static = dirB, []string{a.Addr, b.Addr}
	// b's own state of p1 goes further than a's.
	setOffsets(b, map[feed.Source]int64{p1: 9})

	// a leaves: its consumer gives p0 and p1 up, the daemon checkpoints
	// their offsets, and the consumer stops.
	a.Leaving()
	a.Revoked(ca.positions)
	setOffsets(a, ca.positions)
	a.WaitTimeout = time.Hour
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		a.Close(context.Background())
	}()

	starts, err := b.Assigned(t.Context(), 3, []feed.Source{p0, p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[feed.Source]int64{p0: 50, p1: 9}; !maps.Equal(starts, want) {
		t.Errorf("starts %v, want %v", starts, want)
	}
	if want := map[feed.Source]int64{p0: 50, p1: 9}; !maps.Equal(offsetsOf(b), want) {
		t.Errorf("b's offsets %v, want %v", offsetsOf(b), want)
	}
	pB.mu.Lock()
	if want := pa.parts[p0]; !slices.EqualFunc(pB.parts[p0], want, partEqual) {
		t.Errorf("b's state of p0 %q, want a's %q", pB.parts[p0], want)
	}
	if want := []pipeline.PartState{{Stream: "s", Data: []byte("b1")}}; !slices.EqualFunc(pB.parts[p1], want, partEqual) {
		t.Errorf("b's state of p1 %q, want its own %q", pB.parts[p1], want)
	}
	// p2 is in no one's reach: emptied, to be consumed from its start.
	if got, ok := pB.parts[p2]; !ok || len(got) != 0 {
		t.Errorf("b's state of p2 %q (replaced %v), want emptied", got, ok)
	}
	if want := []feed.Source{p0, p1, p2}; !slices.Equal(pB.owned, want) {
		t.Errorf("b owns %v, want %v", pB.owned, want)
	}
	pB.mu.Unlock()
	if want := []feed.Source{p0, p1, p2}; dirB.gen != 3 || !slices.Equal(dirB.announced, want) {
		t.Errorf("b announced generation %d %v, want 3 %v", dirB.gen, dirB.announced, want)
	}

	// b fetched p0 but not p1 (its own went further): a still waits.
	select {
	case <-closed:
		t.Fatalf("a closed before p1 was handed over:\n%s", logA.String())
	default:
	}
	c := newHandoff(t, "c", &fakePipeline{}, &syncBuffer{})
	c.Static = []string{a.Addr}
	if _, err := c.Assigned(t.Context(), 3, []feed.Source{p1}); err != nil {
		t.Fatal(err)
	}
	<-closed
	if !strings.Contains(logA.String(), "partitions handed over") {
		t.Errorf("a's log has no hand-off:\n%s", logA.String())
	}
	// After Close, a serves the state its consumer left, without pausing
	// it: from its offsets.
	ca.mu.Lock()
	barriers := ca.barriers
	ca.mu.Unlock()
	d := newHandoff(t, "d", &fakePipeline{}, &syncBuffer{})
	d.Static = []string{a.Addr}
	if starts, err := d.Assigned(t.Context(), 4, []feed.Source{p0}); err != nil || starts[p0] != 50 {
		t.Errorf("after a closed, d starts %v, %v, want p0 at 50", starts, err)
	}
	ca.mu.Lock()
	if ca.barriers != barriers {
		t.Errorf("a paused its stopped consumer")
	}
	ca.mu.Unlock()
}

func partEqual(a, b pipeline.PartState) bool {
	return a.Stream == b.Stream && bytes.Equal(a.Data, b.Data)
}

// TestPeerDown: a peer that cannot be reached holds no state; the member
// starts from its own, and from the start where it has none.
func TestPeerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	var log syncBuffer
	p := &fakePipeline{}
	h := newHandoff(t, "b", p, &log)
	h.Static = []string{down}
	setOffsets(h, map[feed.Source]int64{p0: 12})
	starts, err := h.Assigned(t.Context(), 1, []feed.Source{p0, p1})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[feed.Source]int64{p0: 12}; !maps.Equal(starts, want) {
		t.Errorf("starts %v, want %v", starts, want)
	}
	if want := []feed.Source{p1}; !slices.Equal(p.replaced, want) {
		t.Errorf("replaced %v, want only %v emptied", p.replaced, want)
	}
}

// blockingPeer answers PartitionOffsets only when its call ends.
type blockingPeer struct {
	pb.UnimplementedPeerServer
	called chan struct{}
}

func (s *blockingPeer) PartitionOffsets(ctx context.Context, req *pb.PartitionOffsetsRequest) (*pb.PartitionOffsetsResponse, error) {
	close(s.called)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCloseCancelsHandoff: Close cancels a hand-off in progress, from a
// peer that does not answer, and Assigned returns.
func TestCloseCancelsHandoff(t *testing.T) {
	peer := &blockingPeer{called: make(chan struct{})}
	p := &fakePipeline{}
	h := newHandoff(t, "b", p, &syncBuffer{})
	h.Static = []string{serve(t, peer)}
	h.Timeout = time.Hour
	type result struct {
		starts map[feed.Source]int64
		err    error
	}
	res := make(chan result, 1)
	go func() {
		starts, err := h.Assigned(context.Background(), 1, []feed.Source{p0})
		res <- result{starts, err}
	}()
	<-peer.called
	h.Close(context.Background())
	select {
	case r := <-res:
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("Assigned = %v, %v; want context.Canceled", r.starts, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not cancel the hand-off")
	}
	if p.owned != nil {
		t.Errorf("a cancelled hand-off took partitions %v", p.owned)
	}
}

// TestCloseWait: Close waits for the partitions given up only while the
// group has other members that are not leaving, and for at most
// WaitTimeout or until its ctx ends.
func TestCloseWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []cluster.Member
		timeout time.Duration
		ctx     func() context.Context
		log     string
	}{
		{"alone", nil, time.Hour, context.Background, ""},
		{"others leaving", []cluster.Member{{ID: "b", Leaving: true}, {ID: "c", Leaving: true}}, 30 * time.Second, context.Background, "every other member is leaving too"},
		{"timeout", []cluster.Member{{ID: "b"}}, time.Millisecond, context.Background, "not handed over in time"},
		{"cancelled", []cluster.Member{{ID: "b"}}, time.Hour, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log syncBuffer
			h := newHandoff(t, "a", &fakePipeline{}, &log)
			h.Directory = &fakeDirectory{members: tc.members}
			h.WaitTimeout = tc.timeout
			h.Leaving()
			h.Revoked(map[feed.Source]int64{p0: 1})
			h.Close(tc.ctx())
			if got := strings.Contains(log.String(), "handed over"); got != (tc.log != "") || !strings.Contains(log.String(), tc.log) {
				t.Errorf("log %q, want %q", log.String(), tc.log)
			}
		})
	}
}

// TestCloseOthersLeave: a member that gives partitions up announces that
// it is leaving, and stops waiting for them to be handed over once every
// other member announces the same: a group stopped whole does not wait
// out WaitTimeout.
func TestCloseOthersLeave(t *testing.T) {
	var log syncBuffer
	h := newHandoff(t, "a", &fakePipeline{}, &log)
	dir := &fakeDirectory{members: []cluster.Member{{ID: "b"}, {ID: "c"}}}
	h.Directory = dir
	h.WaitTimeout = time.Hour
	h.Leaving()
	if !dir.leaving {
		t.Error("Leaving did not announce that the member leaves")
	}
	h.Revoked(map[feed.Source]int64{p0: 1})
	closed := make(chan struct{})
	go func() {
		h.Close(context.Background())
		close(closed)
	}()
	dir.setMembers([]cluster.Member{{ID: "b", Leaving: true}, {ID: "c"}})
	select {
	case <-closed:
		t.Fatal("Close stopped waiting while c stays")
	case <-time.After(5 * awaitPoll):
	}
	dir.setMembers([]cluster.Member{{ID: "b", Leaving: true}, {ID: "c", Leaving: true}})
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waited for members that are all leaving")
	}
	if !strings.Contains(log.String(), "every other member is leaving too") {
		t.Errorf("log %q", log.String())
	}
}

// TestCloseStopsRefresh: the goroutine that reads the list of partitions
// in the background is cancelled by Close, which waits for it; after
// Close none starts.
func TestCloseStopsRefresh(t *testing.T) {
	started, returned := make(chan struct{}), make(chan struct{})
	var calls int
	c := &fakeConsumer{partitions: func(ctx context.Context) ([]feed.Source, error) {
		calls++
		if calls == 1 {
			return []feed.Source{p0}, nil
		}
		close(started)
		<-ctx.Done()
		close(returned)
		return nil, ctx.Err()
	}}
	h := newHandoff(t, "a", &fakePipeline{}, &syncBuffer{})
	h.Consumer = c
	h.PartitionsTTL = time.Nanosecond
	if parts, err := h.Partitions(t.Context()); err != nil || !slices.Equal(parts, []feed.Source{p0}) {
		t.Fatalf("Partitions = %v, %v", parts, err)
	}
	// The list is stale: the next call answers with it and reads it again
	// in the background.
	if parts, err := h.Partitions(t.Context()); err != nil || !slices.Equal(parts, []feed.Source{p0}) {
		t.Fatalf("Partitions = %v, %v", parts, err)
	}
	<-started
	h.Close(context.Background())
	select {
	case <-returned:
	default:
		t.Fatal("Close returned before the refresh goroutine")
	}
	if parts, err := h.Partitions(t.Context()); err != nil || !slices.Equal(parts, []feed.Source{p0}) {
		t.Fatalf("after Close, Partitions = %v, %v", parts, err)
	}
	if calls != 2 {
		t.Errorf("the partitions were read %d times, want 2: none after Close", calls)
	}
}
