package main

import (
	"bufio"
	"fmt"
	"net/http"
	"sort"
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

	metric("streamd_stream_values_total", "counter", "Values accepted per stream.")
	names := d.pipe.List()
	type rej struct {
		stream, reason string
		n              uint64
	}
	var rejects []rej
	for _, name := range names {
		s, err := d.pipe.Stream(name)
		if err != nil {
			continue
		}
		st := s.Stats()
		fmt.Fprintf(b, "streamd_stream_values_total{stream=%q} %d\n", name, st.Count)
		for reason, n := range st.Rejected {
			rejects = append(rejects, rej{name, string(reason), n})
		}
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
	}
}
