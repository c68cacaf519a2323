// Command kafkadev runs a stand-in for a Kafka broker in one process, to try
// streamd's Kafka ingest on one machine without installing Kafka. It is
// kfake, the fake Kafka cluster that franz-go uses in its tests: it speaks
// the Kafka protocol well enough for producers such as kcat and loadgen and
// for streamd's consumer group, but it is one process with one broker, it
// keeps every message in memory, and it has no replication and no tuning.
// Do not use it in production, nor to measure Kafka.
//
// Usage:
//
//	kafkadev [-addr 127.0.0.1:9092] [-topics values:4[,name:partitions...]] [-data-dir DIR]
//
// kafkadev creates the topics of -topics up front, each with its number of
// partitions, prints the address it listens on, and serves until it is
// interrupted. For example:
//
//	kafkadev -addr 127.0.0.1:9092 -topics values:4 &
//	echo "12.5 13.1" | kcat -P -b 127.0.0.1:9092 -t values -k latency
//
// Without -data-dir, the messages, topics and committed offsets are lost
// when kafkadev stops. With -data-dir, kfake writes them to the directory as
// it goes and loads them again at start (kfake's DataDir option): a topic of
// -topics that exists already keeps its partitions. Writes are not synced
// to disk one by one unless -sync is given, so a crash of the machine may
// lose the last messages, as with Kafka's default settings.
//
// Producers may send batches of up to -max-message-bytes (16 MiB by
// default, so that loadgen's batches fit; Kafka's default is 1 MiB).
//
// To try streamd's Kafka security options, -sasl PLAIN, SCRAM-SHA-256 or
// SCRAM-SHA-512 with -sasl-user and -sasl-password requires clients to
// authenticate with that mechanism (kfake's EnableSASL and Superuser), and
// -tls-cert with -tls-key makes the broker speak TLS only:
//
//	kafkadev -sasl SCRAM-SHA-256 -sasl-user streamd -sasl-password s3cret -tls-cert cert.pem -tls-key key.pem
//	streamd serve --kafka-brokers 127.0.0.1:9092 --kafka-topic values --kafka-sasl scram-sha-256 \
//	    --kafka-user streamd --kafka-password s3cret --kafka-tls-ca cert.pem
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"

	"streamd/internal/tlsconf"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A second interrupt while the broker closes kills the process.
	context.AfterFunc(ctx, stop)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "kafkadev:", err)
		os.Exit(1)
	}
}

// A topicSpec is a topic to create and its number of partitions.
type topicSpec struct {
	name       string
	partitions int32
}

// config is the configuration of kafkadev, from its flags.
type config struct {
	addr       string
	topics     []topicSpec
	dataDir    string
	syncWrites bool
	maxMessage int
	logLevel   kfake.LogLevel

	sasl, saslUser, saslPassword string // SASL mechanism and its superuser
	tlsCert, tlsKey              string // PEM files: serve TLS
}

// parseFlags parses the command line.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{addr: "127.0.0.1:9092", maxMessage: 16 << 20}
	fs := flag.NewFlagSet("kafkadev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: kafkadev [-addr host:port] [-topics name:partitions,...] [-data-dir DIR]
               [-sasl MECHANISM -sasl-user USER -sasl-password PASSWORD] [-tls-cert FILE -tls-key FILE]

kafkadev runs kfake, an in-process fake Kafka broker, to try streamd's Kafka
ingest on one machine. It is a stand-in for development, not Kafka: one
broker, messages in memory (and in -data-dir if given), no replication, one
SASL user at most. Do not use it in production.

Example:
  kafkadev -addr 127.0.0.1:9092 -topics values:4
  echo "12.5 13.1" | kcat -P -b 127.0.0.1:9092 -t values -k latency

Flags:
`)
		fs.PrintDefaults()
	}
	topics := fs.String("topics", "values:4", "topics to create at start, as a comma-separated list of `name:partitions`")
	fs.StringVar(&cfg.addr, "addr", cfg.addr, "`host:port` to listen on and to advertise to clients; port 0 picks a free port")
	fs.StringVar(&cfg.dataDir, "data-dir", "", "`directory` that keeps topics, messages and committed offsets across restarts; empty keeps them in memory only")
	fs.BoolVar(&cfg.syncWrites, "sync", false, "with -data-dir, sync every write to disk (slower)")
	fs.IntVar(&cfg.maxMessage, "max-message-bytes", cfg.maxMessage, "largest record batch a producer may send, in `bytes`")
	level := fs.String("log-level", "warn", "kfake log `level`: none, error, warn, info or debug")
	fs.StringVar(&cfg.sasl, "sasl", "", "require SASL with this `mechanism`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&cfg.saslUser, "sasl-user", "", "the SASL `user` clients authenticate as")
	fs.StringVar(&cfg.saslPassword, "sasl-password", "", "the SASL user's `password`")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "PEM certificate `file`: speak TLS")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM key `file` of -tls-cert")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if cfg.topics, err = parseTopics(*topics); err != nil {
		return config{}, fmt.Errorf("-topics: %w", err)
	}
	if cfg.logLevel, err = parseLogLevel(*level); err != nil {
		return config{}, fmt.Errorf("-log-level: %w", err)
	}
	if cfg.maxMessage <= 0 {
		return config{}, fmt.Errorf("-max-message-bytes: %d is not positive", cfg.maxMessage)
	}
	switch cfg.sasl = strings.ToUpper(cfg.sasl); cfg.sasl {
	case "":
		if cfg.saslUser != "" {
			return config{}, errors.New("-sasl-user needs -sasl")
		}
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if cfg.saslUser == "" || cfg.saslPassword == "" {
			return config{}, errors.New("-sasl needs -sasl-user and -sasl-password")
		}
	default:
		return config{}, fmt.Errorf("-sasl %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", cfg.sasl)
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return config{}, errors.New("-tls-cert and -tls-key go together")
	}
	return cfg, nil
}

// parseTopics parses a list such as "values:4,other:1".
func parseTopics(s string) ([]topicSpec, error) {
	var specs []topicSpec
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, parts, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("topic %q: want name:partitions", item)
		}
		n, err := strconv.ParseInt(parts, 10, 32)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("topic %q: partitions %q is not a positive integer", name, parts)
		}
		if name == "" {
			return nil, fmt.Errorf("topic %q: empty name", item)
		}
		specs = append(specs, topicSpec{name, int32(n)})
	}
	return specs, nil
}

// parseLogLevel parses a kfake log level name.
func parseLogLevel(s string) (kfake.LogLevel, error) {
	switch strings.ToLower(s) {
	case "none":
		return kfake.LogLevelNone, nil
	case "error":
		return kfake.LogLevelError, nil
	case "warn":
		return kfake.LogLevelWarn, nil
	case "info":
		return kfake.LogLevelInfo, nil
	case "debug":
		return kfake.LogLevelDebug, nil
	}
	return 0, fmt.Errorf("unknown level %q: want none, error, warn, info or debug", s)
}

// run runs kafkadev with the command-line arguments args until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(cfg.addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	if host == "" {
		// Clients connect to the address the broker advertises, which
		// must name a host.
		host = "127.0.0.1"
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("-addr: port %q: %w", port, err)
	}
	listenAddr := net.JoinHostPort(host, port)
	opts := []kfake.Opt{
		kfake.Ports(portNum),
		// kfake listens on 127.0.0.1 by default; listen on the host
		// asked for instead.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, listenAddr)
		}),
		kfake.WithLogger(kfake.BasicLogger(stderr, cfg.logLevel)),
		kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(cfg.maxMessage)}),
	}
	if cfg.sasl != "" {
		opts = append(opts, kfake.EnableSASL(), kfake.Superuser(cfg.sasl, cfg.saslUser, cfg.saslPassword))
	}
	if cfg.tlsCert != "" {
		tc, err := tlsconf.Server(cfg.tlsCert, cfg.tlsKey)
		if err != nil {
			return err
		}
		opts = append(opts, kfake.TLS(tc))
	}
	if cfg.dataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.dataDir))
		if cfg.syncWrites {
			opts = append(opts, kfake.SyncWrites())
		}
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("start broker on %s: %w", listenAddr, err)
	}
	defer c.Close() // with -data-dir, this writes the last state to disk

	for _, t := range cfg.topics {
		if c.TopicInfo(t.name) != nil {
			if n := len(c.PartitionInfos(t.name)); n != int(t.partitions) {
				fmt.Fprintf(stderr, "kafkadev: topic %q exists with %d partitions, not %d; keeping it\n", t.name, n, t.partitions)
			}
			continue
		}
		if err := c.CreateTopic(t.name, t.partitions, nil); err != nil {
			return fmt.Errorf("create topic %q: %w", t.name, err)
		}
	}
	for _, addr := range c.ListenAddrs() {
		fmt.Fprintf(stdout, "kafkadev listening on %s\n", addr)
	}
	for _, t := range cfg.topics {
		fmt.Fprintf(stdout, "topic %s: %d partitions\n", t.name, len(c.PartitionInfos(t.name)))
	}
	if cfg.dataDir != "" {
		fmt.Fprintf(stdout, "data dir %s\n", cfg.dataDir)
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "kafkadev: shutting down")
	return nil
}
