package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/cluster"
	"streamd/feed"
	"streamd/internal/tlsconf"
	"streamd/pipeline"
)

// memberIDFile holds the daemon's member id in its data dir.
const memberIDFile = "member-id"

// stateTimeout bounds fetching one partition's state from a peer.
const stateTimeout = 30 * time.Second

// partitionsTTL is how long the list of the topics' partitions is reused.
const partitionsTTL = 30 * time.Second

// loadMemberID returns the daemon's member id, kept in dir so that a
// restarted daemon is the same member; a new random one without a dir.
func loadMemberID(dir string) (string, error) {
	if dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, memberIDFile))
		if err == nil && len(b) == 32 {
			if _, err := hex.DecodeString(string(b)); err == nil {
				return string(b), nil
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("read member id: %w", err)
		}
	}
	var raw [16]byte
	if _, err := io.ReadFull(rand.Reader, raw[:]); err != nil {
		return "", fmt.Errorf("new member id: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	if dir != "" {
		tmp := filepath.Join(dir, memberIDFile+".tmp")
		if err := os.WriteFile(tmp, []byte(id), 0o644); err != nil {
			return "", fmt.Errorf("write member id: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, memberIDFile)); err != nil {
			return "", fmt.Errorf("write member id: %w", err)
		}
	}
	return id, nil
}

// peerCreds returns the credentials of the daemon's calls to its peers:
// TLS when the daemon serves TLS, trusting ClusterCA, or the system's
// roots and the daemon's own certificate (daemons that share one
// self-signed certificate then trust each other).
func peerCreds(cfg *Config) (credentials.TransportCredentials, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	file := cfg.ClusterCA
	if file == "" {
		file = cfg.TLSCert
	}
	tc, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: file, SystemRoots: true})
	if err != nil {
		return nil, fmt.Errorf("cluster ca: %w", err)
	}
	return credentials.NewTLS(tc), nil
}

// openCluster sets up what the daemon needs to answer for its group: its
// member id, connections to its peers, the Gatherer behind SCOPE_CLUSTER
// answers, and, with Kafka, the directory of the group's members.
func (d *Daemon) openCluster(ctx context.Context, dialer *kafka.Dialer) error {
	cfg := &d.Config
	var err error
	if d.memberID, err = loadMemberID(cfg.DataDir); err != nil {
		return err
	}
	creds, err := peerCreds(cfg)
	if err != nil {
		return err
	}
	d.peers = &cluster.Peers{Creds: creds, Token: cfg.Token}
	if d.kafka == nil && len(cfg.ClusterPeers) == 0 {
		return nil // no group to answer for: SCOPE_CLUSTER is refused
	}
	d.gatherer = &cluster.Gatherer{
		Pipeline: d.pipe, Self: d.self, Static: cfg.ClusterPeers, Peers: d.peers, Timeout: cfg.ClusterTimeout,
	}
	if d.kafka == nil {
		return nil
	}
	d.gatherer.Partitions = d.partitions
	d.dir = &cluster.Directory{
		Brokers: cfg.KafkaBrokers, Topic: cfg.ClusterTopic, Logger: d.Logger, Dialer: dialer,
		Self: cluster.Member{Group: cfg.KafkaGroup, ID: d.memberID, Addr: d.advertiseAddr()},
	}
	d.gatherer.Members = d.dir.Members
	// The directory outlives the consumer at shutdown: the member stays
	// announced until the partitions it gave up are handed over.
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.dirStop = cancel
	d.wg.Go(func() {
		if err := d.dir.Run(dctx); err != nil {
			d.Logger.Error("cluster directory stopped", "err", err)
		}
	})
	return nil
}

// handoffTimeout bounds how long a daemon that stops waits for the new
// owners of its partitions to fetch their state.
const handoffTimeout = 5 * time.Second

// awaitHandoff waits, at shutdown, until the partitions the daemon gave
// up have been fetched by their new owners (PartitionState), for at most
// handoffTimeout: a daemon that stops gracefully hands its state over
// instead of leaving its partitions to be consumed again.
func (d *Daemon) awaitHandoff(ctx context.Context) {
	d.handoffMu.Lock()
	left := len(d.handoffLeft)
	done := d.handoffDone
	d.handoffMu.Unlock()
	if d.dir == nil || left == 0 || len(d.dir.Members()) == 0 {
		return
	}
	t := time.NewTimer(handoffTimeout)
	defer t.Stop()
	select {
	case <-done:
		d.Logger.Info("partitions handed over", "partitions", left)
	case <-t.C:
		d.handoffMu.Lock()
		d.Logger.Warn("partitions not handed over in time: their new owners recover them otherwise", "partitions", len(d.handoffLeft))
		d.handoffMu.Unlock()
	case <-ctx.Done():
	}
}

// giveUp records partitions revoked at shutdown, to be handed over.
func (d *Daemon) giveUp(off offsets) {
	d.handoffMu.Lock()
	defer d.handoffMu.Unlock()
	if d.handoffLeft == nil {
		d.handoffLeft = make(map[feed.Source]bool)
		d.handoffDone = make(chan struct{})
	}
	for tp := range off {
		d.handoffLeft[tp] = true
	}
}

// handedOver records that a peer fetched the state of tp.
func (d *Daemon) handedOver(tp feed.Source) {
	d.handoffMu.Lock()
	defer d.handoffMu.Unlock()
	if d.handoffLeft[tp] {
		delete(d.handoffLeft, tp)
		if len(d.handoffLeft) == 0 {
			close(d.handoffDone)
		}
	}
}

// advertiseAddr returns the gRPC address the daemon's peers reach it at.
func (d *Daemon) advertiseAddr() string {
	if d.Config.AdvertiseAddr != "" {
		return d.Config.AdvertiseAddr
	}
	return d.GRPCAddr()
}

// self returns the daemon as a member of its group now, with the
// partitions it claims: those it consumes in its current generation, less
// those still catching up with the group's committed offset (resumed from
// an older state than the group had consumed, after a member died). Those
// hold fewer values than the group had counted, so the daemon does not
// answer for them: a cluster answer names them as missing, and is
// partial, until they have caught up.
func (d *Daemon) self() *pb.ClusterMember {
	m := &pb.ClusterMember{Id: d.memberID, Address: d.advertiseAddr()}
	if d.kafka == nil {
		return m
	}
	gen, tps := d.kafka.Assignment()
	m.Generation = int64(gen)
	for _, tp := range tps {
		if _, behind := d.kafka.CatchingUp(tp); behind {
			continue
		}
		off, _ := d.kafka.Position(tp)
		m.Partitions = append(m.Partitions, &pb.PartitionCoverage{Partition: cluster.ToPB(tp), NextOffset: off})
	}
	return m
}

// partitions returns every partition of the consumed topics. The list is
// read from the brokers once, then refreshed in the background when it is
// older than partitionsTTL (and at each generation), so that answers do
// not wait for the brokers.
func (d *Daemon) partitions(ctx context.Context) ([]feed.Source, error) {
	d.partsMu.Lock()
	parts, stale := d.parts, time.Since(d.partsAt) >= partitionsTTL
	if parts != nil && stale && !d.partsRefreshing {
		d.partsRefreshing = true
		go d.refreshPartitions(context.WithoutCancel(ctx))
	}
	d.partsMu.Unlock()
	if parts != nil {
		return parts, nil
	}
	return d.refreshPartitions(ctx)
}

// refreshPartitions reads the list of partitions from the brokers.
func (d *Daemon) refreshPartitions(ctx context.Context) ([]feed.Source, error) {
	ctx, cancel := context.WithTimeout(ctx, d.Config.ClusterTimeout)
	defer cancel()
	parts, err := d.kafka.Partitions(ctx)
	d.partsMu.Lock()
	defer d.partsMu.Unlock()
	d.partsRefreshing = false
	if err != nil {
		if d.parts != nil {
			return d.parts, nil // the last list beats none
		}
		return nil, err
	}
	d.parts, d.partsAt = parts, time.Now()
	return parts, nil
}

// assigned is the Kafka consumer's hook at the start of a generation. For
// each partition assigned, it finds the newest state of the partition it
// can reach — its own (from an earlier generation or its checkpoint) or a
// peer's (the previous owner keeps the state it had when the partition was
// revoked) — installs it, and starts the partition right after it; with no
// state anywhere, the partition is consumed from its earliest offset.
// Then the parts of the other partitions are released and the member
// announces its new partitions.
func (d *Daemon) assigned(ctx context.Context, generation int, tps []feed.Source) (map[feed.Source]int64, error) {
	// Partitions may have been added.
	go func() { _, _ = d.refreshPartitions(context.WithoutCancel(ctx)) }()
	local := make(map[feed.Source]int64, len(tps))
	d.ckptMu.Lock()
	for _, tp := range tps {
		if o, ok := d.offsets[tp]; ok {
			local[tp] = o
		}
	}
	d.ckptMu.Unlock()

	starts := make(map[feed.Source]int64, len(tps))
	for tp, src := range d.peerStates(ctx, tps, local) {
		off, err := d.fetchState(ctx, src, tp)
		if err != nil {
			d.Logger.Warn("fetch partition state from the previous owner; using what this daemon has", "partition", tp.String(), "peer", src, "err", err)
			continue
		}
		starts[tp] = off
		d.Logger.Info("partition state handed over", "partition", tp.String(), "peer", src, "offset", off, "had", local[tp])
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
		d.ckptMu.Lock()
		err := d.pipe.ReplacePartition(ctx, tp, nil)
		delete(d.offsets, tp)
		d.ckptMu.Unlock()
		if err != nil {
			return nil, err
		}
		d.Logger.Info("no state of the partition in reach: consuming it from its earliest offset", "partition", tp.String())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.pipe.OwnPartitions(tps)
	if d.dir != nil {
		d.dir.Update(generation, tps)
	}
	return starts, nil
}

// peerStates asks the peers which of tps they hold a state of, and returns
// for each partition the peer whose state goes furthest, if beyond local.
func (d *Daemon) peerStates(ctx context.Context, tps []feed.Source, local map[feed.Source]int64) map[feed.Source]string {
	qctx, cancel := context.WithTimeout(ctx, d.Config.ClusterTimeout)
	defer cancel()
	addrs := append([]string(nil), d.Config.ClusterPeers...)
	if d.dir != nil {
		if err := d.dir.Sync(qctx); err != nil && ctx.Err() == nil {
			d.Logger.Warn("read the cluster announcements", "err", err)
		}
		for _, m := range d.dir.Members() {
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
	self := d.advertiseAddr()
	for _, addr := range addrs {
		if addr == self {
			continue
		}
		wg.Go(func() {
			c, err := d.peers.Client(addr)
			if err != nil {
				return
			}
			resp, err := c.PartitionOffsets(qctx, req)
			if err != nil {
				d.Logger.Debug("ask peer for partition states", "peer", addr, "err", err)
				return
			}
			if resp.MemberId == d.memberID {
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

// fetchState fetches a peer's state of tp and installs it, returning the
// offset it covers up to.
func (d *Daemon) fetchState(ctx context.Context, addr string, tp feed.Source) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, stateTimeout)
	defer cancel()
	c, err := d.peers.Client(addr)
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
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	if err := d.pipe.ReplacePartition(ctx, tp, states); err != nil {
		return 0, err
	}
	d.offsets[tp] = head.NextOffset
	return head.NextOffset, nil
}

// heldOffset returns the offset up to which the daemon's state of tp goes,
// if it holds one.
func (d *Daemon) heldOffset(tp feed.Source) (int64, bool) {
	if d.kafka != nil {
		if o, ok := d.kafka.Position(tp); ok {
			return o, true
		}
	}
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	o, ok := d.offsets[tp]
	return o, ok
}

// partitionState returns the daemon's state of tp and the offset it
// covers up to, as one consistent cut: delivery is paused around it.
func (d *Daemon) partitionState(ctx context.Context, tp feed.Source) (int64, []pipeline.PartState, error) {
	d.ckptMu.Lock()
	defer d.ckptMu.Unlock()
	var (
		off    int64
		states []pipeline.PartState
	)
	read := func(positions map[feed.Source]int64) error {
		o, ok := positions[tp]
		if !ok {
			o, ok = d.offsets[tp]
		}
		if !ok {
			return status.Errorf(codes.NotFound, "no state of partition %s", tp)
		}
		var err error
		off = o
		states, err = d.pipe.PartitionState(tp)
		return err
	}
	var err error
	if d.kafka != nil && !d.kafkaStopped.Load() {
		err = d.kafka.Barrier(ctx, read)
	} else {
		err = read(nil)
	}
	return off, states, err
}

// peerServer serves the Peer service of the daemon.
type peerServer struct {
	pb.UnimplementedPeerServer
	d *Daemon
}

func (s peerServer) PeerSummaries(ctx context.Context, req *pb.PeerSummariesRequest) (*pb.PeerSummariesResponse, error) {
	resp, err := cluster.Summaries(s.d.pipe, req, s.d.self())
	switch {
	case errors.Is(err, cluster.ErrItemStream):
		return nil, status.Errorf(codes.FailedPrecondition, "peer summaries: %v", err)
	case err != nil:
		return nil, status.Errorf(codes.Internal, "peer summaries: %v", err)
	}
	return resp, nil
}

func (s peerServer) PartitionOffsets(ctx context.Context, req *pb.PartitionOffsetsRequest) (*pb.PartitionOffsetsResponse, error) {
	resp := &pb.PartitionOffsetsResponse{MemberId: s.d.memberID}
	for _, p := range req.Partitions {
		if o, ok := s.d.heldOffset(cluster.FromPB(p)); ok {
			resp.Partitions = append(resp.Partitions, &pb.PartitionCoverage{Partition: p, NextOffset: o})
		}
	}
	return resp, nil
}

func (s peerServer) PartitionState(req *pb.PartitionStateRequest, stream grpc.ServerStreamingServer[pb.PartitionStateResponse]) error {
	tp := cluster.FromPB(req.Partition)
	if tp.Topic == "" {
		return status.Error(codes.InvalidArgument, "partition state: no topic")
	}
	off, states, err := s.d.partitionState(stream.Context(), tp)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.Unavailable, "partition state: %v", err)
	}
	if err := stream.Send(&pb.PartitionStateResponse{NextOffset: off}); err != nil {
		return err
	}
	for _, st := range states {
		if err := stream.Send(&pb.PartitionStateResponse{Stream: st.Stream, Part: st.Data}); err != nil {
			return err
		}
	}
	s.d.Logger.Info("partition state handed to a peer", "partition", tp.String(), "offset", off, "streams", len(states))
	s.d.handedOver(tp)
	return nil
}
