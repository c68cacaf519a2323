package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/membudget"
)

const queryUsage = `Usage: streamd query <command> [flags] [args]

Commands:
  quantiles <stream> [φ ...]        quantiles (default φ: 0.01 0.1 0.25 0.5 0.75 0.9 0.99 0.999)
  ranks <stream> <value> ...        bounds on the number of values ≤ each value
  heavy-hitters <stream>            values with count ≥ --support of the stream
  frequencies <stream> <value> ...  bounds on the count of each value
  stats <stream>                    count, min, max, sum, configuration, space, memory, rejects
  streams                           list the streams
  create <stream>                   create a stream (--epsilon, --window-size, --sliding-window, --float64)
  delete <stream>                   delete a stream
  watch <stream> [φ ...]            quantiles and heavy hitters every --interval

Flags (before or after the command's arguments):
`

// queryFlags are the flags every query command takes.
type queryFlags struct {
	addr, token, caFile string
	tls, json           bool
	lastN               uint64
	support             float64
	epsilon             float64
	windowSize          uint64
	slidingWindow       uint64
	float64             bool
	interval            time.Duration
	timeout             time.Duration
}

func (m *Main) query(ctx context.Context, args []string) error {
	var f queryFlags
	fs := flag.NewFlagSet("streamd query", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, queryUsage)
		fs.PrintDefaults()
	}
	addr := os.Getenv("STREAMD_GRPC_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7070"
	}
	fs.StringVar(&f.addr, "addr", addr, "daemon gRPC address (also STREAMD_GRPC_ADDR)")
	fs.StringVar(&f.token, "token", os.Getenv("STREAMD_TOKEN"), "bearer token (also STREAMD_TOKEN)")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS")
	fs.StringVar(&f.caFile, "ca", "", "PEM file of the CA that signed the daemon's certificate (with --tls)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of tables")
	fs.Uint64Var(&f.lastN, "last", 0, "ask about the last n values only (0: all history)")
	fs.Float64Var(&f.support, "support", 0.01, "heavy hitters: minimum share of the stream")
	fs.Float64Var(&f.epsilon, "epsilon", 0, "create: ε (0: the daemon's default)")
	fs.Uint64Var(&f.windowSize, "window-size", 0, "create: window size W (0: default)")
	fs.Uint64Var(&f.slidingWindow, "sliding-window", 0, "create: sliding window N (0: default)")
	fs.BoolVar(&f.float64, "float64", false, "create: keep float64 precision")
	fs.DurationVar(&f.interval, "interval", time.Second, "watch: how often")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "deadline of each call")
	// Let flags follow the positional arguments too.
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	if len(pos) == 0 {
		fs.Usage()
		return flag.ErrHelp
	}
	conn, err := dial(f)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewStreamdClient(conn)
	if f.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+f.token)
	}
	cmd, rest := pos[0], pos[1:]
	if cmd == "watch" {
		return m.watch(ctx, c, f, rest)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	resp, err := m.call(ctx, c, f, cmd, rest)
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(m.Stdout, resp)
	}
	return printTable(m.Stdout, resp)
}

func dial(f queryFlags) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if f.tls {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if f.caFile != "" {
			c, err := credentials.NewClientTLSFromFile(f.caFile, "")
			if err != nil {
				return nil, fmt.Errorf("load ca: %w", err)
			}
			creds = c
		} else {
			creds = credentials.NewTLS(cfg)
		}
	}
	conn, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", f.addr, err)
	}
	return conn, nil
}

func floats(args []string) ([]float64, error) {
	var out []float64
	for _, a := range args {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", a)
		}
		out = append(out, v)
	}
	return out, nil
}

var defaultPhis = []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}

// call runs one query command and returns its response.
func (m *Main) call(ctx context.Context, c pb.StreamdClient, f queryFlags, cmd string, args []string) (proto.Message, error) {
	need := func(n int, what string) error {
		if len(args) < n {
			return fmt.Errorf("%s: want %s", cmd, what)
		}
		return nil
	}
	switch cmd {
	case "streams", "list":
		return c.ListStreams(ctx, &pb.ListStreamsRequest{})
	}
	if err := need(1, "a stream name"); err != nil {
		return nil, err
	}
	stream := args[0]
	vals, err := floats(args[1:])
	if err != nil {
		return nil, err
	}
	switch cmd {
	case "quantiles", "q":
		if len(vals) == 0 {
			vals = defaultPhis
		}
		return c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: vals, LastN: f.lastN})
	case "ranks":
		if err := need(2, "a stream and values"); err != nil {
			return nil, err
		}
		return c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: vals, LastN: f.lastN})
	case "heavy-hitters", "hh":
		return c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: f.support, LastN: f.lastN})
	case "frequencies", "freq":
		if err := need(2, "a stream and values"); err != nil {
			return nil, err
		}
		return c.Frequencies(ctx, &pb.FrequenciesRequest{Stream: stream, Values: vals, LastN: f.lastN})
	case "stats":
		return c.Stats(ctx, &pb.StatsRequest{Stream: stream})
	case "create":
		return c.CreateStream(ctx, &pb.CreateStreamRequest{Stream: stream, Epsilon: f.epsilon, WindowSize: f.windowSize, SlidingWindow: f.slidingWindow, Float64: f.float64})
	case "delete":
		return c.DeleteStream(ctx, &pb.DeleteStreamRequest{Stream: stream})
	}
	return nil, fmt.Errorf("unknown query command %q (streamd query -h lists them)", cmd)
}

func (m *Main) watch(ctx context.Context, c pb.StreamdClient, f queryFlags, args []string) error {
	if len(args) < 1 {
		return errors.New("watch: want a stream name")
	}
	phis, err := floats(args[1:])
	if err != nil {
		return err
	}
	if len(phis) == 0 {
		phis = defaultPhis
	}
	w, err := c.Watch(ctx, &pb.WatchRequest{Stream: args[0], Phis: phis, Support: f.support, IntervalMs: uint64(f.interval.Milliseconds())})
	if err != nil {
		return err
	}
	for {
		resp, err := w.Recv()
		if err == io.EOF || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if f.json {
			if err := printJSON(m.Stdout, resp); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(m.Stdout, "--- %s\n", time.Unix(0, resp.TimeUnixNano).Format(time.RFC3339))
		if resp.Quantiles != nil {
			_ = printTable(m.Stdout, resp.Quantiles)
		}
		if resp.HeavyHitters != nil {
			_ = printTable(m.Stdout, resp.HeavyHitters)
		}
	}
}

func printJSON(w io.Writer, msg proto.Message) error {
	b, err := protojson.MarshalOptions{Multiline: true, EmitUnpopulated: true}.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func precision(f64 bool) string {
	if f64 {
		return "float64"
	}
	return "float32"
}

// daemonMemory describes the daemon's memory budget in a Stats answer.
func daemonMemory(r *pb.StatsResponse) string {
	used := membudget.Size(int64(r.DaemonMemoryUsedBytes))
	if r.DaemonMemoryLimitBytes == 0 {
		return used + " (no limit)"
	}
	return used + " of " + membudget.Size(int64(r.DaemonMemoryLimitBytes))
}

// num prints a value with float32 precision, as streams store them.
func num(v float64) string { return strconv.FormatFloat(float64(float32(v)), 'g', -1, 32) }

func printTable(out io.Writer, msg proto.Message) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer w.Flush()
	switch r := msg.(type) {
	case *pb.QuantilesResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		fmt.Fprintln(w, "φ\tvalue\trank min\trank max\t")
		for _, q := range r.Quantiles {
			fmt.Fprintf(w, "%v\t%s\t%d\t%d\t\n", q.Phi, num(q.Value), q.RankMin, q.RankMax)
		}
	case *pb.RanksResponse:
		fmt.Fprintf(w, "count %d\n", r.Count)
		fmt.Fprintln(w, "value\t≤ value, min\t≤ value, max\t")
		for _, q := range r.Ranks {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", num(q.Value), q.RankMin, q.RankMax)
		}
	case *pb.HeavyHittersResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		fmt.Fprintln(w, "value\tcount min\tcount max\tshare\t")
		for _, it := range r.Items {
			fmt.Fprintf(w, "%s\t%d\t%d\t%.4f\t\n", num(it.Value), it.CountMin, it.CountMax, float64(it.CountMin)/float64(max(r.Count, 1)))
		}
	case *pb.FrequenciesResponse:
		fmt.Fprintln(w, "value\tcount min\tcount max\t")
		for _, it := range r.Items {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", num(it.Value), it.CountMin, it.CountMax)
		}
	case *pb.StatsResponse:
		rows := [][2]string{
			{"count", fmt.Sprint(r.Count)}, {"min", num(r.Min)}, {"max", num(r.Max)}, {"sum", fmt.Sprint(r.Sum)},
			{"epsilon", fmt.Sprint(r.Epsilon)}, {"window size", fmt.Sprint(r.WindowSize)},
			{"sliding window", fmt.Sprint(r.SlidingWindow)}, {"summary entries", fmt.Sprint(r.SummaryEntries)},
			{"summary bytes", fmt.Sprint(r.SummaryBytes)}, {"precision", precision(r.Float64)},
			{"memory", membudget.Size(int64(r.MemoryBytes))}, {"memory reserved", membudget.Size(int64(r.MemoryReservedBytes))},
			{"daemon memory", daemonMemory(r)}, {"rejected", fmt.Sprint(r.RejectedTotal)},
		}
		reasons := make([]string, 0, len(r.Rejected))
		for k := range r.Rejected {
			reasons = append(reasons, k)
		}
		sort.Strings(reasons)
		for _, k := range reasons {
			rows = append(rows, [2]string{"  " + k, fmt.Sprint(r.Rejected[k])})
		}
		for _, row := range rows {
			fmt.Fprintf(w, "%s\t%s\t\n", row[0], row[1])
		}
	case *pb.ListStreamsResponse:
		fmt.Fprintln(out, strings.Join(r.Streams, "\n"))
	case *pb.CreateStreamResponse, *pb.DeleteStreamResponse:
		fmt.Fprintln(out, "ok")
	default:
		return printJSON(out, msg)
	}
	return nil
}
