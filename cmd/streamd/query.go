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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
	"streamd/internal/grpcauth"
	"streamd/internal/membudget"
)

const queryUsage = `Usage: streamd query <command> [flags] [args]

Commands:
  quantiles <stream> [φ ...]        quantiles (default φ: 0.01 0.1 0.25 0.5 0.75 0.9 0.99 0.999)
  ranks <stream> <value> ...        bounds on the number of values ≤ each value
  heavy-hitters <stream>            values (or items) with count ≥ --support of the stream
  hhh <stream>                      hierarchical heavy hitters of a hierarchy stream: the prefixes
                                    (subnets, path prefixes, domains) with discounted count ≥ --support
                                    of the stream (with --plain: every prefix with count ≥ --support)
  frequencies <stream> <value> ...  bounds on the count of each value (or item, for an item stream)
  stats <stream>                    count, min, max, sum, configuration, space, memory, rejects
  streams                           list the streams' names, page by page: all of them, or the first
                                    --limit; those that start with --prefix and contain --match
  sum <stream>                      correlated sum of a pair stream: the count and Σy of the pairs
                                    with x ≤ or ≥ a threshold: --at T, or --factor F times --quantile φ,
                                    --min, --max or --mean of x; --below (x ≤ t), --above (x ≥ t), or both
  create <stream>                   create a stream (--epsilon, --window-size, --sliding-window, --float64, --items,
                                    --hierarchy, --min-support, --pairs)
  delete <stream>                   delete a stream
  watch <stream> [φ ...]            quantiles and heavy hitters every --interval

With --cluster, quantiles, ranks, heavy-hitters, frequencies and stats
answer for every daemon of the daemon's Kafka consumer group; the answer
says which members and partitions it covers, and PARTIAL when it misses
some.

Flags (before or after the command's arguments):
`

// queryFlags are the flags every query command takes.
type queryFlags struct {
	addr, token, caFile string
	tls, json, cluster  bool
	last                lastFlag
	support             float64
	items, pairs        bool
	sum                 sumFlags
	epsilon             float64
	windowSize          uint64
	slidingWindow       uint64
	float64             bool
	hierarchy           string
	minSupport          float64
	plain               bool
	interval            time.Duration
	timeout             time.Duration
	list                listFlags
}

// listFlags are the flags of query streams.
type listFlags struct {
	limit         int
	prefix, match string
	pageToken     string
}

func (m *Main) query(ctx context.Context, args []string) error {
	var f queryFlags
	fs := flag.NewFlagSet("streamd query", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), queryUsage)
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
	fs.BoolVar(&f.cluster, "cluster", false, "answer for the whole Kafka consumer group (quantiles, ranks, heavy-hitters, frequencies, stats)")
	fs.Var(&f.last, "last", "ask about the last n values (a count such as 1000) or the values of the last d (a duration such as 5m) only; 0: all history")
	fs.Float64Var(&f.support, "support", 0.01, "heavy hitters: minimum share of the stream")
	fs.Float64Var(&f.epsilon, "epsilon", 0, "create: ε (0: the daemon's default)")
	fs.Uint64Var(&f.windowSize, "window-size", 0, "create: window size W (0: default)")
	fs.Uint64Var(&f.slidingWindow, "sliding-window", 0, "create: sliding window N (0: default)")
	fs.BoolVar(&f.float64, "float64", false, "create: keep float64 precision")
	fs.BoolVar(&f.items, "items", false, "create: an item stream, of strings")
	fs.StringVar(&f.hierarchy, "hierarchy", "", "create: a hierarchy stream of items in this prefix hierarchy: ipv4, ipv6, path, dns, delim:SEP (see the README); --epsilon is then the precision of its hhh answers at supports ≥ --min-support")
	fs.Float64Var(&f.minSupport, "min-support", 0, "create: the least support at which a hierarchy stream's hhh answers have precision --epsilon (0: 0.05)")
	fs.BoolVar(&f.plain, "plain", false, "hhh: every heavy prefix of every level, not the discounted hierarchical heavy hitters")
	fs.BoolVar(&f.pairs, "pairs", false, "create: a pair stream, of pairs (x, y), for correlated sums")
	f.sum.register(fs)
	fs.DurationVar(&f.interval, "interval", time.Second, "watch: how often")
	fs.IntVar(&f.list.limit, "limit", 0, "streams: list at most this many names (0: all)")
	fs.StringVar(&f.list.prefix, "prefix", "", "streams: list the names that start with this")
	fs.StringVar(&f.list.match, "match", "", "streams: list the names that contain this")
	fs.StringVar(&f.list.pageToken, "page-token", "", "streams: start at this nextPageToken of a --json answer")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "deadline of each call")
	if helpAsked(args) {
		fs.SetOutput(m.Stdout)
		fs.Usage()
		return errHelpShown
	}
	// The flag package would print a bad flag's error with the whole
	// usage; Exit prints the error alone, with a pointer to the usage.
	fs.SetOutput(io.Discard)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return &usageError{err: fmt.Errorf("query: %w (streamd query -h lists the commands and flags)", err)}
	}
	if len(pos) == 0 {
		fs.SetOutput(m.Stderr)
		fs.Usage()
		return &usageError{err: errors.New("query: no command"), printed: true}
	}
	conn, err := dial(f)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := pb.NewStreamdClient(conn)
	cmd, rest := pos[0], pos[1:]
	switch cmd {
	case "watch":
		return callError(f, m.watch(ctx, c, f, rest))
	case "streams", "list":
		return callError(f, m.streams(ctx, c, f))
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	resp, err := m.call(ctx, c, f, cmd, rest)
	if err != nil {
		return callError(f, err)
	}
	if f.json {
		return printJSON(m.Stdout, resp)
	}
	return printTable(m.Stdout, resp)
}

// streams prints the streams' names that start with --prefix and contain
// --match, from --page-token on, one a line, page by page as the daemon
// answers them, each page within --timeout: all of them, or the first
// --limit. With --json it prints one ListStreamsResponse of them all,
// whose next_page_token is not "" when --limit left some out. With no
// names, it prints "no streams" on standard error and nothing on
// standard output.
func (m *Main) streams(ctx context.Context, c pb.StreamdClient, f queryFlags) error {
	if f.list.limit < 0 {
		return &usageError{err: fmt.Errorf("query: --limit %d is negative", f.list.limit)}
	}
	req := &pb.ListStreamsRequest{PageToken: f.list.pageToken, Prefix: f.list.prefix, Match: f.list.match}
	all := &pb.ListStreamsResponse{Streams: []string{}}
	n := 0
	for {
		req.PageSize = api.MaxPageSize
		if f.list.limit > 0 {
			req.PageSize = int32(min(f.list.limit-n, api.MaxPageSize))
		}
		pctx, cancel := context.WithTimeout(ctx, f.timeout)
		resp, err := c.ListStreams(pctx, req)
		cancel()
		if err != nil {
			return err
		}
		n += len(resp.Streams)
		if f.json {
			all.Streams = append(all.Streams, resp.Streams...)
		} else if len(resp.Streams) > 0 {
			fmt.Fprintln(m.Stdout, strings.Join(resp.Streams, "\n"))
		}
		if resp.NextPageToken == "" || f.list.limit > 0 && n >= f.list.limit {
			all.NextPageToken = resp.NextPageToken
			break
		}
		req.PageToken = resp.NextPageToken
	}
	if f.json {
		return printJSON(m.Stdout, all)
	}
	if n == 0 {
		fmt.Fprintln(m.Stderr, "no streams")
	}
	return nil
}

// parseInterleaved parses the flags in args, which may come before, after
// or between the positional arguments, and returns the positional ones. An
// argument that reads as a negative number (-0.5, -5) is positional,
// unless it is the value of the flag before it.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		if !isFlag(args[0]) {
			pos = append(pos, args[0])
			args = args[1:]
			continue
		}
		n := 1 // the flag, and its value if it takes one as the next argument
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		if f := fs.Lookup(name); f != nil && !hasValue && !isBoolFlag(f) {
			n = 2
		}
		if err := fs.Parse(args[:min(n, len(args))]); err != nil {
			return nil, err
		}
		args = args[min(n, len(args)):]
	}
	return pos, nil
}

// isFlag reports whether arg is a flag: it starts with "-" and is not a
// number.
func isFlag(arg string) bool {
	if len(arg) < 2 || arg[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(arg, 64)
	return err != nil
}

// isBoolFlag reports whether f is a flag that takes no value.
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// callError turns the error of a call to the daemon into one plain line:
// the daemon's message rather than "rpc error: code = … desc = …", and what
// to check when the daemon cannot be reached.
func callError(f queryFlags, err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("cannot reach a streamd gRPC service at %s (--addr, STREAMD_GRPC_ADDR; the daemon's gRPC port is 7070 by default): %s", f.addr, st.Message())
	case codes.Unauthenticated:
		return fmt.Errorf("unauthenticated: %s (--token, STREAMD_TOKEN)", st.Message())
	case codes.DeadlineExceeded:
		return fmt.Errorf("no answer from %s within --timeout %v (is it the daemon's gRPC port? 7070 by default)", f.addr, f.timeout)
	}
	return errors.New(st.Message())
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
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if f.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcauth.Bearer(f.token)))
	}
	conn, err := grpc.NewClient(f.addr, opts...)
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
	if err := need(1, "a stream name"); err != nil {
		return nil, err
	}
	stream := args[0]
	scope := pb.Scope_SCOPE_LOCAL
	if f.cluster {
		scope = pb.Scope_SCOPE_CLUSTER
	}
	switch cmd {
	case "frequencies", "freq":
		if err := need(2, "a stream and values"); err != nil {
			return nil, err
		}
		req := &pb.FrequenciesRequest{Stream: stream, LastN: f.last.n, Last: f.last.duration(), Scope: scope}
		items := false
		if f.cluster {
			// The stream may live on other members only: arguments that
			// are not all numbers are items, which the daemon judges.
			_, err := floats(args[1:])
			items = err != nil
		} else {
			st, err := c.Stats(ctx, &pb.StatsRequest{Stream: stream})
			if err != nil {
				return nil, err
			}
			items = st.Kind == pb.StreamKind_STREAM_KIND_ITEMS
		}
		var err error
		if items {
			req.Items = args[1:]
		} else if req.Values, err = floats(args[1:]); err != nil {
			return nil, err
		}
		return c.Frequencies(ctx, req)
	}
	vals, err := floats(args[1:])
	if err != nil {
		return nil, err
	}
	switch cmd {
	case "quantiles", "q":
		if len(vals) == 0 {
			vals = defaultPhis
		}
		return c.Quantiles(ctx, &pb.QuantilesRequest{Stream: stream, Phis: vals, LastN: f.last.n, Last: f.last.duration(), Scope: scope})
	case "ranks":
		if err := need(2, "a stream and values"); err != nil {
			return nil, err
		}
		return c.Ranks(ctx, &pb.RanksRequest{Stream: stream, Values: vals, LastN: f.last.n, Last: f.last.duration(), Scope: scope})
	case "heavy-hitters", "hh":
		return c.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: stream, Support: f.support, LastN: f.last.n, Last: f.last.duration(), Scope: scope})
	case "hhh", "hierarchical-heavy-hitters":
		return c.HierarchicalHeavyHitters(ctx, &pb.HierarchicalHeavyHittersRequest{Stream: stream, Support: f.support, Plain: f.plain, LastN: f.last.n, Last: f.last.duration(), Scope: scope})
	case "stats":
		return c.Stats(ctx, &pb.StatsRequest{Stream: stream, Scope: scope})
	case "sum":
		req, err := f.sum.request(stream)
		if err != nil {
			return nil, err
		}
		req.LastN, req.Last, req.Scope = f.last.n, f.last.duration(), scope
		return c.CorrelatedSum(ctx, req)
	}
	if f.cluster {
		return nil, fmt.Errorf("%s: --cluster is for quantiles, ranks, heavy-hitters, frequencies and stats", cmd)
	}
	switch cmd {
	case "create":
		req := &pb.CreateStreamRequest{
			Stream: stream, Epsilon: f.epsilon, WindowSize: f.windowSize, SlidingWindow: f.slidingWindow, Float64: f.float64,
			Hierarchy: f.hierarchy, MinSupport: f.minSupport,
		}
		switch {
		case f.items && f.pairs:
			return nil, errors.New("create: --items or --pairs, not both")
		case f.items:
			req.Kind = pb.StreamKind_STREAM_KIND_ITEMS
		case f.pairs:
			req.Kind = pb.StreamKind_STREAM_KIND_PAIRS
		}
		return c.CreateStream(ctx, req)
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
		st, err := c.Stats(ctx, &pb.StatsRequest{Stream: args[0]})
		if status.Code(err) == codes.NotFound {
			return fmt.Errorf("watch: no stream %q", args[0])
		}
		if err != nil {
			return err
		}
		if st.Kind != pb.StreamKind_STREAM_KIND_ITEMS { // an item stream has no quantiles
			phis = defaultPhis
		}
	}
	req := &pb.WatchRequest{Stream: args[0], Phis: phis, Support: f.support, IntervalMs: uint64(f.interval.Milliseconds()), LastN: f.last.n, Last: f.last.duration()}
	w, err := c.Watch(ctx, req)
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

// num prints a value as its stream stores it: with float32 precision, the
// default, or with float64 precision for a value that float32 cannot hold
// (one of a float64 stream).
func num(v float64) string {
	if float64(float32(v)) != v {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 32)
}

// clusterAnswer is what the responses of a SCOPE_CLUSTER query share.
type clusterAnswer interface {
	GetPartial() bool
	GetMissingPartitions() []*pb.KafkaPartition
	GetMembers() []*pb.ClusterMember
}

// printPartial says, first, that a cluster answer misses values.
func printPartial(out io.Writer, r clusterAnswer) {
	if r.GetPartial() {
		var names []string
		for _, p := range r.GetMissingPartitions() {
			names = append(names, fmt.Sprintf("%s/%d", p.Topic, p.Partition))
		}
		what := "a member did not answer"
		if len(names) > 0 {
			what = "missing partitions " + strings.Join(names, " ")
		}
		fmt.Fprintf(out, "PARTIAL ANSWER: %s\n", what)
	}
}

// printMembers prints which members and partitions a cluster answer
// covers: each partition as topic/partition@next offset.
func printMembers(out io.Writer, r clusterAnswer) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	var errs []string
	defer func() {
		w.Flush()
		for _, e := range errs {
			fmt.Fprintln(out, e)
		}
	}()
	fmt.Fprintln(w, "member\taddress\tgeneration\tvalues\tpartitions\t")
	for _, m := range r.GetMembers() {
		parts := make([]string, 0, len(m.Partitions))
		for _, p := range m.Partitions {
			parts = append(parts, fmt.Sprintf("%s/%d@%d", p.Partition.GetTopic(), p.Partition.GetPartition(), p.NextOffset))
		}
		id := m.Id
		if len(id) > 8 {
			id = id[:8]
		}
		values := fmt.Sprint(m.Count)
		if !m.Answered {
			values = "no answer"
			errs = append(errs, fmt.Sprintf("%s: %s", id, m.Error))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t\n", id, m.Address, m.Generation, values, strings.Join(parts, " "))
	}
}

func printTable(out io.Writer, msg proto.Message) error {
	if r, ok := msg.(clusterAnswer); ok && len(r.GetMembers()) > 0 {
		printPartial(out, r)
		defer printMembers(out, r)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer w.Flush()
	switch r := msg.(type) {
	case *pb.QuantilesResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		printWindow(w, r.Window)
		fmt.Fprintln(w, "φ\tvalue\trank min\trank max\t")
		for _, q := range r.Quantiles {
			fmt.Fprintf(w, "%v\t%s\t%d\t%d\t\n", q.Phi, num(q.Value), q.RankMin, q.RankMax)
		}
	case *pb.RanksResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		printWindow(w, r.Window)
		fmt.Fprintln(w, "value\t≤ value, min\t≤ value, max\t")
		for _, q := range r.Ranks {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", num(q.Value), q.RankMin, q.RankMax)
		}
	case *pb.HeavyHittersResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		printWindow(w, r.Window)
		fmt.Fprintln(w, "value\tcount min\tcount max\tshare\t")
		for _, it := range r.Items {
			fmt.Fprintf(w, "%s\t%d\t%d\t%.4f\t\n", itemLabel(it), it.CountMin, it.CountMax, float64(it.CountMin)/float64(max(r.Count, 1)))
		}
	case *pb.HierarchicalHeavyHittersResponse:
		printHHH(w, r)
	case *pb.FrequenciesResponse:
		fmt.Fprintf(w, "count %d, ε %v\n", r.Count, r.Epsilon)
		printWindow(w, r.Window)
		fmt.Fprintln(w, "value\tcount min\tcount max\t")
		for _, it := range r.Items {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", itemLabel(it), it.CountMin, it.CountMax)
		}
	case *pb.StatsResponse:
		rows := [][2]string{
			{"kind", strings.ToLower(strings.TrimPrefix(r.Kind.String(), "STREAM_KIND_"))},
			{"count", fmt.Sprint(r.Count)},
		}
		if r.Kind != pb.StreamKind_STREAM_KIND_ITEMS { // items have no min, max, sum or precision
			rows = append(rows, [][2]string{{"min", num(r.Min)}, {"max", num(r.Max)}, {"sum", fmt.Sprint(r.Sum)}}...)
		}
		rows = append(rows, [][2]string{
			{"epsilon", fmt.Sprint(r.Epsilon)}, {"window size", fmt.Sprint(r.WindowSize)},
			{"sliding window", fmt.Sprint(r.SlidingWindow)}, {"summary entries", fmt.Sprint(r.SummaryEntries)},
			{"summary bytes", fmt.Sprint(r.SummaryBytes)},
		}...)
		if r.Kind != pb.StreamKind_STREAM_KIND_ITEMS {
			rows = append(rows, [2]string{"precision", precision(r.Float64)})
		}
		if r.Hierarchy != "" {
			rows = append(rows, [2]string{"hierarchy", r.Hierarchy})
		}
		rows = append(rows, [][2]string{
			{"memory", membudget.Size(int64(r.MemoryBytes))}, {"memory reserved", membudget.Size(int64(r.MemoryReservedBytes))},
			{"daemon memory", daemonMemory(r)}, {"rejected", fmt.Sprint(r.RejectedTotal)},
		}...)
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
	case *pb.CorrelatedSumResponse:
		w.Flush()
		printSum(out, r)
	case *pb.CreateStreamResponse, *pb.DeleteStreamResponse:
		fmt.Fprintln(out, "ok")
	default:
		return printJSON(out, msg)
	}
	return nil
}

// printHHH prints the hitters of a hierarchical heavy hitter answer, with
// their share of the count: that of their discounted count, or of their
// count for a plain answer.
func printHHH(w io.Writer, r *pb.HierarchicalHeavyHittersResponse) {
	fmt.Fprintf(w, "count %d, ε %.3g a level, precision %.3g\n", r.Count, r.Epsilon, r.Precision)
	printWindow(w, r.Window)
	if r.Plain {
		fmt.Fprintln(w, "prefix\tlevel\tcount min\tcount max\tshare\t")
		for _, h := range r.Hitters {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.4f\t\n", h.Prefix, h.Level, h.CountMin, h.CountMax, float64(h.CountMin)/float64(max(r.Count, 1)))
		}
		return
	}
	fmt.Fprintln(w, "prefix\tlevel\tcount min\tcount max\tdiscounted min\tdiscounted max\tshare\t")
	for _, h := range r.Hitters {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%.4f\t\n", h.Prefix, h.Level, h.CountMin, h.CountMax, h.DiscountedMin, h.DiscountedMax, float64(h.DiscountedMin)/float64(max(r.Count, 1)))
	}
}

// lastFlag is --last: a count of values (last_n) or a duration (last).
type lastFlag struct {
	n uint64
	d time.Duration
}

func (l *lastFlag) String() string {
	if l.d > 0 {
		return l.d.String()
	}
	return strconv.FormatUint(l.n, 10)
}

func (l *lastFlag) Set(v string) error {
	*l = lastFlag{}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		l.n = n
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want a count of values (1000) or a duration (5m), not %q", v)
	}
	l.d = d
	return nil
}

// duration returns the last field of a request: nil for a count.
func (l *lastFlag) duration() *durationpb.Duration {
	if l.d == 0 {
		return nil
	}
	return durationpb.New(l.d)
}

// printWindow prints what a time-window answer covers.
func printWindow(w io.Writer, tw *pb.TimeWindow) {
	if tw == nil {
		return
	}
	if tw.Count == 0 {
		fmt.Fprintf(w, "window since %s: no values\n", time.Unix(0, tw.CutoffUnixNano).Format(time.RFC3339Nano))
		return
	}
	fmt.Fprintf(w, "window since %s: %d values arrived %s to %s",
		time.Unix(0, tw.CutoffUnixNano).Format(time.RFC3339Nano), tw.Count,
		time.Unix(0, tw.FirstUnixNano).Format(time.RFC3339Nano), time.Unix(0, tw.LastUnixNano).Format(time.RFC3339Nano))
	if tw.OlderMax > 0 {
		fmt.Fprintf(w, ", up to %d of them older", tw.OlderMax)
	}
	if tw.Truncated {
		fmt.Fprint(w, "; older values of the window have left the sliding window")
	}
	fmt.Fprintln(w)
}

// itemLabel returns how a table shows an answer: its item, quoted if it
// has blanks, for an item stream; else its value.
func itemLabel(it *pb.Item) string {
	switch {
	case it.Item == "" && it.Fingerprint != 0:
		return fmt.Sprintf("(fingerprint %016x)", it.Fingerprint)
	case it.Fingerprint == 0:
		return num(it.Value)
	}
	s := it.Item
	if strings.ContainsAny(s, " \t\"") || !strconv.CanBackquote(s) {
		s = strconv.Quote(s)
	}
	if it.Shared {
		s += " (fingerprint shared)"
	}
	return s
}
