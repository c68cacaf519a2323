package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
	"streamd/checkpoint"
	"streamd/cluster"
	"streamd/gpusort"
	"streamd/gpusort/registry"
	"streamd/handoff"
	"streamd/ingest"
	"streamd/internal/connlimit"
	"streamd/internal/grpcauth"
	"streamd/internal/membudget"
	"streamd/internal/tlsconf"
	"streamd/pipeline"
	"streamd/web"
)

// Daemon is streamd: the pipeline of streams and the servers around it.
type Daemon struct {
	Config Config
	Logger *slog.Logger

	sorter gpusort.Digester
	pipe   *pipeline.Pipeline
	tcp    *ingest.TCPServer
	grpc   *grpc.Server
	grpcLn net.Listener
	health *health.Server
	api    *api.Server
	web    *web.Server
	tls    *tls.Config // nil without TLS
	wg     sync.WaitGroup

	lock      *checkpoint.DirLock // the data dir's, held from Open to Close
	grpcConns *connlimit.Listener // what gRPC serves: grpcLn, limited

	store        *checkpoint.Store
	chain        chainStreams          // the streams of the store's chain; the checkpoints' own
	ckpt         *checkpoint.Scheduler // nil without a data dir, or before the state is restored
	handoff      *handoff.Handoff      // holds the Kafka offsets of the state, under the checkpoints' lock
	kafka        *ingest.KafkaConsumer
	kafkaStopped atomic.Bool
	kafkaDone    chan struct{}
	stop         context.CancelFunc // ends Kafka

	peers    *cluster.Peers
	gatherer *cluster.Gatherer
	dir      *cluster.Directory // the group's members; nil without Kafka
	dirStop  context.CancelFunc // ends the directory
}

// DurabilityService is the name under which the gRPC health service
// reports whether checkpoints succeed: NOT_SERVING from a failed checkpoint
// until one succeeds, SERVING otherwise (also without a data dir). The
// overall status ("") and the API's (streamd.v1.Streamd) stay SERVING,
// since queries and ingest go on; a restart would not mend the disk and
// would lose the values since the last checkpoint.
const DurabilityService = "streamd.durability"

// setDurability sets DurabilityService's status from the last
// checkpoint's outcome: degraded, or nil.
func (d *Daemon) setDurability(degraded error) {
	st := healthpb.HealthCheckResponse_SERVING
	if degraded != nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	d.health.SetServingStatus(DurabilityService, st)
}

// checkpointStats returns the checkpoint counters for /metrics.
func (d *Daemon) checkpointStats() web.CheckpointStats {
	failures, lastOK := d.ckpt.Stats()
	return web.CheckpointStats{Failures: failures, LastSuccess: lastOK}
}

// NewDaemon returns a daemon with cfg, not yet running.
func NewDaemon(cfg Config, logger *slog.Logger) *Daemon {
	if logger == nil {
		logger = slog.Default()
	}
	return &Daemon{Config: cfg, Logger: logger}
}

// Open validates the configuration, then starts the pipeline, the TCP
// ingest listener, the gRPC server and the metrics server. On error it
// stops whatever it started.
func (d *Daemon) Open(ctx context.Context) (err error) {
	cfg := &d.Config
	if err := cfg.Validate(); err != nil {
		return err
	}
	d.health = health.NewServer()
	defer func() {
		if err != nil {
			_ = d.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := cfg.fitDescriptors(d.Logger); err != nil {
		return err
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return fmt.Errorf("create data dir: %w", err)
		}
		if d.lock, err = checkpoint.Lock(cfg.DataDir); err != nil {
			return fmt.Errorf("lock data dir: %w", err)
		}
	}
	budget, err := cfg.memoryBudget()
	if err != nil {
		return err
	}
	if cfg.TLSCert != "" {
		if d.tls, err = tlsconf.Server(cfg.TLSCert, cfg.TLSKey); err != nil {
			return err
		}
	}
	if d.sorter, err = openSorter(cfg.Sorter, d.Logger); err != nil {
		return err
	}
	workers := sortWorkers(cfg.Workers, usesGPU(d.sorter))
	d.pipe, err = pipeline.New(pipeline.Config{
		Defaults: cfg.Stream, MaxStreams: cfg.MaxStreams, Queue: cfg.Queue, Workers: workers,
		Sorter: d.sorter, Logger: d.Logger, MaxMemory: budget, IdleFlush: cfg.pipelineIdleFlush(),
	})
	if err != nil {
		return err
	}
	d.handoff = &handoff.Handoff{Pipeline: d.pipe}
	if cfg.DataDir != "" {
		d.store = &checkpoint.Store{Dir: cfg.DataDir, Logger: d.Logger}
		if err := d.restore(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		d.ckpt = &checkpoint.Scheduler{
			Interval: cfg.CheckpointInterval, Write: d.checkpoint, Changed: d.setDurability, Logger: d.Logger,
		}
	}
	if err := d.pipe.Open(ctx); err != nil {
		return err
	}
	if d.ckpt != nil {
		// The state is what the data dir holds: durable as of now.
		if err := d.ckpt.Open(ctx); err != nil {
			return err
		}
	}
	var bg context.Context
	bg, d.stop = context.WithCancel(context.WithoutCancel(ctx))
	if usesGPU(d.sorter) && os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) <= runtime.NumCPU() {
		cores := runtime.GOMAXPROCS(0)
		g := newProcsGovernor(cores, procsQuiet, func() int64 { return d.pipe.Counters().WindowsSorted }, runtime.GOMAXPROCS, d.Logger)
		d.wg.Go(func() { g.run(bg, procsEvery) })
		d.Logger.Info("go scheduler ps follow the gpu sorter's work", "gomaxprocs_sorting", 2*cores, "gomaxprocs_idle", cores)
	}
	if d.grpcLn, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
		return fmt.Errorf("listen grpc: %w", err)
	}
	var dialer *kafka.Dialer // nil: kafka-go's default
	if len(cfg.KafkaTopics) > 0 {
		if dialer, err = cfg.kafkaDialer(); err != nil {
			return fmt.Errorf("kafka: %w", err)
		}
		d.newKafka(dialer)
	}
	if err := d.openCluster(bg, dialer); err != nil {
		return err
	}
	d.openGRPC()
	if d.kafka != nil {
		d.kafkaDone = make(chan struct{})
		go func() {
			defer close(d.kafkaDone)
			if err := d.kafka.Run(bg); err != nil && bg.Err() == nil {
				d.Logger.Error("kafka consumer stopped", "err", err)
			}
		}()
	}
	if cfg.TCPAddr != "" {
		d.tcp = ingest.NewTCPServer(cfg.TCPAddr, d.pipe)
		d.tcp.Logger = d.Logger
		d.tcp.Token = cfg.Token
		d.tcp.MaxConnections, d.tcp.IdleTimeout = cfg.MaxConnections, cfg.IdleTimeout
		d.tcp.HandshakeTimeout, d.tcp.MaxUnauthenticated = cfg.HandshakeTimeout, cfg.MaxUnauthenticated
		d.tcp.MaxLineBytes, d.tcp.MaxFrameBytes = cfg.MaxLineBytes, cfg.MaxFrameBytes
		if d.tls != nil {
			d.tcp.TLSConfig = d.tls.Clone()
		}
		if err := d.tcp.Open(ctx); err != nil {
			return fmt.Errorf("open tcp ingest: %w", err)
		}
	}
	if cfg.MetricsAddr != "" {
		if err := d.openWeb(ctx); err != nil {
			return err
		}
	}
	d.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	d.health.SetServingStatus(pb.Streamd_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	if d.ckpt != nil {
		d.setDurability(d.ckpt.Err())
	} else {
		d.setDurability(nil)
	}
	attrs := []any{"grpc", d.GRPCAddr(), "tcp", d.TCPAddr(), "metrics", d.MetricsAddr(),
		"sorter", d.sorter.Name(), "data_dir", cfg.DataDir}
	if in, ok := d.sorter.(interface{ Info() string }); ok && in.Info() != "" {
		attrs = append(attrs, "gpu", in.Info()) // the renderer, and how the radix sort ranks keys
	}
	d.Logger.Info("streamd serving", attrs...)
	d.logBudget(budget)
	return nil
}

// logBudget says what the memory budget holds.
func (d *Daemon) logBudget(limit int64) {
	per := pipeline.StreamFootprint(d.Config.Stream).Reserve
	m := d.pipe.Memory()
	if limit == 0 {
		d.Logger.Info("no memory budget", "stream_reserve", membudget.Size(per))
		return
	}
	d.Logger.Info("memory budget", "max_memory", membudget.Size(limit), "used", membudget.Size(m.Used),
		"stream_reserve", membudget.Size(per), "default_streams_that_fit", max(limit-m.Used, 0)/per)
	if m.Used > limit {
		d.Logger.Warn("the restored streams take more than the memory budget: new streams are refused", "used", membudget.Size(m.Used), "max_memory", membudget.Size(limit))
	}
}

// MemoryLimit returns the memory budget in bytes, 0 for none.
func (d *Daemon) MemoryLimit() int64 {
	if d.pipe == nil {
		return 0
	}
	return d.pipe.Memory().Limit
}

// newKafka sets up the consumer of the configured topics. The pipeline is
// its Sink: each partition's values and items are kept apart, and
// each partition starts exactly after the state the daemon installs for it
// (assigned).
func (d *Daemon) newKafka(dialer *kafka.Dialer) {
	cfg := &d.Config
	d.kafka = &ingest.KafkaConsumer{
		Brokers: cfg.KafkaBrokers, Topics: cfg.KafkaTopics, Group: cfg.KafkaGroup,
		Formats: cfg.KafkaFormats, StreamFromTopic: cfg.KafkaStreamFromTopic, MessageTime: cfg.KafkaMessageTime,
		Sink: d.pipe, Logger: d.Logger, SessionTimeout: cfg.KafkaSessionTimeout,
		Assigned: d.handoff.Assigned,
		Revoked:  d.revoked,
		Dialer:   dialer,
	}
}

// openSorter opens the named back-end. "auto" falls back to the CPU when
// no GPU context can be had, saying why once.
func openSorter(name string, logger *slog.Logger) (gpusort.Digester, error) {
	newSorter, err := registry.Lookup(name)
	if err != nil {
		return nil, err
	}
	s, err := newSorter()
	if err != nil {
		if name != "auto" {
			return nil, fmt.Errorf("open sorter %s: %w", name, err)
		}
		logger.Warn("no GPU sorter; sorting on the CPU", "err", err)
		return gpusort.NewCPU(0), nil
	}
	if a, ok := s.(*gpusort.Auto); ok && a.GPUErr() != nil {
		if errors.Is(a.GPUErr(), gpusort.ErrNotBuilt) {
			logger.Info("the auto sorter sorts on the CPU: this build has no GPU support")
		} else {
			logger.Warn("no GPU; the auto sorter sorts on the CPU", "err", a.GPUErr())
		}
	}
	dg, ok := s.(gpusort.Digester)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("open sorter %s: it does not digest windows", name)
	}
	return dg, nil
}

// gpuSortWorkers is the number of sort workers with a GPU sorter when
// --sort-workers is 0. The compute sorter sends the batches waiting for it
// in one submission, so it needs many batches waiting: on the H200 with
// 100,000 streams of small windows (BenchmarkManyStreams), 256 workers took
// it from 417 to 888 M values/s on 16 cores (from 298 to 746 on 8), and
// 16 fat streams from 983 to 1017.
const gpuSortWorkers = 256

// sortWorkers returns the number of sort workers for --sort-workers n: n
// if set, else gpuSortWorkers with a GPU sorter, else 0 (the pipeline's
// default, GOMAXPROCS).
func sortWorkers(n int, gpu bool) int {
	if n == 0 && gpu {
		return gpuSortWorkers
	}
	return n
}

// usesGPU reports whether s sorts on a GPU.
func usesGPU(s gpusort.Sorter) bool {
	if a, ok := s.(*gpusort.Auto); ok {
		return a.GPUErr() == nil
	}
	return s.Name() != "cpu"
}

// maxGRPCSend bounds a gRPC reply: the API's bounds keep replies far below
// it (a ListStreams page holds at most 10000 names of 200 bytes: 2 MB).
const maxGRPCSend = 64 << 20

// openGRPC serves the API and the Peer service on the gRPC listener.
func (d *Daemon) openGRPC() {
	cfg := &d.Config
	var opts []grpc.ServerOption
	if d.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(d.tls)))
	}
	opts = append(opts, grpcauth.ServerOptions(cfg.Token)...)
	opts = append(opts, grpc.ConnectionTimeout(cfg.GRPCHandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: cfg.GRPCIdleTimeout}),
		grpc.MaxConcurrentStreams(uint32(min(cfg.GRPCMaxStreams, math.MaxUint32))), grpc.MaxSendMsgSize(maxGRPCSend))
	d.api = &api.Server{Pipeline: d.pipe, MaxWatches: cfg.MaxWatches, MaxWatchesPerConn: cfg.MaxWatchesPerConn}
	if d.gatherer != nil {
		d.api.Cluster = d.gatherer
	}
	// After the token's check: a call that gets this far proves its
	// connection, which then keeps its place under --grpc-max-connections.
	opts = append(opts, grpc.ChainUnaryInterceptor(d.proveUnary, d.api.UnaryInterceptor),
		grpc.ChainStreamInterceptor(d.proveStream, d.api.StreamInterceptor))
	d.grpc = grpc.NewServer(opts...)
	if d.ckpt != nil {
		d.api.Durable = d.ckpt.Checkpoint
	}
	pb.RegisterStreamdServer(d.grpc, d.api)
	pb.RegisterPeerServer(d.grpc, handoff.Server{Handoff: d.handoff, Pipeline: d.pipe})
	healthpb.RegisterHealthServer(d.grpc, d.health)
	reflection.Register(d.grpc)
	d.grpcConns = connlimit.New(d.grpcLn, cfg.GRPCMaxConnections)
	ln := d.grpcConns
	d.wg.Go(func() {
		if err := d.grpc.Serve(ln); err != nil {
			d.Logger.Error("grpc server stopped", "err", err)
		}
	})
}

// prove marks the connection of a call that passed the token's check as
// proven (connlimit.Listener.Prove). The health service's calls prove
// nothing: its Check needs no token.
func (d *Daemon) prove(ctx context.Context, method string) {
	if d.grpcConns == nil || strings.HasPrefix(method, "/grpc.health.v1.Health/") {
		return
	}
	if p, ok := peer.FromContext(ctx); ok {
		d.grpcConns.Prove(p.Addr)
	}
}

func (d *Daemon) proveUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	d.prove(ctx, info.FullMethod)
	return handler(ctx, req)
}

func (d *Daemon) proveStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	d.prove(ss.Context(), info.FullMethod)
	return handler(srv, ss)
}

// openWeb serves the HTTP port: the web page, /api/, /metrics, /healthz.
func (d *Daemon) openWeb(ctx context.Context) error {
	cfg := &d.Config
	w := web.New(cfg.MetricsAddr, d.pipe)
	w.TLSConfig = d.tls
	w.Token = cfg.Token
	w.MetricsOpen = cfg.MetricsOpen
	w.Quantiles = cfg.MetricsQuantiles
	w.LastN = cfg.MetricsLastN
	w.MaxStreams = cfg.MetricsMaxStreams
	w.History = cfg.WebHistory
	w.Interval = cfg.WebInterval
	w.Pprof = cfg.Pprof
	w.Logger = d.Logger
	if d.tcp != nil {
		w.TCPStats = d.tcp.Stats
		w.TCPAddr = d.TCPAddr()
	}
	if d.ckpt != nil {
		w.Health = d.ckpt.Err
		w.Checkpoints = d.checkpointStats
	}
	if d.grpcConns != nil {
		w.GRPCConns = d.grpcConns.Stats
	}
	if err := w.Open(ctx); err != nil {
		return fmt.Errorf("open http: %w", err)
	}
	d.web = w
	return nil
}

// GRPCAddr returns the gRPC listener's address ("" before Open).
func (d *Daemon) GRPCAddr() string { return addrString(d.grpcLn) }

// TCPAddr returns the TCP ingest listener's address.
func (d *Daemon) TCPAddr() string {
	if d.tcp == nil {
		return ""
	}
	return d.tcp.ListenAddr().String()
}

// MetricsAddr returns the HTTP listener's address.
func (d *Daemon) MetricsAddr() string {
	if d.web == nil {
		return ""
	}
	return d.web.ListenAddr()
}

func addrString(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// Pipeline returns the daemon's pipeline.
func (d *Daemon) Pipeline() *pipeline.Pipeline { return d.pipe }

// Close shuts down in order. First every way in stops: Push calls
// (refused with Unavailable; calls in progress stop receiving, see
// api.Server.StopPush), the TCP listener and its connections (which finish
// what they decoded), and the Kafka consumer (which checkpoints and
// commits what it delivered). Then the windows in flight are finished, the
// pipeline refuses any accept, and the final checkpoint is written: it
// holds every value any way in accepted. Queries are answered until then;
// last, gRPC stops gracefully — forcibly once ctx ends — and so does the
// HTTP server. A final checkpoint that fails is an error of Close.
func (d *Daemon) Close(ctx context.Context) error {
	var errs []error
	if d.health != nil {
		d.health.Shutdown()
	}
	if d.api != nil {
		if err := d.api.StopPush(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if d.tcp != nil {
		if err := d.tcp.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close tcp ingest: %w", err))
		}
	}
	if d.handoff != nil {
		d.handoff.Leaving()
	}
	if d.ckpt != nil {
		d.ckpt.Close()
	}
	if d.stop != nil {
		// Stops the Kafka consumer, which checkpoints and commits what it
		// delivered before it returns.
		d.stop()
	}
	if d.kafkaDone != nil {
		select {
		case <-d.kafkaDone:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop kafka: %w", ctx.Err()))
		}
		d.kafkaStopped.Store(true)
	}
	if d.handoff != nil {
		// Waits for the partitions given up to be handed over.
		d.handoff.Close(ctx)
	}
	if d.dirStop != nil {
		d.dirStop()
	}
	if d.pipe != nil {
		if err := d.pipe.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		// Never overwrite a checkpoint that could not be restored.
		if d.ckpt != nil {
			if err := d.ckpt.Checkpoint(ctx); err != nil {
				errs = append(errs, fmt.Errorf("final checkpoint failed, the values accepted since the last checkpoint are lost: %w", err))
			}
		}
	}
	if d.grpc != nil {
		stopped := make(chan struct{})
		go func() {
			d.grpc.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-ctx.Done():
			d.grpc.Stop()
			<-stopped
		}
	}
	if d.web != nil {
		if err := d.web.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	d.wg.Wait()
	if d.peers != nil {
		_ = d.peers.Close()
	}
	if d.lock != nil {
		if err := d.lock.Unlock(); err != nil {
			errs = append(errs, fmt.Errorf("unlock data dir: %w", err))
		}
	}
	if d.sorter != nil {
		if err := d.sorter.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close sorter: %w", err))
		}
	}
	err := errors.Join(errs...)
	if err != nil {
		d.Logger.Error("streamd stopped", "err", err)
		return err
	}
	d.Logger.Info("streamd stopped")
	return nil
}
