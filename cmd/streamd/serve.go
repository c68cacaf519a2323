package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	"streamd/feed"
	"streamd/gpusort"
	"streamd/ingest"
	"streamd/internal/connlimit"
	"streamd/internal/grpcauth"
	"streamd/internal/membudget"
	"streamd/internal/tlsconf"
	"streamd/pipeline"
	"streamd/summary"
	"streamd/web"
)

// Config is the daemon's configuration.
type Config struct {
	GRPCAddr    string // gRPC listen address
	TCPAddr     string // TCP ingest listen address; "" disables it
	MetricsAddr string // the HTTP port: the web page, /api/, /metrics, /healthz; "" disables it
	Pprof       bool   // serve the Go profiler under /debug/pprof/ on MetricsAddr
	DataDir     string // where state is kept
	Sorter      string // gpusort back-end: auto, cpu, or a GPU one
	TLSCert     string // PEM certificate for gRPC, HTTP and TCP ingest; with TLSKey enables TLS
	TLSKey      string
	Token       string // bearer token every RPC, HTTP request and TCP ingest connection must carry; "" for none

	MaxMemory      MemoryLimit   // memory budget of the streams
	MaxConnections int           // TCP ingest connections served at once; 0 for no limit
	IdleTimeout    time.Duration // TCP ingest connections idle this long are closed; 0 for never
	MaxLineBytes   int           // longest line of the TCP line protocol
	MaxFrameBytes  int           // longest frame body of the TCP framed protocol

	// TCP ingest connections not yet past their TLS handshake and token:
	// how long they have, and how many may wait at once (0: an eighth of
	// MaxConnections, at least 16).
	HandshakeTimeout   time.Duration
	MaxUnauthenticated int

	GRPCMaxConnections   int           // gRPC connections open at once; 0 for no limit
	GRPCIdleTimeout      time.Duration // gRPC connections without calls this long are closed; 0 for never
	GRPCHandshakeTimeout time.Duration // time a gRPC connection has for its TLS and HTTP/2 handshakes

	GRPCMaxStreams    int // concurrent gRPC calls (streams) one connection may open
	MaxWatches        int // Watch calls open at once in the daemon
	MaxWatchesPerConn int // Watch calls open at once on one gRPC connection

	MetricsOpen       bool          // serve /metrics without the token
	MetricsQuantiles  []float64     // φs of the per-stream summary in /metrics
	MetricsLastN      uint64        // the summary's quantiles are of the last n values; 0: all history
	MetricsMaxStreams int           // streams with per-stream series and page history
	WebHistory        time.Duration // how long the page's samples are kept; 0 keeps none
	WebInterval       time.Duration // time between the page's samples

	CheckpointInterval time.Duration // how often state is written to DataDir; 0 disables

	KafkaBrokers         []string
	KafkaTopics          []string
	KafkaGroup           string
	KafkaFormats         map[string]ingest.Format // per topic; text by default
	KafkaStreamFromTopic bool
	KafkaMessageTime     bool          // messages' timestamps are their values' arrival times
	KafkaSessionTimeout  time.Duration // group session timeout; a dead member holds its partitions this long
	KafkaSASL            string        // SASL mechanism: plain, scram-sha-256, scram-sha-512; "" for none
	KafkaUser            string
	KafkaPassword        string
	KafkaTLS             bool   // connect to the brokers over TLS
	KafkaTLSCA           string // PEM CA certificates to trust; "" for the system's
	KafkaTLSCert         string // PEM client certificate, with KafkaTLSKey
	KafkaTLSKey          string

	AdvertiseAddr  string        // gRPC address the daemon's peers reach it at; "" for GRPCAddr's listener
	ClusterTopic   string        // compacted topic where the members of a group announce themselves
	ClusterTimeout time.Duration // how long a cluster answer waits for the members
	ClusterPeers   []string      // peers asked besides the announced members
	ClusterCA      string        // PEM file of the CA of the peers' certificates

	Stream     summary.Config // defaults of streams created on first data
	MaxStreams int
	Queue      int // full windows waiting for the sorter before ingest blocks
	Workers    int // batches sorted and summarised at once; 0: one per core

	ShutdownTimeout time.Duration
	LogLevel        slog.Level
	LogJSON         bool
}

// DefaultConfig returns the defaults: local ports 7070 (gRPC), 7071 (TCP
// ingest), 7072 (metrics), data in ./streamd-data, the auto sorter.
func DefaultConfig() Config {
	return Config{
		GRPCAddr:           "127.0.0.1:7070",
		TCPAddr:            "127.0.0.1:7071",
		MetricsAddr:        "127.0.0.1:7072",
		MetricsQuantiles:   []float64{0.5, 0.9, 0.99},
		MetricsMaxStreams:  1000,
		WebHistory:         5 * time.Minute,
		WebInterval:        time.Second,
		DataDir:            "streamd-data",
		Sorter:             "auto",
		KafkaGroup:         "streamd",
		ClusterTopic:       cluster.DefaultTopic,
		ClusterTimeout:     cluster.DefaultTimeout,
		CheckpointInterval: 10 * time.Second,
		Stream:             summary.Config{}.WithDefaults(),
		MaxMemory:          DefaultMaxMemory,
		MaxConnections:     ingest.DefaultMaxConnections,
		IdleTimeout:        ingest.DefaultIdleTimeout,
		MaxLineBytes:       ingest.DefaultMaxLineBytes,
		MaxFrameBytes:      ingest.MaxFrameLen,
		MaxStreams:         100000,
		GRPCMaxStreams:     DefaultGRPCMaxStreams,
		MaxWatches:         api.DefaultMaxWatches,
		MaxWatchesPerConn:  api.DefaultMaxWatchesPerConn,
		Queue:              16,
		ShutdownTimeout:    10 * time.Second,
		LogLevel:           slog.LevelInfo,

		HandshakeTimeout:     ingest.DefaultHandshakeTimeout,
		GRPCMaxConnections:   DefaultGRPCMaxConnections,
		GRPCIdleTimeout:      5 * time.Minute,
		GRPCHandshakeTimeout: 5 * time.Second,
	}
}

// ConfigError reports an invalid configuration field.
type ConfigError struct {
	Field string
	Value any
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("config %s=%v: %v", e.Field, e.Value, e.Err) }

func (e *ConfigError) Unwrap() error { return e.Err }

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.GRPCAddr == "" {
		return &ConfigError{"grpc-addr", c.GRPCAddr, errors.New("required")}
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return &ConfigError{"tls-cert", c.TLSCert, errors.New("tls-cert and tls-key go together")}
	}
	if _, err := gpusort.Lookup(c.Sorter); err != nil {
		return &ConfigError{"sorter", c.Sorter, err}
	}
	if err := c.Stream.Validate(); err != nil {
		// Name the flag, not the summary's field.
		var ce *summary.ConfigError
		if errors.As(err, &ce) {
			return &ConfigError{strings.ReplaceAll(ce.Field, "_", "-"), ce.Value, ce.Err}
		}
		return &ConfigError{"stream defaults", "", err}
	}
	if len(c.KafkaBrokers) > 0 && len(c.KafkaTopics) == 0 {
		return &ConfigError{"kafka-topic", "", errors.New("required with kafka-brokers")}
	}
	if len(c.KafkaTopics) > 0 && c.DataDir == "" {
		return &ConfigError{"data-dir", "", errors.New("required with kafka: offsets live in checkpoints")}
	}
	if c.Pprof && c.MetricsAddr == "" {
		return &ConfigError{"pprof", c.Pprof, errors.New("needs a metrics-addr to serve on")}
	}
	if c.Workers < 0 {
		return &ConfigError{"sort-workers", c.Workers, errors.New("must not be negative")}
	}
	if c.MaxStreams < 1 {
		return &ConfigError{"max-streams", c.MaxStreams, errors.New("must be positive")}
	}
	if c.AdvertiseAddr != "" {
		if _, _, err := net.SplitHostPort(c.AdvertiseAddr); err != nil {
			return &ConfigError{"advertise-addr", c.AdvertiseAddr, err}
		}
	}
	for _, p := range c.ClusterPeers {
		if _, _, err := net.SplitHostPort(p); err != nil {
			return &ConfigError{"cluster-peers", p, err}
		}
	}
	if c.ClusterTimeout <= 0 {
		return &ConfigError{"cluster-timeout", c.ClusterTimeout, errors.New("must be positive")}
	}
	if c.Token != "" {
		if err := ingest.ValidToken(c.Token); err != nil {
			return &ConfigError{"token", "(hidden)", err}
		}
	}
	if c.MaxConnections < 0 {
		return &ConfigError{"max-connections", c.MaxConnections, errors.New("must not be negative")}
	}
	if c.IdleTimeout < 0 {
		return &ConfigError{"idle-timeout", c.IdleTimeout, errors.New("must not be negative")}
	}
	if c.HandshakeTimeout <= 0 {
		return &ConfigError{"handshake-timeout", c.HandshakeTimeout, errors.New("must be positive")}
	}
	if c.MaxUnauthenticated < 0 {
		return &ConfigError{"max-unauthenticated", c.MaxUnauthenticated, errors.New("must not be negative")}
	}
	if c.GRPCMaxConnections < 0 {
		return &ConfigError{"grpc-max-connections", c.GRPCMaxConnections, errors.New("must not be negative")}
	}
	if c.GRPCIdleTimeout < 0 {
		return &ConfigError{"grpc-idle-timeout", c.GRPCIdleTimeout, errors.New("must not be negative")}
	}
	if c.GRPCHandshakeTimeout <= 0 {
		return &ConfigError{"grpc-handshake-timeout", c.GRPCHandshakeTimeout, errors.New("must be positive")}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"grpc-max-streams", c.GRPCMaxStreams}, {"max-watches", c.MaxWatches}, {"max-watches-per-conn", c.MaxWatchesPerConn}} {
		if f.v < 1 {
			return &ConfigError{f.name, f.v, errors.New("must be positive")}
		}
	}
	if c.MaxLineBytes < 1 {
		return &ConfigError{"max-line-bytes", c.MaxLineBytes, errors.New("must be positive")}
	}
	if c.MaxFrameBytes < 1 || c.MaxFrameBytes > ingest.MaxFrameLen {
		return &ConfigError{"max-frame-bytes", c.MaxFrameBytes, fmt.Errorf("want 1 to %d", ingest.MaxFrameLen)}
	}
	if c.KafkaSASL != "" {
		if _, err := ingest.KafkaSASL(c.KafkaSASL, c.KafkaUser, c.KafkaPassword); err != nil {
			return &ConfigError{"kafka-sasl", c.KafkaSASL, err}
		}
	} else if c.KafkaUser != "" {
		return &ConfigError{"kafka-user", c.KafkaUser, errors.New("needs kafka-sasl")}
	}
	if (c.KafkaTLSCert == "") != (c.KafkaTLSKey == "") {
		return &ConfigError{"kafka-tls-cert", c.KafkaTLSCert, errors.New("kafka-tls-cert and kafka-tls-key go together")}
	}
	for i, phi := range c.MetricsQuantiles {
		if !(phi >= 0 && phi <= 1) {
			return &ConfigError{"metrics-quantiles", phi, errors.New("outside [0, 1]")}
		}
		if slices.Contains(c.MetricsQuantiles[:i], phi) {
			return &ConfigError{"metrics-quantiles", phi, errors.New("given twice")}
		}
	}
	if c.MetricsMaxStreams < 0 {
		return &ConfigError{"metrics-max-streams", c.MetricsMaxStreams, errors.New("must not be negative")}
	}
	if c.WebHistory < 0 {
		return &ConfigError{"web-history", c.WebHistory, errors.New("must not be negative")}
	}
	if c.WebHistory > 0 && c.WebInterval <= 0 {
		return &ConfigError{"web-interval", c.WebInterval, errors.New("must be positive")}
	}
	return nil
}

// memoryBudget resolves --max-memory and checks that it holds at least one
// stream of the default configuration.
func (c *Config) memoryBudget() (int64, error) {
	limit, err := c.MaxMemory.Resolve()
	if err != nil {
		return 0, &ConfigError{"max-memory", c.MaxMemory, err}
	}
	if need := pipeline.StreamFootprint(c.Stream).Reserve; limit > 0 && need > limit {
		return 0, &ConfigError{"max-memory", c.MaxMemory, fmt.Errorf("%s cannot hold one stream of the defaults, which needs %s", membudget.Size(limit), membudget.Size(need))}
	}
	return limit, nil
}

// kafkaDialer returns the dialer of the Kafka consumer: nil for kafka-go's
// default, or one with SASL and TLS as configured.
func (c *Config) kafkaDialer() (*kafka.Dialer, error) {
	useTLS := c.KafkaTLS || c.KafkaTLSCA != "" || c.KafkaTLSCert != ""
	if c.KafkaSASL == "" && !useTLS {
		return nil, nil
	}
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true}
	if c.KafkaSASL != "" {
		m, err := ingest.KafkaSASL(c.KafkaSASL, c.KafkaUser, c.KafkaPassword)
		if err != nil {
			return nil, err
		}
		d.SASLMechanism = m
	}
	if useTLS {
		cfg, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: c.KafkaTLSCA, CertFile: c.KafkaTLSCert, KeyFile: c.KafkaTLSKey})
		if err != nil {
			return nil, err
		}
		d.TLS = cfg
	}
	return d, nil
}

// flags binds c to a flag set; environment variables STREAMD_<NAME> set
// defaults that the command line overrides.
func (c *Config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.GRPCAddr, "grpc-addr", c.GRPCAddr, "gRPC listen address")
	fs.StringVar(&c.TCPAddr, "tcp-addr", c.TCPAddr, "TCP ingest listen address (line and binary protocols); empty disables")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "HTTP address of the web page, its JSON API (/api/), Prometheus /metrics and /healthz; empty disables")
	fs.BoolVar(&c.MetricsOpen, "metrics-open", c.MetricsOpen, "serve /metrics without the token")
	fs.Func("metrics-quantiles", "comma-separated φs of the per-stream summary streamd_stream_value in /metrics (default 0.5,0.9,0.99)", func(v string) error {
		phis, err := floats(splitList(v))
		c.MetricsQuantiles = phis
		return err
	})
	fs.Uint64Var(&c.MetricsLastN, "metrics-last-n", c.MetricsLastN, "export the quantiles of each stream's last n values (at most its sliding window) instead of all history")
	fs.IntVar(&c.MetricsMaxStreams, "metrics-max-streams", c.MetricsMaxStreams, "most streams, the first by name, with per-stream series in /metrics and history on the web page")
	fs.DurationVar(&c.WebHistory, "web-history", c.WebHistory, "how long the web page's samples of each stream are kept (0: none)")
	fs.DurationVar(&c.WebInterval, "web-interval", c.WebInterval, "time between the web page's samples of each stream")
	fs.BoolVar(&c.Pprof, "pprof", c.Pprof, "serve the Go profiler (net/http/pprof) under /debug/pprof/ on the HTTP port, behind the token")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory for the daemon's state")
	fs.StringVar(&c.Sorter, "sorter", c.Sorter, fmt.Sprintf("window sorter: one of %v, or gpu (compute, in builds with -tags gpu)", gpusort.BackendNames()))
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate file: serve gRPC, HTTP and TCP ingest over TLS")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM key file of --tls-cert")
	fs.StringVar(&c.Token, "token", c.Token, "token that every RPC and HTTP request (authorization: Bearer) and TCP ingest connection (@auth line or framed preamble) must carry (also STREAMD_TOKEN)")
	fs.Var(&c.MaxMemory, "max-memory", "memory budget of the streams: a size (4GiB, 512MiB) or a share of the machine's memory (50%); 0 for none")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "most TCP ingest connections at once; 0 for no limit")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "close TCP ingest connections that send nothing for this long; 0 for never")
	fs.DurationVar(&c.HandshakeTimeout, "handshake-timeout", c.HandshakeTimeout, "time a TCP ingest connection has to finish its TLS handshake and send the token")
	fs.IntVar(&c.MaxUnauthenticated, "max-unauthenticated", c.MaxUnauthenticated, "most TCP ingest connections at once still in their TLS handshake or without the token; a new one displaces the oldest (0: an eighth of --max-connections, at least 16)")
	fs.IntVar(&c.GRPCMaxConnections, "grpc-max-connections", c.GRPCMaxConnections, "most gRPC connections at once; more are closed at once; 0 for no limit")
	fs.DurationVar(&c.GRPCIdleTimeout, "grpc-idle-timeout", c.GRPCIdleTimeout, "close gRPC connections without calls for this long; 0 for never")
	fs.DurationVar(&c.GRPCHandshakeTimeout, "grpc-handshake-timeout", c.GRPCHandshakeTimeout, "time a gRPC connection has to finish its TLS and HTTP/2 handshakes")
	fs.IntVar(&c.GRPCMaxStreams, "grpc-max-streams", c.GRPCMaxStreams, "most gRPC calls open at once on one connection (health checks included); more wait for one to end")
	fs.IntVar(&c.MaxWatches, "max-watches", c.MaxWatches, "most Watch calls open at once; more fail with ResourceExhausted")
	fs.IntVar(&c.MaxWatchesPerConn, "max-watches-per-conn", c.MaxWatchesPerConn, "most Watch calls open at once on one gRPC connection; more fail with ResourceExhausted")
	fs.IntVar(&c.MaxLineBytes, "max-line-bytes", c.MaxLineBytes, "longest line of the TCP line protocol; longer ones are skipped and counted")
	fs.IntVar(&c.MaxFrameBytes, "max-frame-bytes", c.MaxFrameBytes, "longest frame body of the TCP framed protocol; a longer one closes the connection")
	fs.Float64Var(&c.Stream.Epsilon, "epsilon", c.Stream.Epsilon, "default ε of new streams")
	fs.IntVar(&c.Stream.WindowSize, "window-size", c.Stream.WindowSize, "default window size W of new streams")
	fs.Int64Var(&c.Stream.SlidingWindow, "sliding-window", c.Stream.SlidingWindow, "default sliding window N of new streams")
	fs.IntVar(&c.MaxStreams, "max-streams", c.MaxStreams, "most streams the daemon keeps")
	fs.IntVar(&c.Queue, "queue", c.Queue, "full windows that may wait for the sorter before ingest slows down")
	fs.IntVar(&c.Workers, "sort-workers", c.Workers, "batches of windows sorted and summarised at once (0: GOMAXPROCS, at least 4; GOMAXPROCS is two per core with a GPU sorter unless set in the environment)")
	fs.DurationVar(&c.CheckpointInterval, "checkpoint-interval", c.CheckpointInterval, "how often state is checkpointed to the data dir (0: only at shutdown)")
	fs.Func("kafka-brokers", "comma-separated Kafka brokers to consume from", func(v string) error {
		c.KafkaBrokers = splitList(v)
		return nil
	})
	fs.Func("kafka-topic", "Kafka topic to consume (repeat or comma-separate for several); append =f64, =f32, =text or =items to set its message format", func(v string) error {
		for _, t := range splitList(v) {
			name, format, _ := strings.Cut(t, "=")
			c.KafkaTopics = append(c.KafkaTopics, name)
			if format == "" {
				continue
			}
			f, err := parseFormat(format)
			if err != nil {
				return err
			}
			if c.KafkaFormats == nil {
				c.KafkaFormats = make(map[string]ingest.Format)
			}
			c.KafkaFormats[name] = f
		}
		return nil
	})
	fs.StringVar(&c.KafkaGroup, "kafka-group", c.KafkaGroup, "Kafka consumer group; daemons in one group share the partitions")
	fs.DurationVar(&c.KafkaSessionTimeout, "kafka-session-timeout", ingest.DefaultKafkaSessionTimeout, "Kafka group session timeout: how long a crashed member keeps its partitions")
	fs.BoolVar(&c.KafkaStreamFromTopic, "kafka-stream-from-topic", c.KafkaStreamFromTopic, "name streams after the topic even when messages have keys")
	fs.BoolVar(&c.KafkaMessageTime, "kafka-message-time", c.KafkaMessageTime, "use messages' timestamps as their values' arrival times (time windows) instead of the daemon's clock")
	fs.StringVar(&c.KafkaSASL, "kafka-sasl", c.KafkaSASL, "Kafka SASL mechanism: plain, scram-sha-256 or scram-sha-512")
	fs.StringVar(&c.KafkaUser, "kafka-user", c.KafkaUser, "Kafka SASL user")
	fs.StringVar(&c.KafkaPassword, "kafka-password", c.KafkaPassword, "Kafka SASL password (better: STREAMD_KAFKA_PASSWORD)")
	fs.BoolVar(&c.KafkaTLS, "kafka-tls", c.KafkaTLS, "connect to the Kafka brokers over TLS")
	fs.StringVar(&c.KafkaTLSCA, "kafka-tls-ca", c.KafkaTLSCA, "PEM CA certificates that sign the brokers' (default: the system's); implies --kafka-tls")
	fs.StringVar(&c.KafkaTLSCert, "kafka-tls-cert", c.KafkaTLSCert, "PEM client certificate for brokers that check clients; implies --kafka-tls")
	fs.StringVar(&c.KafkaTLSKey, "kafka-tls-key", c.KafkaTLSKey, "PEM key of --kafka-tls-cert")
	fs.StringVar(&c.AdvertiseAddr, "advertise-addr", c.AdvertiseAddr, "gRPC address the other daemons of the group reach this one at (default: the gRPC listener's)")
	fs.StringVar(&c.ClusterTopic, "cluster-topic", c.ClusterTopic, "compacted Kafka topic where the daemons of a group announce themselves")
	fs.DurationVar(&c.ClusterTimeout, "cluster-timeout", c.ClusterTimeout, "how long a cluster answer waits for the other daemons")
	fs.Func("cluster-peers", "comma-separated gRPC addresses of daemons to ask besides the announced ones", func(v string) error {
		c.ClusterPeers = append(c.ClusterPeers, splitList(v)...)
		return nil
	})
	fs.StringVar(&c.ClusterCA, "cluster-ca", c.ClusterCA, "PEM file of the CA that signed the other daemons' certificates (default: the system's and --tls-cert)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long a graceful shutdown may take")
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn, error")
	fs.BoolVar(&c.LogJSON, "log-json", c.LogJSON, "log as JSON lines")
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func parseFormat(s string) (ingest.Format, error) {
	for _, f := range ingest.Formats() {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("unknown kafka format %q (text, f64, f32 or items)", s)
}

// newServeFlags returns serve's flag set bound to cfg.
func newServeFlags(cfg *Config) *flag.FlagSet {
	fs := flag.NewFlagSet("streamd serve", flag.ContinueOnError)
	cfg.flags(fs)
	return fs
}

// applyEnv sets flags from STREAMD_* environment variables.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "STREAMD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", name, e)
			}
		}
	})
	return err
}

func (m *Main) serve(ctx context.Context, args []string) error {
	cfg := DefaultConfig()
	fs := newServeFlags(&cfg)
	if helpAsked(args) {
		fs.SetOutput(m.Stdout)
		fs.Usage()
		return errHelpShown
	}
	// The flag package would print a bad flag's error with the whole
	// usage; Exit prints the error alone, with a pointer to the usage.
	fs.SetOutput(io.Discard)
	if err := applyEnv(fs, os.Getenv); err != nil {
		return &usageError{err: err}
	}
	if err := fs.Parse(args); err != nil {
		return &usageError{err: fmt.Errorf("serve: %w (streamd serve -h lists the flags)", err)}
	}
	if fs.NArg() > 0 {
		return &usageError{err: fmt.Errorf("serve: takes no arguments, not %q", fs.Arg(0))}
	}
	var handler slog.Handler = slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	if cfg.LogJSON {
		handler = slog.NewJSONHandler(m.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	}
	logger := slog.New(handler)
	d := NewDaemon(cfg, logger)
	if err := d.Open(ctx); err != nil {
		return err
	}
	if limit := d.MemoryLimit(); limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		// The garbage collector keeps the heap near the budget instead
		// of letting it grow to twice what is live.
		soft := limit + memoryHeadroom(limit)
		debug.SetMemoryLimit(soft)
		logger.Info("go memory limit set", "limit", membudget.Size(soft))
	}
	<-ctx.Done()
	// A second signal aborts the graceful shutdown: listen for it before
	// saying so.
	abort, stop := signalContext()
	defer stop()
	logger.Info("shutting down; interrupt again to abort")
	closeCtx, cancel := context.WithTimeout(abort, cfg.ShutdownTimeout)
	defer cancel()
	return d.Close(closeCtx)
}

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
	ckptMu       sync.Mutex // one checkpoint at a time; guards seq and offsets
	seq          uint64
	offsets      offsets // Kafka offsets in the last snapshot
	checkpoints  atomic.Int64
	ckptHealth   checkpointHealth
	kafka        *ingest.KafkaConsumer
	kafkaStopped atomic.Bool
	kafkaDone    chan struct{}
	restored     bool               // state came from the data dir (or there was none)
	stop         context.CancelFunc // ends the checkpoint loop and Kafka

	memberID string
	peers    *cluster.Peers
	gatherer *cluster.Gatherer
	dir      *cluster.Directory // the group's members; nil without Kafka
	partsMu  sync.Mutex
	parts    []feed.Source // every partition of the topics
	partsAt  time.Time
	// partsRefreshing is set while the list of partitions is being read.
	partsRefreshing bool

	stopping    atomic.Bool        // Close has begun
	dirStop     context.CancelFunc // ends the directory
	handoffMu   sync.Mutex
	handoffLeft map[feed.Source]bool // given up at shutdown, not yet handed over
	handoffDone chan struct{}        // closed when handoffLeft empties
}

// DurabilityService is the name under which the gRPC health service
// reports whether checkpoints succeed: NOT_SERVING from a failed checkpoint
// until one succeeds, SERVING otherwise (also without a data dir). The
// overall status ("") and the API's (streamd.v1.Streamd) stay SERVING,
// since queries and ingest go on; a restart would not mend the disk and
// would lose the values since the last checkpoint.
const DurabilityService = "streamd.durability"

// checkpointHealth is the outcome of the daemon's checkpoints, for health
// and metrics.
type checkpointHealth struct {
	mu       sync.Mutex
	err      error     // the last checkpoint's failure; nil once one succeeds
	failedAt time.Time // when it failed
	lastOK   time.Time // when the last checkpoint succeeded, or Open restored
	failures uint64
}

// checkpointed records a checkpoint's outcome and returns err: a failure
// degrades the daemon's health (/healthz answers 503, DurabilityService is
// NOT_SERVING) until a later checkpoint succeeds. An error of a cancelled
// context is no outcome: the checkpoint was abandoned, not failed.
func (d *Daemon) checkpointed(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	h := &d.ckptHealth
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.err, h.failedAt = err, time.Now()
		h.failures++
		d.Logger.Error("checkpoint failed; health is degraded until one succeeds", "err", err, "failures", h.failures)
	} else {
		if h.err != nil {
			d.Logger.Info("checkpoint succeeded again: health restored")
		}
		h.err, h.lastOK = nil, time.Now()
	}
	d.setDurabilityLocked()
	return err
}

// setDurabilityLocked sets DurabilityService's status from the last
// checkpoint's outcome. The caller holds ckptHealth.mu.
func (d *Daemon) setDurabilityLocked() {
	st := healthpb.HealthCheckResponse_SERVING
	if d.ckptHealth.err != nil {
		st = healthpb.HealthCheckResponse_NOT_SERVING
	}
	d.health.SetServingStatus(DurabilityService, st)
}

// durability returns why the daemon is degraded: the last checkpoint's
// failure, or nil.
func (d *Daemon) durability() error {
	h := &d.ckptHealth
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return fmt.Errorf("degraded: the checkpoint at %s failed (%d failures so far): %w", h.failedAt.UTC().Format(time.RFC3339), h.failures, h.err)
	}
	return nil
}

// checkpointStats returns the checkpoint counters for /metrics.
func (d *Daemon) checkpointStats() web.CheckpointStats {
	h := &d.ckptHealth
	h.mu.Lock()
	defer h.mu.Unlock()
	return web.CheckpointStats{Failures: h.failures, LastSuccess: h.lastOK}
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
	if usesGPU(d.sorter) && os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) <= runtime.NumCPU() {
		// The GL thread's calls into the driver hold a P of the Go
		// scheduler while they run or wait, so with one P per core the
		// other goroutines wait while a core idles.
		n := 2 * runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(n)
		d.Logger.Info("two Go threads per core for the GPU sorter", "gomaxprocs", n)
	}
	d.pipe, err = pipeline.New(pipeline.Config{
		Defaults: cfg.Stream, MaxStreams: cfg.MaxStreams, Queue: cfg.Queue, Workers: cfg.Workers,
		Sorter: d.sorter, Logger: d.Logger, MaxMemory: budget,
	})
	if err != nil {
		return err
	}
	d.offsets = offsets{}
	if cfg.DataDir != "" {
		d.store = &checkpoint.Store{Dir: cfg.DataDir, Logger: d.Logger}
		if d.offsets, err = d.restore(); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		d.restored = true
		// The state is what the data dir holds: durable as of now.
		d.ckptHealth.lastOK = time.Now()
	}
	if err := d.pipe.Open(ctx); err != nil {
		return err
	}
	var bg context.Context
	bg, d.stop = context.WithCancel(context.WithoutCancel(ctx))
	if d.store != nil && cfg.CheckpointInterval > 0 {
		d.wg.Go(func() { d.checkpointLoop(bg) })
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
	d.ckptHealth.mu.Lock()
	d.setDurabilityLocked()
	d.ckptHealth.mu.Unlock()
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
		Assigned: d.assigned,
		Revoked:  d.revoked,
		Dialer:   dialer,
	}
}

// openSorter opens the named back-end. "auto" falls back to the CPU when
// no GPU context can be had, saying why once.
func openSorter(name string, logger *slog.Logger) (gpusort.Digester, error) {
	newSorter, err := gpusort.Lookup(name)
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

// usesGPU reports whether s sorts on a GPU.
func usesGPU(s gpusort.Sorter) bool {
	if a, ok := s.(*gpusort.Auto); ok {
		return a.GPUErr() == nil
	}
	return s.Name() != "cpu"
}

// DefaultGRPCMaxStreams is the default of Config.GRPCMaxStreams.
const DefaultGRPCMaxStreams = 1024

// maxGRPCSend bounds a gRPC reply: the API's bounds keep replies far below
// it (ListStreams, the largest, holds at most --max-streams names of 200
// bytes: 20 MB at the default).
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
	if d.store != nil {
		d.api.Durable = func(ctx context.Context) error { return d.checkpointed(d.checkpoint(ctx)) }
	}
	pb.RegisterStreamdServer(d.grpc, d.api)
	pb.RegisterPeerServer(d.grpc, peerServer{d: d})
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
	if d.store != nil {
		w.Health = d.durability
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
	d.stopping.Store(true)
	if d.stop != nil {
		// Stops the checkpoint loop and the Kafka consumer, which
		// checkpoints and commits what it delivered before it returns.
		d.stop()
	}
	if d.kafkaDone != nil {
		select {
		case <-d.kafkaDone:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("stop kafka: %w", ctx.Err()))
		}
		d.kafkaStopped.Store(true)
		d.awaitHandoff(ctx)
	}
	if d.dirStop != nil {
		d.dirStop()
	}
	if d.pipe != nil {
		if err := d.pipe.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		// Never overwrite a checkpoint that could not be restored.
		if d.restored {
			if err := d.checkpointed(d.checkpoint(ctx)); err != nil {
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
