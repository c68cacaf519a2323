package web

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "streamd/api/proto/streamd/v1"
	"streamd/gpusort"
)

// CheckpointStats is what /metrics says of the daemon's checkpoints.
type CheckpointStats struct {
	// Failures counts the checkpoints that failed.
	Failures uint64
	// LastSuccess is when the last checkpoint succeeded, or when the
	// daemon started from the state its data dir held.
	LastSuccess time.Time
}

// exportedStream is what /metrics says of one stream.
type exportedStream struct {
	name      string
	stats     *pb.StatsResponse
	quantiles []*pb.QuantilesResponse_Quantile // at Server.Quantiles; none when empty
}

// serveMetrics writes the daemon's metrics in the Prometheus text format
// (version 0.0.4), followed by the Go runtime's and the process's (go_*
// and process_*, as the Prometheus client libraries write them). Per-stream series cover the first MaxStreams streams by
// name; streamd_metrics_streams_omitted counts the others. Each stream's
// values are a summary, streamd_stream_value, whose quantiles are asked
// through the Quantiles RPC's code: over all history, each within ε·count
// of its rank, or over the last LastN values; its count and sum are over
// all history. An item stream's summary has no quantiles, nor has a pair
// stream's, whose count and sum are those of its pairs' x.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	names, err := firstNames(ctx, s.api, s.MaxStreams)
	if err != nil {
		http.Error(w, err.Error(), httpStatus(status.Code(err)))
		return
	}
	listed, _, err := statsOf(ctx, s.api, names)
	if err != nil {
		http.Error(w, err.Error(), httpStatus(status.Code(err)))
		return
	}
	omitted := max(s.Pipeline.Len()-len(listed), 0)
	var streams []exportedStream
	for _, x := range listed {
		e := exportedStream{name: x.name, stats: x.stats}
		// An item or pair stream has no quantiles: its series are counts
		// (and for pairs the sum of x) only.
		if x.stats.Count > 0 && len(s.Quantiles) > 0 && x.stats.Kind == pb.StreamKind_STREAM_KIND_VALUES {
			q, err := s.api.Quantiles(ctx, &pb.QuantilesRequest{Stream: x.name, Phis: s.Quantiles, LastN: min(s.LastN, x.stats.SlidingWindow)})
			if status.Code(err) == codes.NotFound {
				continue
			}
			if err != nil {
				http.Error(w, err.Error(), httpStatus(status.Code(err)))
				return
			}
			e.quantiles = q.Quantiles
		}
		streams = append(streams, e)
	}

	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	b := bufio.NewWriter(w)
	defer b.Flush()
	family := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	// single writes a family of one series; v is an integer, or a float
	// written by formatFloat.
	single := func(name, typ, help string, v any) {
		family(name, typ, help)
		fmt.Fprintf(b, "%s %v\n", name, v)
	}
	// perStream writes a family of one series per exported stream.
	perStream := func(name, typ, help string, v func(*pb.StatsResponse) uint64) {
		family(name, typ, help)
		for _, e := range streams {
			fmt.Fprintf(b, "%s{stream=\"%s\"} %d\n", name, labelValue(e.name), v(e.stats))
		}
	}
	c := s.Pipeline.Counters()
	single("streamd_streams", "gauge", "Number of streams.", c.Streams)
	single("streamd_metrics_streams_omitted", "gauge", "Streams left out of the per-stream series by the cap on exported streams.", omitted)
	single("streamd_windows_sorted_total", "counter", "Windows sorted and summarised.", c.WindowsSorted)
	single("streamd_values_sorted_total", "counter", "Values in sorted windows.", c.ValuesSorted)
	single("streamd_sort_seconds_total", "counter", "Time spent sorting batches.", formatFloat(c.SortSeconds))
	single("streamd_sort_errors_total", "counter", "Batches the configured sorter failed on (sorted on the CPU instead).", c.SortErrors)
	single("streamd_windows_queued", "gauge", "Full windows waiting for the sorter.", c.Queued)
	if a, ok := s.Pipeline.Sorter().(*gpusort.Auto); ok {
		gpu, cpu, gpuBatches, cpuBatches := a.Rates()
		family("streamd_sorter_batches_total", "counter", "Batches the auto sorter had each side sort.")
		fmt.Fprintf(b, "streamd_sorter_batches_total{side=\"gpu\"} %d\nstreamd_sorter_batches_total{side=\"cpu\"} %d\n", gpuBatches, cpuBatches)
		family("streamd_sorter_rate_keys_per_second", "gauge", "The rate the auto sorter measured for each side: keys per second of the time it had batches in flight; 0 until measured.")
		fmt.Fprintf(b, "streamd_sorter_rate_keys_per_second{side=\"gpu\"} %s\nstreamd_sorter_rate_keys_per_second{side=\"cpu\"} %s\n", formatFloat(gpu), formatFloat(cpu))
	}
	idle := s.Pipeline.IdleStats()
	family("streamd_idle_flushes_total", "counter", "Partial windows of quiet streams flushed (--idle-flush): digested into the summaries, or shrunk to their values.")
	fmt.Fprintf(b, "streamd_idle_flushes_total{how=\"digested\"} %d\nstreamd_idle_flushes_total{how=\"shrunk\"} %d\n", idle.Digested, idle.Shrunk)
	single("streamd_idle_freed_bytes_total", "counter", "Buffer bytes freed by shrinking the partial windows of quiet streams.", idle.Freed)

	m := s.Pipeline.Memory()
	single("streamd_memory_limit_bytes", "gauge", "The streams' memory budget (--max-memory); 0 for none.", m.Limit)
	single("streamd_memory_used_bytes", "gauge", "What the memory budget charges the streams: reserved + windows + growth.", m.Used)
	single("streamd_memory_reserved_bytes", "gauge", "The streams' reservations: their worst cases with one window in flight each.", m.Reserved)
	single("streamd_memory_windows_bytes", "gauge", "Windows in flight beyond each stream's first.", m.Windows)
	single("streamd_memory_growth_bytes", "gauge", "Summary growth past the streams' reservations.", m.Growth)
	single("streamd_memory_streams_refused_total", "counter", "Streams refused because the memory budget could not hold them.", m.Refused)
	single("streamd_memory_waits_total", "counter", "Times ingest waited for memory (back-pressure).", m.Waits)
	single("streamd_memory_wait_seconds_total", "counter", "Time ingest spent waiting for memory.", formatFloat(m.WaitSeconds))
	if rss := residentBytes(); rss > 0 {
		single("streamd_process_resident_bytes", "gauge", "The process's resident memory (VmRSS).", rss)
	}

	perStream("streamd_stream_values_total", "counter", "Values accepted per stream.",
		func(st *pb.StatsResponse) uint64 { return st.Count })
	perStream("streamd_stream_memory_bytes", "gauge", "Memory the summaries of each stream take.",
		func(st *pb.StatsResponse) uint64 { return st.SummaryBytes })
	perStream("streamd_stream_memory_budget_bytes", "gauge", "What the memory budget charges each stream: its reservation, windows in flight beyond the first, summary growth.",
		func(st *pb.StatsResponse) uint64 { return st.MemoryBytes })
	scope := "all history"
	if s.LastN > 0 {
		scope = fmt.Sprintf("the last %d values", s.LastN)
	}
	family("streamd_stream_value", "summary", "Values of each stream: quantiles over "+scope+", each within epsilon*n of its rank; count and sum of all values.")
	for _, e := range streams {
		name := labelValue(e.name)
		phis := s.Quantiles
		if e.stats.Kind != pb.StreamKind_STREAM_KIND_VALUES {
			phis = nil // an item or pair stream's summary has only its count and sum
		}
		for i, phi := range phis {
			v := "NaN" // no values yet, as client libraries write it
			if i < len(e.quantiles) {
				v = formatValue(e.quantiles[i].Value, e.stats.Float64)
			}
			fmt.Fprintf(b, "streamd_stream_value{stream=\"%s\",quantile=\"%s\"} %s\n", name, formatFloat(phi), v)
		}
		fmt.Fprintf(b, "streamd_stream_value_sum{stream=\"%s\"} %s\n", name, formatFloat(e.stats.Sum))
		fmt.Fprintf(b, "streamd_stream_value_count{stream=\"%s\"} %d\n", name, e.stats.Count)
	}

	type reject struct {
		stream, reason string
		n              uint64
	}
	var rejects []reject
	for _, e := range streams {
		for reason, n := range e.stats.Rejected {
			rejects = append(rejects, reject{e.name, reason, n})
		}
	}
	for reason, n := range s.Pipeline.Rejected() {
		rejects = append(rejects, reject{"", string(reason), n})
	}
	slices.SortFunc(rejects, func(a, b reject) int {
		if a.stream != b.stream {
			return strings.Compare(a.stream, b.stream)
		}
		return strings.Compare(a.reason, b.reason)
	})
	family("streamd_rejected_total", "counter", "Values, lines and frames rejected, per stream and reason (stream=\"\" when no stream could be named).")
	for _, x := range rejects {
		fmt.Fprintf(b, "streamd_rejected_total{stream=\"%s\",reason=\"%s\"} %d\n", labelValue(x.stream), labelValue(x.reason), x.n)
	}
	single("streamd_http_logins_limited_total", "counter", "Logins answered 429 because their client address posted too many wrong tokens.", s.logins.limited.Load())
	if s.GRPCConns != nil {
		g := s.GRPCConns()
		single("streamd_grpc_connections_open", "gauge", "gRPC connections open.", g.Open)
		single("streamd_grpc_connections_refused_total", "counter", "gRPC connections closed at once because --grpc-max-connections proven ones were open.", g.Refused)
		single("streamd_grpc_connections_displaced_total", "counter", "gRPC connections that had made no authenticated call, closed to make room for a new one under --grpc-max-connections.", g.Displaced)
	}
	if s.TCPStats != nil {
		t := s.TCPStats()
		single("streamd_tcp_connections_total", "counter", "TCP ingest connections accepted.", t.Connections)
		single("streamd_tcp_bytes_total", "counter", "Bytes read from TCP ingest connections.", t.Bytes)
		single("streamd_tcp_values_total", "counter", "Values and items accepted from TCP ingest connections, every stream's together; a connection adds its own before each read.", t.Values)
		single("streamd_tcp_connections_open", "gauge", "TCP ingest connections being served.", t.OpenConnections)
		family("streamd_tcp_connections_refused_total", "counter", "TCP ingest connections refused, by reason.")
		for _, x := range []struct {
			reason string
			n      uint64
		}{{"max_connections", t.OverLimit}, {"tls_handshake", t.TLSFailed}, {"unauthenticated", t.Unauthenticated}} {
			fmt.Fprintf(b, "streamd_tcp_connections_refused_total{reason=\"%s\"} %d\n", x.reason, x.n)
		}
		single("streamd_tcp_connections_idle_closed_total", "counter", "TCP ingest connections closed after --idle-timeout without input.", t.IdleClosed)
	}
	if s.Checkpoints != nil {
		ck := s.Checkpoints()
		var last float64 // 0 for never
		if !ck.LastSuccess.IsZero() {
			last = float64(ck.LastSuccess.Unix()) + float64(ck.LastSuccess.Nanosecond())/1e9
		}
		single("streamd_checkpoint_failures_total", "counter", "Checkpoints that failed to be written to the data dir (full, read-only, gone); /healthz answers 503 until one succeeds.", ck.Failures)
		single("streamd_checkpoint_last_success_timestamp_seconds", "gauge", "When the last checkpoint succeeded (or the daemon started from its data dir), in seconds since the epoch.", formatFloat(last))
	}
	single("streamd_http_unauthorized_total", "counter", "HTTP requests refused for a missing or wrong token, failed logins included.", s.unauthorized.Load())

	if s.runtime == nil {
		return // a Server not made by New
	}
	families, err := s.runtime.Gather()
	if err != nil {
		s.Logger.Warn("gather the go and process metrics", "err", err)
	}
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(b, mf); err != nil {
			return
		}
	}
}

// formatFloat writes a sample value or a quantile label as the exposition
// format and the client libraries do: the shortest representation that
// reads back exactly, and +Inf, -Inf, NaN.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// formatValue writes a value of a stream as it stores it: the shortest
// representation that reads back to the same float32 (as streamd query
// prints it) or float64.
func formatValue(v float64, f64 bool) string {
	if f64 {
		return formatFloat(v)
	}
	return strconv.FormatFloat(float64(float32(v)), 'g', -1, 32)
}

// labelValue escapes a label value: backslash, double quote and line feed.
func labelValue(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	var b strings.Builder
	for _, r := range v {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// residentBytes returns the process's resident memory (VmRSS), or 0 where
// it cannot be read.
func residentBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(rest); len(f) == 2 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}
