// Command loadgen feeds streamd: it replays recorded streams and generates
// synthetic ones into the daemon's TCP ingest, its gRPC Push call or a
// Kafka topic, records streams for later replay, and checks the daemon's
// answers against the exact ones.
//
// Usage:
//
//	loadgen replay --file PATH [flags]   send the values of a file
//	loadgen synth [flags]                send synthetic values
//	loadgen record --out PATH [flags]    record a TCP feed or a Kafka topic
//	loadgen bench-sink [flags]           measure loadgen's own send rate
//	loadgen sink [flags]                 a listener that discards what it reads
//
// For example:
//
//	loadgen replay --file data/household_power_consumption.csv.gz \
//	    --csv-columns Global_active_power,Voltage \
//	    --target tcp --addr 127.0.0.1:7071 --verify --grpc-addr 127.0.0.1:7070
//	loadgen synth --dist zipf --order sorted --count 10000000 \
//	    --target tcp-binary --addr 127.0.0.1:7071 --rate 0
//	loadgen record --listen 127.0.0.1:7171 --out feed.sdb
//	loadgen replay --file feed.sdb --target grpc
//
// # Sources
//
// replay reads --file, gzip-compressed or not (detected by its first
// bytes), in one of these formats (--format, by default guessed: a file
// starting with the framed protocol's magic is a recording, a name ending
// in .csv or .csv.gz is CSV, anything else is text):
//
//	text    one decimal value per line, into the stream --stream (default:
//	        the file's base name); empty lines and lines starting with "#"
//	        are ignored
//	csv     one stream per column chosen by --csv-columns: names from the
//	        header line or indices counting from 0, comma-separated (default:
//	        every column whose first row is a number); the stream of a
//	        column is --stream-prefix followed by its name, or --stream when
//	        one column is chosen; --csv-no-header and --csv-comma
//	recording, lines
//	        a file in streamd's TCP framed protocol (as record writes) or
//	        line protocol; the streams are those it names, prefixed with
//	        --stream-prefix
//
// --loop N sends the file N times (0: until --count or --duration).
// Missing or malformed values (such as "?" in CSV) are counted per stream
// and skipped, as are NaN and ±Inf, and the final summary lists them.
//
// --csv-item-columns chooses columns of strings instead, sent as items to
// item streams (created as such on first items).
//
// synth draws --count values (over all streams) from --dist (uniform,
// normal, lognormal, pareto, exponential, zipf, constant, twovalued) with
// --seed, --zipf-s, --zipf-distinct and --pareto-alpha, and puts them in
// --order (random, sorted, reverse, sawtooth, organpipe, alternating;
// --period is the block length). --streams K sends K streams, named
// --stream followed by ".0", ".1"...; stream i is seeded with seed+i.
// --stream-per-conn sets K to --conns. The random order may run for a
// --duration without a count; the others arrange all values in memory
// first. --items sends items instead, through the per-batch sender for
// every target: the string "item-" and the base-36 integer part of each
// value drawn, so that --dist zipf gives Zipf-distributed strings over
// --zipf-distinct items. --items --dist ipv4 sends IPv4 addresses instead,
// for hierarchy streams: their /8, /16 and /24 bytes are Zipf-distributed
// (--zipf-s), and from the --flood-after-th item of each stream on, a
// share --flood-share of them come from one /24, 203.0.113.0/24.
// --pairs sends pairs to pair streams instead, also through the per-batch
// sender: a request's latency in milliseconds (lognormal, median 20) and
// its response's bytes (about 2000 bytes a millisecond, with lognormal
// noise, and one pair in 1000 a huge response of 1e8 to 2e8 bytes), in
// --order random, sorted or reverse by latency; --verify then checks the
// pair streams' correlated sums.
//
// --stream-sizes zipf:MIN:MAX[:S] gives the K streams of --streams sizes
// drawn (with --seed) from a bounded power law instead of an even share
// of --count: P(size ≥ k) falls as k^−S between MIN and MAX, and S
// defaults to 1, Zipf's law. zipf:5:1000000 gives 90.2% of the streams 5
// to 50 values, one in 22,000 at least 100,000, one in 200,000 a million,
// and 60.5 values a stream on average: about 60 million values for a
// million streams (63.1 million with --seed 1). --count is the sum of the
// sizes (and may not be given); the order is random. Every target gets
// the values through the per-batch sender: batches (frames to
// tcp-binary) of at most --batch values (default 8192) of one stream, the
// batches of all streams in a random interleaving, so that a large
// stream's batches spread over the whole run; with --conns N the streams
// are split over the connections (by a hash of the name), each stream's
// batches going in order over its one connection. Batch b of stream i is drawn
// from its own source seeded with seed+i and b. To --target tcp-binary,
// every batch is drawn and rendered as a frame before the run, on up to
// --conns cores, so that sending costs only the writes: about 8.3 bytes a
// value (4.3 with --float32), plus 16 bytes a frame and the values kept
// for --verify, at most --render-max (default 2GiB; 0 for none). A
// larger run, or one to another target, is drawn as it is sent: loadgen
// then holds 16 bytes a stream and 4 a batch, besides the names. With
// --verify, it keeps the values of a sample of the streams only, and
// checks those: every stream of at least --verify-big values (default a
// tenth of MAX) and --verify-sample others (default 1000) drawn at
// random; it prints a line for each stream checked (the tables of those
// that fail) and how many were checked. The summary then gives the
// totals only.
//
// To --target tcp-binary, synth draws each stream's values on all cores
// before sending and renders them once as frames of --batch values
// (default 65536), then each connection writes slices of those frames,
// so that sending costs only the writes. A stream gets at most --pool
// values (default 4194304) in the random order, its whole share of
// --count in the others; a stream longer than its pool is sent as its
// pool over and over. With at least as many connections as streams,
// connection i sends stream i mod K (so --stream-per-conn gives each
// connection its own stream, and --streams 1 sends one stream over every
// connection); with fewer, each connection takes turns between its
// streams. The values are drawn in blocks with seeds from --seed and the
// block, so they differ from those synth sends to the other targets.
//
// # Targets
//
//	--target tcp          the TCP line protocol to --addr (default 127.0.0.1:7071)
//	--target tcp-binary   the TCP framed protocol to --addr
//	--target grpc         gRPC Push calls to --grpc-addr (default 127.0.0.1:7070),
//	                      with --durable
//	--target kafka        messages to --topic on --kafka-brokers, key = stream name,
//	                      --kafka-format f64, f32 or text, --values-per-message N;
//	                      see package streamd/loadgen for the content-type headers;
//	                      --kafka-no-key sends them without a key, spread over the
//	                      partitions (the daemon names their stream after the topic)
//
// --token (or STREAMD_TOKEN) is the daemon's token: gRPC calls carry it,
// and TCP connections start with its preamble. --tls connects to the daemon
// (TCP, gRPC, --verify) over TLS, trusting --tls-ca or the system's CAs, or
// anything with --tls-insecure. --kafka-sasl plain|scram-sha-256|scram-sha-512
// with --kafka-user and --kafka-password (or STREAMD_KAFKA_PASSWORD), and
// --kafka-tls with --kafka-tls-ca, reach a secured Kafka.
//
// --float32 sends float32 values (frames of type 1, float32 Kafka
// messages, shorter decimals): streams keep float32 values by default, so
// nothing is lost unless a stream was created with float64 precision.
//
// # Control
//
//	--rate R        values per second over all connections; 0 (the default) sends
//	                as fast as the target takes them
//	--count N       stop after N values
//	--duration D    stop after D (such as 30s)
//	--conns N       parallel connections (default 1); batches are dealt to them in
//	                turn, so values of a stream may then arrive out of order
//	--batch N       values per write (default 8192), or per frame for synth
//	                --target tcp-binary (default 65536)
//	--progress P    how often to report progress: a duration, "auto" (1s on a
//	                terminal, 10s otherwise) or "off"
//
// # Verification
//
// --verify keeps the values sent, waits until the daemon's Stats count all
// of them (--verify-timeout, one deadline for every stream checked: once
// it has passed, a stream whose count is right at its first poll still
// passes, and a daemon that is gone fails every check within about that
// time, with exit status 3), then asks it over gRPC (--grpc-addr) for the
// quantiles at φ ∈ {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}
// and the heavy hitters at --support, and prints them side by side with
// the exact answers, with each answer's rank error against εN. A stream
// whose values went over one connection in order (--conns 1, or
// --stream-sizes, which deals the streams to the connections; not the
// repeated frames of tcp-binary, nor Kafka messages without keys, whose
// partitions the daemon reads side by side) has its quantiles over the
// last n values checked too, for n of 1, 257, 4097, a third of its values
// and its sliding window. Streams must be new: a stream holding other
// values fails the check.
//
// # Record
//
// record writes values in the framed protocol to --out (gzip-compressed
// when the name ends in .gz), for replay later. With --listen ADDR it
// serves streamd's TCP protocols, line and framed, on ADDR; with
// --kafka-brokers and --topic it reads every partition of the topic from
// the start (messages without a content-type header in --kafka-format). It
// stops after --count values, after --duration, or at an interrupt (exit
// status 0). Lines are recorded as values, but those of the streams that
// --item-streams names (comma-separated) as items, and item frames as
// items.
//
// # Bench
//
// bench-sink takes the flags of synth and sends as synth does (default
// --target tcp-binary, --count 20,000,000) into a local listener that
// discards what it reads, and prints loadgen's own rate in values/s and
// MB/s: what one loadgen process can send with those settings, for
// comparison with what a daemon takes. With --items it sends items; with
// --file it replays a recording (of values or items) in a loop instead.
//
// sink listens on --listen (default 127.0.0.1:7071), reads and discards
// what any connection sends until an interrupt or --duration, and prints
// the bytes read: a stand-in for the daemon that costs next to nothing,
// in a process of its own, so that a sender can be measured alone on the
// cores it would have in a real run (scripts/bench-ingest.sh does).
//
// # Exit status
//
// 0 on success and for the help asked for with -h or --help (printed to
// standard output), 1 on an error, 2 for bad usage (an unknown command or
// flag, a missing or bad flag value), 3 when --verify finds an answer that
// breaks its bound.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"streamd/loadgen"
)

func main() {
	m := NewMain(os.Stdout, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := m.Exit(m.Run(ctx, os.Args[1:]))
	stop()
	os.Exit(code)
}

// Main is the program: its commands write results to Stdout, and progress
// and logs to Stderr.
type Main struct {
	Stdout, Stderr io.Writer
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// NewMain returns a Main writing to stdout and stderr.
func NewMain(stdout, stderr io.Writer) *Main {
	return &Main{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
}

// Exit reports err, the result of Run, on Stderr (unless it was printed
// already) and returns the exit status: 0 on success, 1 on an error, 2
// for bad usage, 3 when --verify finds an answer that breaks its bound.
func (m *Main) Exit(err error) int {
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintln(m.Stderr, "loadgen:", err)
		}
		return 2
	case errors.Is(err, loadgen.ErrVerify):
		fmt.Fprintln(m.Stderr, "loadgen:", err)
		return 3
	}
	fmt.Fprintln(m.Stderr, "loadgen:", err)
	return 1
}

// A usageError is an error in the command line: loadgen exits 2. printed
// is set when the flag package has already printed it, with the usage.
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf returns a usageError with the formatted message.
func usageErrorf(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// parseFlags parses args into fs. Asking for help (-h, --help) prints the
// command's usage to Stdout and ends the command without an error. A bad
// flag is a usageError that the flag package has printed, with the usage,
// to Stderr.
func (m *Main) parseFlags(fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(m.Stdout)
			fs.Usage()
			return errHelpShown
		}
	}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return errHelpShown
	}
	return &usageError{err: err, printed: true}
}

// errHelpShown ends a command whose usage was asked for and printed.
var errHelpShown = errors.New("help shown")

// Run runs the command named by args[0]. It returns nil after printing
// the help that was asked for, and a usageError for a bad command line.
func (m *Main) Run(ctx context.Context, args []string) error {
	err := m.command(ctx, args)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

func (m *Main) command(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.usage(m.Stderr)
		return &usageError{err: errors.New("no command"), printed: true}
	}
	switch args[0] {
	case "replay":
		return m.replay(ctx, args[1:])
	case "synth":
		return m.synth(ctx, args[1:])
	case "record":
		return m.record(ctx, args[1:])
	case "bench-sink":
		return m.benchSink(ctx, args[1:])
	case "sink":
		return m.sink(ctx, args[1:])
	case "help", "-h", "-help", "--help":
		m.usage(m.Stdout)
		return nil
	}
	m.usage(m.Stderr)
	return &usageError{err: fmt.Errorf("unknown command %q", args[0])}
}

// usage prints loadgen's usage to w.
func (m *Main) usage(w io.Writer) {
	fmt.Fprint(w, `loadgen feeds streamd with recorded or synthetic streams.

Usage:
  loadgen replay --file PATH [flags]   send the values of a text, CSV or recorded file
  loadgen synth [flags]                send synthetic values (--dist, --order, --count)
  loadgen record --out PATH [flags]    record a TCP feed (--listen) or a Kafka topic
  loadgen bench-sink [flags]           measure loadgen's own send rate into a discarding listener
  loadgen sink [flags]                 listen, and read and discard what is sent (--listen)

Run "loadgen <command> -h" for the flags of a command. For example:

  loadgen replay --file data/household_power_consumption.csv.gz \
      --csv-columns Global_active_power,Voltage \
      --target tcp --addr 127.0.0.1:7071 --verify --grpc-addr 127.0.0.1:7070
  loadgen synth --dist zipf --order sorted --count 10000000 \
      --target tcp-binary --addr 127.0.0.1:7071 --rate 0

Exit status: 0 on success, 1 on an error, 2 for bad usage, 3 when --verify
finds an answer that breaks its bound.
`)
}
