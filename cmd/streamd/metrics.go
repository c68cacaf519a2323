package main

import (
	"bufio"
	"fmt"
	"net/http"
	"sort"

	"streamd/pipeline"
)

// serveMetrics writes the daemon's counters in the Prometheus text format.
func (d *Daemon) serveMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	b := bufio.NewWriter(w)
	defer b.Flush()
	metric := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	c := d.pipe.Counters()
	metric("streamd_streams", "gauge", "Number of streams.")
	fmt.Fprintf(b, "streamd_streams %d\n", c.Streams)
	metric("streamd_windows_sorted_total", "counter", "Windows sorted and summarised.")
	fmt.Fprintf(b, "streamd_windows_sorted_total %d\n", c.WindowsSorted)
	metric("streamd_values_sorted_total", "counter", "Values in sorted windows.")
	fmt.Fprintf(b, "streamd_values_sorted_total %d\n", c.ValuesSorted)
	metric("streamd_sort_seconds_total", "counter", "Time spent sorting batches.")
	fmt.Fprintf(b, "streamd_sort_seconds_total %g\n", c.SortSeconds)
	metric("streamd_sort_errors_total", "counter", "Batches the configured sorter failed on (sorted on the CPU instead).")
	fmt.Fprintf(b, "streamd_sort_errors_total %d\n", c.SortErrors)
	metric("streamd_windows_queued", "gauge", "Full windows waiting for the sorter.")
	fmt.Fprintf(b, "streamd_windows_queued %d\n", c.Queued)

	m := d.pipe.Memory()
	metric("streamd_memory_limit_bytes", "gauge", "The streams' memory budget (--max-memory); 0 for none.")
	fmt.Fprintf(b, "streamd_memory_limit_bytes %d\n", m.Limit)
	metric("streamd_memory_used_bytes", "gauge", "What the memory budget charges the streams: reserved + windows + growth.")
	fmt.Fprintf(b, "streamd_memory_used_bytes %d\n", m.Used)
	metric("streamd_memory_reserved_bytes", "gauge", "The streams' reservations: their worst cases with one window in flight each.")
	fmt.Fprintf(b, "streamd_memory_reserved_bytes %d\n", m.Reserved)
	metric("streamd_memory_windows_bytes", "gauge", "Windows in flight beyond each stream's first.")
	fmt.Fprintf(b, "streamd_memory_windows_bytes %d\n", m.Windows)
	metric("streamd_memory_growth_bytes", "gauge", "Summary growth past the streams' reservations.")
	fmt.Fprintf(b, "streamd_memory_growth_bytes %d\n", m.Growth)
	metric("streamd_memory_streams_refused_total", "counter", "Streams refused because the memory budget could not hold them.")
	fmt.Fprintf(b, "streamd_memory_streams_refused_total %d\n", m.Refused)
	metric("streamd_memory_waits_total", "counter", "Times ingest waited for memory (back-pressure).")
	fmt.Fprintf(b, "streamd_memory_waits_total %d\n", m.Waits)
	metric("streamd_memory_wait_seconds_total", "counter", "Time ingest spent waiting for memory.")
	fmt.Fprintf(b, "streamd_memory_wait_seconds_total %g\n", m.WaitSeconds)
	if rss := residentBytes(); rss > 0 {
		metric("streamd_process_resident_bytes", "gauge", "The process's resident memory (VmRSS).")
		fmt.Fprintf(b, "streamd_process_resident_bytes %d\n", rss)
	}

	names := d.pipe.List()
	type rej struct {
		stream, reason string
		n              uint64
	}
	var rejects []rej
	var stats []pipeline.Stats
	for _, name := range names {
		s, err := d.pipe.Stream(name)
		if err != nil {
			stats = append(stats, pipeline.Stats{})
			continue
		}
		st := s.Stats()
		stats = append(stats, st)
		for reason, n := range st.Rejected {
			rejects = append(rejects, rej{name, string(reason), n})
		}
	}
	metric("streamd_stream_values_total", "counter", "Values accepted per stream.")
	for i, name := range names {
		fmt.Fprintf(b, "streamd_stream_values_total{stream=%q} %d\n", name, stats[i].Count)
	}
	metric("streamd_stream_memory_bytes", "gauge", "What the memory budget charges each stream.")
	for i, name := range names {
		fmt.Fprintf(b, "streamd_stream_memory_bytes{stream=%q} %d\n", name, stats[i].Memory)
	}
	for reason, n := range d.pipe.Rejected() {
		rejects = append(rejects, rej{"", string(reason), n})
	}
	sort.Slice(rejects, func(i, j int) bool {
		if rejects[i].stream != rejects[j].stream {
			return rejects[i].stream < rejects[j].stream
		}
		return rejects[i].reason < rejects[j].reason
	})
	metric("streamd_rejected_total", "counter", "Values, lines and frames rejected, per stream and reason (stream=\"\" when no stream could be named).")
	for _, x := range rejects {
		fmt.Fprintf(b, "streamd_rejected_total{stream=%q,reason=%q} %d\n", x.stream, x.reason, x.n)
	}
	if d.tcp != nil {
		t := d.tcp.Stats()
		metric("streamd_tcp_connections_total", "counter", "TCP ingest connections accepted.")
		fmt.Fprintf(b, "streamd_tcp_connections_total %d\n", t.Connections)
		metric("streamd_tcp_bytes_total", "counter", "Bytes read from TCP ingest connections.")
		fmt.Fprintf(b, "streamd_tcp_bytes_total %d\n", t.Bytes)
		metric("streamd_tcp_connections_open", "gauge", "TCP ingest connections being served.")
		fmt.Fprintf(b, "streamd_tcp_connections_open %d\n", t.OpenConnections)
		metric("streamd_tcp_connections_refused_total", "counter", "TCP ingest connections refused, by reason.")
		fmt.Fprintf(b, "streamd_tcp_connections_refused_total{reason=\"max_connections\"} %d\n", t.OverLimit)
		fmt.Fprintf(b, "streamd_tcp_connections_refused_total{reason=\"tls_handshake\"} %d\n", t.TLSFailed)
		fmt.Fprintf(b, "streamd_tcp_connections_refused_total{reason=\"unauthenticated\"} %d\n", t.Unauthenticated)
		metric("streamd_tcp_connections_idle_closed_total", "counter", "TCP ingest connections closed after --idle-timeout without input.")
		fmt.Fprintf(b, "streamd_tcp_connections_idle_closed_total %d\n", t.IdleClosed)
	}
}
