// Package handoff moves the state of Kafka partitions between the daemons
// of one consumer group, as package cluster describes under "Moves": when
// the group gives a daemon a partition, it installs the state of the
// partition that goes furthest among its own and its peers' (Assigned);
// it serves its own states to its peers (Server: PartitionOffsets,
// PartitionState); and a daemon that stops waits, for a while, until the
// partitions it gave up have been fetched by their new owners (Close).
//
// A daemon's state of a partition is a pair: the parts of the partition in
// its pipeline, and the offset they go up to (Offsets). A Handoff changes
// and reads the pair only under its lock, which the daemon's checkpoints
// also hold (Offsets) so that a checkpoint never holds a partition's parts
// with another state's offset; and it takes the pair from a running
// consumer only inside the consumer's barrier, with delivery paused.
//
// A Handoff reaches the pipeline and the Kafka consumer through the small
// interfaces Pipeline and Consumer, and its peers through cluster.Peers:
// the peers it asks are its Directory's members and its Static addresses.
package handoff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/feed"
	"streamd/pipeline"
)

// Defaults of the Handoff's timeouts.
const (
	// DefaultStateTimeout bounds fetching one partition's state from a
	// peer.
	DefaultStateTimeout = 30 * time.Second
	// DefaultWaitTimeout bounds how long Close waits for the new owners
	// of the partitions given up to fetch their states.
	DefaultWaitTimeout = 5 * time.Second
	// DefaultPartitionsTTL is how long the list of the topics' partitions
	// is reused before it is read again.
	DefaultPartitionsTTL = 30 * time.Second
)

// Pipeline is what a Handoff needs of the daemon's pipeline
// (*pipeline.Pipeline): each partition's state, to hand over and to
// install, and the partitions the daemon counts.
type Pipeline interface {
	// PartitionState returns the state of every stream's part of tp.
	PartitionState(tp feed.Source) ([]pipeline.PartState, error)
	// ReplacePartition replaces the state of tp with states; with none,
	// it empties tp's parts.
	ReplacePartition(ctx context.Context, tp feed.Source, states []pipeline.PartState) error
	// OwnPartitions counts the parts of owned and releases the others.
	OwnPartitions(owned []feed.Source)
}

// Consumer is what a Handoff needs of the daemon's Kafka consumer
// (*ingest.KafkaConsumer).
type Consumer interface {
	// Assignment returns the group generation and the partitions
	// assigned in it.
	Assignment() (generation int, partitions []feed.Source)
	// Position returns the next offset of tp, if the consumer has one.
	Position(tp feed.Source) (offset int64, ok bool)
	// CatchingUp reports whether tp is still behind the group's
	// committed offset.
	CatchingUp(tp feed.Source) (mark int64, ok bool)
	// Barrier calls fn with the next offset of every partition, with
	// delivery paused.
	Barrier(ctx context.Context, fn func(offsets map[feed.Source]int64) error) error
	// Partitions returns every partition of the consumed topics.
	Partitions(ctx context.Context) ([]feed.Source, error)
}

// Directory is what a Handoff needs of the group's directory
// (*cluster.Directory).
type Directory interface {
	// Sync reads the announcements up to now.
	Sync(ctx context.Context) error
	// Members returns the other members of the group.
	Members() []cluster.Member
	// Update announces the member's generation and partitions.
	Update(generation int, partitions []feed.Source)
	// Leave announces that the member is stopping.
	Leave()
}

// Handoff hands partitions' states over between the members of a group.
// Set its fields, then call Open; Close stops it. Offsets may be used
// before Open, to set the offsets of a restored checkpoint. Its methods
// are safe for concurrent use.
type Handoff struct {
	Pipeline  Pipeline
	Consumer  Consumer  // nil without Kafka
	Directory Directory // nil without one: only Static peers are asked
	Peers     *cluster.Peers
	Static    []string // peers' gRPC addresses asked besides the directory's members
	MemberID  string   // the member's id, stable across restarts
	Addr      string   // the gRPC address the peers reach the member at
	Logger    *slog.Logger

	// Timeout bounds asking the peers which states they hold, and reading
	// the list of partitions; it must be positive.
	Timeout time.Duration
	// StateTimeout bounds fetching one state; DefaultStateTimeout if 0.
	StateTimeout time.Duration
	// WaitTimeout bounds Close's wait; DefaultWaitTimeout if 0.
	WaitTimeout time.Duration
	// PartitionsTTL is how long Partitions reuses its list;
	// DefaultPartitionsTTL if 0.
	PartitionsTTL time.Duration

	mu      sync.Mutex // held by Offsets' callers; guards offsets
	offsets map[feed.Source]int64

	stopped atomic.Bool // the consumer has stopped
	leaving atomic.Bool // Leaving was called

	leftMu sync.Mutex
	left   map[feed.Source]bool // given up while leaving, not yet handed over
	done   chan struct{}        // closed when left empties

	partsMu    sync.Mutex
	parts      []feed.Source // every partition of the topics
	partsAt    time.Time
	refreshing bool // a goroutine is reading the list
	closed     bool // no goroutine may start

	bg     context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (h *Handoff) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Open starts the Handoff. It fails if a required field is missing.
func (h *Handoff) Open(ctx context.Context) error {
	if h.Pipeline == nil || h.Peers == nil {
		return errors.New("open handoff: pipeline and peers are required")
	}
	if h.Timeout <= 0 {
		return errors.New("open handoff: timeout must be positive")
	}
	h.bg, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return nil
}

// Leaving says that the daemon is stopping: the partitions revoked from now
// on (Revoked) are given up, and Close waits until they are handed over.
// It announces so in the Directory, so that members stopping at the same
// time do not wait for each other. The daemon calls it before it stops its
// consumer.
func (h *Handoff) Leaving() {
	h.leaving.Store(true)
	if h.Directory != nil {
		h.Directory.Leave()
	}
}

// Close is called once the consumer has stopped: from then on the states
// served to peers are the ones the consumer left (Offsets). It waits until
// the partitions given up while leaving have been fetched by their new
// owners, for at most WaitTimeout or until ctx ends, and only while the
// Directory knows other members that are not leaving too; then it stops
// the Handoff's goroutines and waits for them. The Handoff still serves
// its states after Close.
func (h *Handoff) Close(ctx context.Context) {
	h.stopped.Store(true)
	h.await(ctx)
	h.partsMu.Lock()
	h.closed = true
	h.partsMu.Unlock()
	if h.cancel != nil {
		h.cancel()
	}
	h.wg.Wait()
}

// await waits until the partitions given up are handed over, while a
// member that could take them over stays.
func (h *Handoff) await(ctx context.Context) {
	h.leftMu.Lock()
	left, done := len(h.left), h.done
	h.leftMu.Unlock()
	if h.Directory == nil || left == 0 || len(h.Directory.Members()) == 0 {
		return
	}
	t := time.NewTimer(orDefault(h.WaitTimeout, DefaultWaitTimeout))
	defer t.Stop()
	// The members that stop with this one announce it as they go: a group
	// stopped whole does not wait out WaitTimeout.
	poll := time.NewTicker(awaitPoll)
	defer poll.Stop()
	for {
		if !h.othersStay() {
			h.leftMu.Lock()
			h.logger().Info("partitions not handed over: every other member is leaving too", "partitions", len(h.left))
			h.leftMu.Unlock()
			return
		}
		select {
		case <-done:
			h.logger().Info("partitions handed over", "partitions", left)
			return
		case <-poll.C:
		case <-t.C:
			h.leftMu.Lock()
			h.logger().Warn("partitions not handed over in time: their new owners recover them otherwise", "partitions", len(h.left))
			h.leftMu.Unlock()
			return
		case <-ctx.Done():
			return
		}
	}
}

// awaitPoll is how often Close looks again whether other members stay.
const awaitPoll = 50 * time.Millisecond

// othersStay reports whether the Directory knows another member that is
// not leaving.
func (h *Handoff) othersStay() bool {
	for _, m := range h.Directory.Members() {
		if !m.Leaving {
			return true
		}
	}
	return false
}

// Revoked is called when the consumer gives partitions up, with the
// offsets they stopped at: while the daemon is leaving, Close waits for
// them to be handed over.
func (h *Handoff) Revoked(off map[feed.Source]int64) {
	if !h.leaving.Load() {
		return
	}
	h.leftMu.Lock()
	defer h.leftMu.Unlock()
	if h.left == nil {
		h.left = make(map[feed.Source]bool)
		h.done = make(chan struct{})
	}
	for tp := range off {
		h.left[tp] = true
	}
}

// handedOver records that a peer fetched the state of tp.
func (h *Handoff) handedOver(tp feed.Source) {
	h.leftMu.Lock()
	defer h.leftMu.Unlock()
	if h.left[tp] {
		delete(h.left, tp)
		if len(h.left) == 0 {
			close(h.done)
		}
	}
}

// Offsets calls fn with the offset up to which the daemon's state of each
// partition goes, holding the lock under which the Handoff changes the
// pipeline's partitions with their offsets: fn may read and change both,
// as one. Checkpoints write the offsets and the pipeline's snapshot in fn,
// and a restored checkpoint's offsets are set in it. Offsets returns fn's
// error.
func (h *Handoff) Offsets(fn func(offsets map[feed.Source]int64) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.offsets == nil {
		h.offsets = make(map[feed.Source]int64)
	}
	return fn(h.offsets)
}

// Self returns the member now, with the partitions it claims: those it
// consumes in its current generation, less those still catching up with
// the group's committed offset (resumed from an older state than the group
// had consumed, after a member died). Those hold fewer values than the
// group had counted, so the member does not answer for them: a cluster
// answer names them as missing, and is partial, until they have caught up.
func (h *Handoff) Self() *pb.ClusterMember {
	m := &pb.ClusterMember{Id: h.MemberID, Address: h.Addr}
	if h.Consumer == nil {
		return m
	}
	gen, tps := h.Consumer.Assignment()
	m.Generation = int64(gen)
	for _, tp := range tps {
		if _, behind := h.Consumer.CatchingUp(tp); behind {
			continue
		}
		off, _ := h.Consumer.Position(tp)
		m.Partitions = append(m.Partitions, &pb.PartitionCoverage{Partition: cluster.ToPB(tp), NextOffset: off})
	}
	return m
}

// Partitions returns every partition of the consumed topics. The list is
// read from the brokers once, then refreshed in the background when it is
// older than PartitionsTTL (and at each generation), so that answers do
// not wait for the brokers. It needs a Consumer.
func (h *Handoff) Partitions(ctx context.Context) ([]feed.Source, error) {
	h.partsMu.Lock()
	parts := h.parts
	if parts != nil && time.Since(h.partsAt) >= orDefault(h.PartitionsTTL, DefaultPartitionsTTL) {
		h.refreshLocked()
	}
	h.partsMu.Unlock()
	if parts != nil {
		return parts, nil
	}
	return h.refresh(ctx)
}

// refreshLocked starts reading the list of partitions in the background,
// unless that is under way or the Handoff is closed. The caller holds
// partsMu.
func (h *Handoff) refreshLocked() {
	if h.refreshing || h.closed || h.bg == nil || h.Consumer == nil {
		return
	}
	h.refreshing = true
	h.wg.Go(func() {
		_, _ = h.refresh(h.bg)
		h.partsMu.Lock()
		h.refreshing = false
		h.partsMu.Unlock()
	})
}

// refresh reads the list of partitions from the brokers.
func (h *Handoff) refresh(ctx context.Context) ([]feed.Source, error) {
	if h.Consumer == nil {
		return nil, errors.New("partitions: no kafka consumer")
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	parts, err := h.Consumer.Partitions(ctx)
	h.partsMu.Lock()
	defer h.partsMu.Unlock()
	if err != nil {
		if h.parts != nil {
			return h.parts, nil // the last list beats none
		}
		return nil, err
	}
	h.parts, h.partsAt = parts, time.Now()
	return parts, nil
}

// Assigned is the Kafka consumer's hook at the start of a generation
// (ingest.KafkaConsumer.Assigned). For each partition assigned, it finds
// the newest state of the partition it can reach — its own (from an
// earlier generation or its checkpoint) or a peer's (the previous owner
// keeps the state it had when the partition was revoked) — installs it,
// and returns the offset to start the partition at, right after it; with
// no state anywhere, the partition is emptied and left out, to be consumed
// from its earliest offset. Then the parts of the other partitions are
// released and the member announces its new partitions. Close cancels it:
// it then returns ctx's error.
func (h *Handoff) Assigned(ctx context.Context, generation int, tps []feed.Source) (map[feed.Source]int64, error) {
	// Close cancels a hand-off in progress.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if h.bg != nil {
		defer context.AfterFunc(h.bg, cancel)()
	}
	// Partitions may have been added.
	h.partsMu.Lock()
	h.refreshLocked()
	h.partsMu.Unlock()
	local := make(map[feed.Source]int64, len(tps))
	h.mu.Lock()
	for _, tp := range tps {
		if o, ok := h.offsets[tp]; ok {
			local[tp] = o
		}
	}
	h.mu.Unlock()

	starts := make(map[feed.Source]int64, len(tps))
	for tp, src := range h.peerStates(ctx, tps, local) {
		off, err := h.fetch(ctx, src, tp)
		if err != nil {
			h.logger().Warn("fetch partition state from the previous owner; using what this daemon has", "partition", tp.String(), "peer", src, "err", err)
			continue
		}
		starts[tp] = off
		h.logger().Info("partition state handed over", "partition", tp.String(), "peer", src, "offset", off, "had", local[tp])
	}
	for _, tp := range tps {
		if _, ok := starts[tp]; ok {
			continue
		}
		if o, ok := local[tp]; ok {
			starts[tp] = o
			continue
		}
		// No state of the partition anywhere: consume it from its start.
		h.mu.Lock()
		err := h.Pipeline.ReplacePartition(ctx, tp, nil)
		delete(h.offsets, tp)
		h.mu.Unlock()
		if err != nil {
			return nil, err
		}
		h.logger().Info("no state of the partition in reach: consuming it from its earliest offset", "partition", tp.String())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.Pipeline.OwnPartitions(tps)
	if h.Directory != nil {
		h.Directory.Update(generation, tps)
	}
	return starts, nil
}

// peerStates asks the peers which of tps they hold a state of, and returns
// for each partition the peer whose state goes furthest, if beyond local.
func (h *Handoff) peerStates(ctx context.Context, tps []feed.Source, local map[feed.Source]int64) map[feed.Source]string {
	qctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	addrs := append([]string(nil), h.Static...)
	if h.Directory != nil {
		if err := h.Directory.Sync(qctx); err != nil && ctx.Err() == nil {
			h.logger().Warn("read the cluster announcements", "err", err)
		}
		for _, m := range h.Directory.Members() {
			addrs = append(addrs, m.Addr)
		}
	}
	req := &pb.PartitionOffsetsRequest{}
	for _, tp := range tps {
		req.Partitions = append(req.Partitions, cluster.ToPB(tp))
	}
	type found struct {
		addr string
		off  int64
	}
	var (
		mu   sync.Mutex
		best = make(map[feed.Source]found)
		wg   sync.WaitGroup
	)
	for _, addr := range addrs {
		if addr == h.Addr {
			continue
		}
		wg.Go(func() {
			c, err := h.Peers.Client(addr)
			if err != nil {
				return
			}
			resp, err := c.PartitionOffsets(qctx, req)
			if err != nil {
				h.logger().Debug("ask peer for partition states", "peer", addr, "err", err)
				return
			}
			if resp.MemberId == h.MemberID {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, pc := range resp.Partitions {
				tp := cluster.FromPB(pc.Partition)
				mine, ok := local[tp]
				if (!ok || pc.NextOffset > mine) && pc.NextOffset > best[tp].off {
					best[tp] = found{addr, pc.NextOffset}
				}
			}
		})
	}
	wg.Wait()
	out := make(map[feed.Source]string, len(best))
	for tp, f := range best {
		out[tp] = f.addr
	}
	return out
}

// fetch fetches a peer's state of tp and installs it, returning the
// offset it covers up to.
func (h *Handoff) fetch(ctx context.Context, addr string, tp feed.Source) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(h.StateTimeout, DefaultStateTimeout))
	defer cancel()
	c, err := h.Peers.Client(addr)
	if err != nil {
		return 0, err
	}
	st, err := c.PartitionState(ctx, &pb.PartitionStateRequest{Partition: cluster.ToPB(tp)})
	if err != nil {
		return 0, err
	}
	head, err := st.Recv()
	if err != nil {
		return 0, fmt.Errorf("receive partition state: %w", err)
	}
	var states []pipeline.PartState
	for {
		m, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("receive partition state: %w", err)
		}
		states = append(states, pipeline.PartState{Stream: m.Stream, Data: m.Part})
	}
	if head.NextOffset < 0 {
		return 0, fmt.Errorf("partition state at offset %d", head.NextOffset)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.Pipeline.ReplacePartition(ctx, tp, states); err != nil {
		return 0, err
	}
	if h.offsets == nil {
		h.offsets = make(map[feed.Source]int64)
	}
	h.offsets[tp] = head.NextOffset
	return head.NextOffset, nil
}

// held returns the offset up to which the daemon's state of tp goes, if
// it holds one.
func (h *Handoff) held(tp feed.Source) (int64, bool) {
	if h.Consumer != nil {
		if o, ok := h.Consumer.Position(tp); ok {
			return o, true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o, ok := h.offsets[tp]
	return o, ok
}

// errNoState is returned by state for a partition the daemon holds no
// state of.
var errNoState = errors.New("no state of the partition")

// state returns the daemon's state of tp and the offset it covers up to,
// as one consistent cut: delivery is paused around it.
func (h *Handoff) state(ctx context.Context, tp feed.Source) (int64, []pipeline.PartState, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var (
		off    int64
		states []pipeline.PartState
	)
	read := func(positions map[feed.Source]int64) error {
		o, ok := positions[tp]
		if !ok {
			o, ok = h.offsets[tp]
		}
		if !ok {
			return fmt.Errorf("partition %s: %w", tp, errNoState)
		}
		var err error
		off = o
		states, err = h.Pipeline.PartitionState(tp)
		return err
	}
	if h.Consumer != nil && !h.stopped.Load() {
		return off, states, h.Consumer.Barrier(ctx, read)
	}
	return off, states, read(nil)
}
