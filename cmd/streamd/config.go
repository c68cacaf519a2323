package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"streamd/api"
	"streamd/cluster"
	"streamd/gpusort/registry"
	"streamd/ingest"
	"streamd/internal/membudget"
	"streamd/internal/tlsconf"
	"streamd/pipeline"
	"streamd/summary"
)

// DefaultGRPCMaxStreams is the default of Config.GRPCMaxStreams.
const DefaultGRPCMaxStreams = 1024

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

	// IdleFlush is how long a stream (or one of its Kafka partitions) must
	// go without values before its partial window is flushed: digested
	// into its summaries, or kept raw in a buffer of its size when that
	// takes less (pipeline.Config.IdleFlush); 0 for never.
	IdleFlush time.Duration

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

// pipelineIdleFlush returns the pipeline's IdleFlush for c's: negative,
// never, for 0.
func (c Config) pipelineIdleFlush() time.Duration {
	if c.IdleFlush == 0 {
		return -1
	}
	return c.IdleFlush
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
		IdleFlush:          pipeline.DefaultIdleFlush,
		Stream:             summary.Config{}.WithDefaults(),
		MaxMemory:          DefaultMaxMemory,
		MaxConnections:     ingest.DefaultMaxConnections,
		IdleTimeout:        ingest.DefaultIdleTimeout,
		MaxLineBytes:       ingest.DefaultMaxLineBytes,
		MaxFrameBytes:      ingest.MaxFrameLen,
		MaxStreams:         1000000,
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
	if _, err := registry.Lookup(c.Sorter); err != nil {
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
	if c.IdleFlush < 0 {
		return &ConfigError{"idle-flush", c.IdleFlush, errors.New("must not be negative")}
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
	if need := pipeline.StreamFootprint(c.Stream).Worst; limit > 0 && need > limit {
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
	fs.StringVar(&c.Sorter, "sorter", c.Sorter, fmt.Sprintf("window sorter: one of %v, or gpu (compute, in builds with -tags gpu)", registry.Names()))
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
	fs.IntVar(&c.Workers, "sort-workers", c.Workers, "batches of windows sorted and summarised at once (0: GOMAXPROCS, at least 4, or 256 with a GPU sorter, which sends the batches waiting for it together)")
	fs.DurationVar(&c.IdleFlush, "idle-flush", c.IdleFlush, "flush the partial window of a stream without values for this long: digest it into the summaries when they keep it in less memory, else free its buffer's spare room (0: never)")
	fs.DurationVar(&c.CheckpointInterval, "checkpoint-interval", c.CheckpointInterval, "how often state is checkpointed to the data dir (0: only at shutdown)")
	fs.Func("kafka-brokers", "comma-separated Kafka brokers to consume from", func(v string) error {
		c.KafkaBrokers = splitList(v)
		return nil
	})
	fs.Func("kafka-topic", "Kafka topic to consume (repeat or comma-separate for several); append =f64, =f32, =text, =items, =pairs or =pairs-f64 to set its message format", func(v string) error {
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
	return 0, fmt.Errorf("unknown kafka format %q (text, f64, f32, items, pairs or pairs-f64)", s)
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
