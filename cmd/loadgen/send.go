package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "streamd/api/proto/streamd/v1"
	"streamd/ingest"
	"streamd/internal/grpcauth"
	"streamd/internal/tlsconf"
	"streamd/loadgen"
)

// sendFlags are the flags of the commands that send values: the target,
// the pace, the report and the verification.
type sendFlags struct {
	target      string
	addr        string
	grpcAddr    string
	token       string
	tls         bool
	tlsCA       string
	tlsInsecure bool
	durable     bool
	brokers     string
	kafkaSASL   string
	kafkaUser   string
	kafkaPass   string
	kafkaTLS    bool
	kafkaTLSCA  string
	topic       string
	kafkaFormat string
	perMessage  int
	kafkaNoKey  bool
	float32     bool

	rate     float64
	count    int64
	duration time.Duration
	conns    int
	batch    int
	progress progressFlag

	verify        bool
	support       float64
	verifyTimeout time.Duration
}

func (f *sendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.target, "target", "tcp", "where to send: tcp (line protocol), tcp-binary (framed protocol), grpc (Push) or kafka")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:7071", "the daemon's TCP ingest address, for the tcp targets")
	fs.StringVar(&f.grpcAddr, "grpc-addr", "127.0.0.1:7070", "the daemon's gRPC address, for the grpc target and --verify")
	fs.StringVar(&f.token, "token", "", "the daemon's token, for gRPC calls and TCP connections (default $STREAMD_TOKEN)")
	fs.BoolVar(&f.tls, "tls", false, "connect to the daemon (tcp, tcp-binary, grpc, --verify) over TLS")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM CA certificates that sign the daemon's (default: the system's); implies --tls")
	fs.BoolVar(&f.tlsInsecure, "tls-insecure", false, "do not check the daemon's certificate (trials only); implies --tls")
	fs.BoolVar(&f.durable, "durable", false, "grpc target: ask the daemon to answer each Push after a checkpoint covers it")
	fs.StringVar(&f.brokers, "kafka-brokers", "127.0.0.1:9092", "comma-separated Kafka brokers, for the kafka target")
	fs.StringVar(&f.topic, "topic", "streamd", "Kafka topic, for the kafka target")
	fs.StringVar(&f.kafkaFormat, "kafka-format", "f64", "Kafka message format: f64, f32 or text")
	fs.IntVar(&f.perMessage, "values-per-message", 1000, "values per Kafka message")
	fs.BoolVar(&f.kafkaNoKey, "kafka-no-key", false, "send Kafka messages without a key, spread over the partitions (the daemon names their stream after the topic)")
	fs.StringVar(&f.kafkaSASL, "kafka-sasl", "", "Kafka SASL mechanism: plain, scram-sha-256 or scram-sha-512")
	fs.StringVar(&f.kafkaUser, "kafka-user", "", "Kafka SASL user")
	fs.StringVar(&f.kafkaPass, "kafka-password", "", "Kafka SASL password (default $STREAMD_KAFKA_PASSWORD)")
	fs.BoolVar(&f.kafkaTLS, "kafka-tls", false, "connect to the Kafka brokers over TLS")
	fs.StringVar(&f.kafkaTLSCA, "kafka-tls-ca", "", "PEM CA certificates that sign the brokers' (default: the system's); implies --kafka-tls")
	fs.BoolVar(&f.float32, "float32", false, "send values as float32 (tcp, tcp-binary; kafka uses --kafka-format)")

	fs.Float64Var(&f.rate, "rate", 0, "values per second over all connections; 0 sends as fast as possible")
	fs.Int64Var(&f.count, "count", 0, "stop after this many values; 0 for no limit")
	fs.DurationVar(&f.duration, "duration", 0, "stop after this long; 0 for no limit")
	fs.IntVar(&f.conns, "conns", 1, "parallel connections")
	fs.IntVar(&f.batch, "batch", 0, fmt.Sprintf("values per write, or per frame for synth --target tcp-binary; 0 means %d, or %d per frame", loadgen.DefaultBatch, loadgen.DefaultFrameValues))
	f.progress = progressFlag{auto: true}
	fs.Var(&f.progress, "progress", `progress report interval: a duration, "auto" (1s on a terminal, 10s otherwise) or "off"`)

	fs.BoolVar(&f.verify, "verify", false, "check the daemon's quantiles and heavy hitters of every stream sent against the exact ones")
	fs.Float64Var(&f.support, "support", 0.01, "heavy-hitter support for --verify")
	fs.DurationVar(&f.verifyTimeout, "verify-timeout", time.Minute, "how long --verify waits, in all, for the daemon to count every value of every stream it checks")
}

// progressFlag is the value of --progress.
type progressFlag struct {
	auto  bool
	every time.Duration // 0: off
}

func (p *progressFlag) String() string {
	switch {
	case p.auto:
		return "auto"
	case p.every == 0:
		return "off"
	}
	return p.every.String()
}

func (p *progressFlag) Set(s string) error {
	switch s {
	case "auto":
		*p = progressFlag{auto: true}
	case "off", "0":
		*p = progressFlag{}
	default:
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration, auto or off")
		}
		*p = progressFlag{every: d}
	}
	return nil
}

// getenv returns the environment variable name, or "" if m has no
// environment.
func (m *Main) getenv(name string) string {
	if m.Getenv == nil {
		return ""
	}
	return m.Getenv(name)
}

// token returns the daemon's token: --token or $STREAMD_TOKEN.
func (m *Main) token(f *sendFlags) string {
	if f.token != "" {
		return f.token
	}
	return m.getenv("STREAMD_TOKEN")
}

// daemonTLS returns the TLS configuration for the daemon, nil without TLS.
func (f *sendFlags) daemonTLS() (*tls.Config, error) {
	if !f.tls && f.tlsCA == "" && !f.tlsInsecure {
		return nil, nil
	}
	return tlsconf.Client(tlsconf.ClientOptions{CAFile: f.tlsCA, Insecure: f.tlsInsecure})
}

// kafkaTransport returns the Kafka transport for SASL and TLS, nil for the
// default.
func (m *Main) kafkaTransport(f *sendFlags) (*kafka.Transport, error) {
	useTLS := f.kafkaTLS || f.kafkaTLSCA != ""
	if f.kafkaSASL == "" && !useTLS {
		return nil, nil
	}
	t := &kafka.Transport{}
	if f.kafkaSASL != "" {
		pass := f.kafkaPass
		if pass == "" {
			pass = m.getenv("STREAMD_KAFKA_PASSWORD")
		}
		mech, err := ingest.KafkaSASL(f.kafkaSASL, f.kafkaUser, pass)
		if err != nil {
			return nil, err
		}
		t.SASL = mech
	}
	if useTLS {
		cfg, err := tlsconf.Client(tlsconf.ClientOptions{CAFile: f.kafkaTLSCA})
		if err != nil {
			return nil, err
		}
		t.TLS = cfg
	}
	return t, nil
}

// dialGRPC connects to the daemon's gRPC address.
func (m *Main) dialGRPC(f *sendFlags) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	tc, err := f.daemonTLS()
	if err != nil {
		return nil, err
	}
	if tc != nil {
		creds = credentials.NewTLS(tc)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if token := m.token(f); token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcauth.Bearer(token)))
	}
	cc, err := grpc.NewClient(f.grpcAddr, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial grpc %s: %w", f.grpcAddr, err)
	}
	return cc, nil
}

// check validates the flags common to every way of sending.
func (f *sendFlags) check() error {
	if f.conns < 1 {
		return usageErrorf("--conns %d: must be at least 1", f.conns)
	}
	if f.rate < 0 || f.count < 0 || f.duration < 0 || f.batch < 0 {
		return usageErrorf("--rate, --count, --duration and --batch must not be negative")
	}
	return nil
}

// send runs src into the target of f, prints the summary and, with
// --verify, the verification.
func (m *Main) send(ctx context.Context, f *sendFlags, src loadgen.Source) error {
	cc, dst, err := m.open(f)
	if err != nil {
		return err
	}
	if cc != nil {
		defer cc.Close()
	}
	m.logger().Info("loadgen sending", "target", f.target, "conns", f.conns, "rate", f.rate, "count", f.count, "duration", f.duration)
	res, err := m.run(ctx, f, dst, src)
	return m.finish(ctx, f, cc, res, err)
}

// destination is where a run sends: target for a Runner; the token and
// TLS of f's address for a FrameRunner; progress reports to pp every
// interval when pp is set.
type destination struct {
	target loadgen.Target
	token  string
	tls    *tls.Config
	pp     *loadgen.ProgressPrinter
	every  time.Duration
}

// open checks f and returns its destination, and the connection to the
// daemon's gRPC address that the grpc target and --verify need (nil
// otherwise; the caller closes it).
func (m *Main) open(f *sendFlags) (*grpc.ClientConn, destination, error) {
	if err := f.check(); err != nil {
		return nil, destination{}, err
	}
	dst := destination{token: m.token(f)}
	dst.pp, dst.every = m.progressPrinter(f.progress)
	var cc *grpc.ClientConn
	var err error
	if f.target == "grpc" || f.verify {
		if cc, err = m.dialGRPC(f); err != nil {
			return nil, destination{}, err
		}
	}
	switch f.target {
	case "tcp", "tcp-binary":
		if dst.tls, err = f.daemonTLS(); err == nil {
			dst.target = &loadgen.TCP{Addr: f.addr, Binary: f.target == "tcp-binary", Float32: f.float32, Token: dst.token, TLS: dst.tls}
		}
	case "grpc":
		dst.target = &loadgen.GRPC{Client: pb.NewStreamdClient(cc), Durable: f.durable}
	case "kafka":
		dst.target, err = m.kafkaTarget(f)
	default:
		err = usageErrorf("unknown --target %q: want tcp, tcp-binary, grpc or kafka", f.target)
	}
	if err != nil {
		if cc != nil {
			cc.Close()
		}
		return nil, destination{}, err
	}
	return cc, dst, nil
}

// kafkaTarget returns the kafka target of f.
func (m *Main) kafkaTarget(f *sendFlags) (*loadgen.Kafka, error) {
	format, err := loadgen.ParseKafkaFormat(f.kafkaFormat)
	if err != nil {
		return nil, err
	}
	k := &loadgen.Kafka{
		Brokers: strings.Split(f.brokers, ","), Topic: f.topic,
		Format: format, ValuesPerMessage: f.perMessage, NoKey: f.kafkaNoKey,
	}
	tr, err := m.kafkaTransport(f)
	if err != nil {
		return nil, err
	}
	if tr != nil {
		k.Transport = tr
	}
	return k, nil
}

// run sends src to dst through a Runner as f says, keeping the values
// sent for --verify.
func (m *Main) run(ctx context.Context, f *sendFlags, dst destination, src loadgen.Source) (*loadgen.Result, error) {
	r := &loadgen.Runner{
		Source: src, Target: dst.target,
		Conns: f.conns, Rate: f.rate, Count: f.count, Duration: f.duration,
		Batch: f.batch, Keep: f.verify,
	}
	if dst.pp != nil {
		r.Progress, r.ProgressInterval = dst.pp.Print, dst.every
		defer dst.pp.Done()
	}
	return r.Run(ctx)
}

// runFrames sends pre-rendered payloads to the tcp-binary address of f
// through a FrameRunner, keeping the counts sent for --verify.
func (m *Main) runFrames(ctx context.Context, f *sendFlags, dst destination, payloads []*loadgen.Payload) (*loadgen.Result, error) {
	r := &loadgen.FrameRunner{
		Addr: f.addr, Payloads: payloads, Token: dst.token, TLS: dst.tls,
		Conns: f.conns, Rate: f.rate, Count: f.count, Duration: f.duration,
		Keep: f.verify,
	}
	if dst.pp != nil {
		r.Progress, r.ProgressInterval = dst.pp.Print, dst.every
		defer dst.pp.Done()
	}
	return r.Run(ctx)
}

// finish ends a run: it prints the summary (unless the run failed before
// sending anything) and, with --verify and no error, checks the daemon's
// answers.
func (m *Main) finish(ctx context.Context, f *sendFlags, cc *grpc.ClientConn, res *loadgen.Result, err error) error {
	if res != nil && (err == nil || res.Sent > 0) {
		res.WriteSummary(m.Stdout)
	}
	if err != nil || !f.verify {
		return err
	}
	v, err := loadgen.Verify(ctx, pb.NewStreamdClient(cc), res, loadgen.VerifyConfig{
		Support: f.support, Timeout: f.verifyTimeout,
	})
	if err != nil {
		return err
	}
	v.WriteTo(m.Stdout)
	return v.Err()
}

// logger returns the logger of progress and events, to m.Stderr.
func (m *Main) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(m.Stderr, nil))
}

// progressPrinter returns a printer of progress reports to m.Stderr and
// their interval, as p says, or nil when reports are off.
func (m *Main) progressPrinter(p progressFlag) (*loadgen.ProgressPrinter, time.Duration) {
	term := false
	if f, ok := m.Stderr.(*os.File); ok {
		term = loadgen.IsTerminal(f)
	}
	every := p.every
	if p.auto {
		every = 10 * time.Second
		if term {
			every = time.Second
		}
	}
	if every <= 0 {
		return nil, 0
	}
	return &loadgen.ProgressPrinter{W: m.Stderr, Terminal: term}, every
}
