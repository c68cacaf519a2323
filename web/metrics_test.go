package web

import (
	"bufio"
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/ingest"
	"streamd/internal/exact"
	"streamd/summary"
	"streamd/synth"
)

// exposition is a parsed /metrics answer: each sample by its metric name
// and labels as written, and each family's type.
type exposition struct {
	samples map[string]string
	types   map[string]string
}

// parseExposition reads the text format strictly enough to catch a
// sample before its family's TYPE, a repeated series or family, and a
// value that does not parse.
func parseExposition(t *testing.T, text string) exposition {
	t.Helper()
	e := exposition{samples: map[string]string{}, types: map[string]string{}}
	current := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			if _, dup := e.types[name]; dup {
				t.Fatalf("family %s twice", name)
			}
			e.types[name], current = typ, name
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		series, value := line[:i], line[i+1:]
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			t.Fatalf("line %q: value: %v", line, err)
		}
		name, _, _ := strings.Cut(series, "{")
		base := name
		if e.types[current] == "summary" {
			base = strings.TrimSuffix(strings.TrimSuffix(name, "_sum"), "_count")
		}
		if base != current {
			t.Fatalf("line %q outside its family (in %s)", line, current)
		}
		if _, dup := e.samples[series]; dup {
			t.Fatalf("series %s twice", series)
		}
		e.samples[series] = value
	}
	return e
}

func (e exposition) value(t *testing.T, series string) float64 {
	t.Helper()
	v, ok := e.samples[series]
	if !ok {
		t.Fatalf("no series %s", series)
	}
	x, _ := strconv.ParseFloat(v, 64)
	return x
}

// TestMetrics checks the per-stream summary against the Quantiles RPC and
// the exact answers, the cap on exported streams, and the families.
func TestMetrics(t *testing.T) {
	s := openServer(t, func(s *Server) {
		s.MaxStreams = 3
		s.Quantiles = []float64{0.5, 0.999, 1e-05, 1}
		s.TCPStats = func() ingest.Stats { return ingest.Stats{Connections: 4, Bytes: 1234, Values: 56} }
	})
	ctx := context.Background()
	values := map[string][]float64{}
	for i, d := range []synth.Dist{synth.LogNormal, synth.Zipf} {
		x, _ := synth.Generate(synth.Spec{Dist: d, Order: synth.Random, Seed: uint64(i)}, 30000)
		name := "s" + strconv.Itoa(i)
		values[name] = round32(x)
		accept(t, s, name, x)
	}
	if _, err := s.Pipeline.Create("s2.empty", summary.Config{}); err != nil {
		t.Fatal(err)
	}
	accept(t, s, "z.omitted", []float64{1})
	s.Pipeline.Reject("s0", feed.Local, feed.ReasonNaN, 2)
	s.Pipeline.Reject("z.omitted", feed.Local, feed.ReasonNaN, 1)
	s.Pipeline.Reject("", feed.Local, feed.ReasonBadStreamName, 5)

	resp, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("/metrics: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	e := parseExposition(t, text)
	for name, typ := range map[string]string{
		"streamd_stream_value": "summary", "streamd_stream_values_total": "counter", "streamd_rejected_total": "counter",
		"streamd_streams": "gauge", "streamd_metrics_streams_omitted": "gauge", "streamd_tcp_bytes_total": "counter", "streamd_tcp_values_total": "counter",
		"streamd_stream_memory_bytes": "gauge", "streamd_http_unauthorized_total": "counter",
		// The client libraries' standard collectors.
		"go_goroutines": "gauge", "go_memstats_heap_alloc_bytes": "gauge", "go_gc_duration_seconds": "summary",
		"process_resident_memory_bytes": "gauge", "process_cpu_seconds_total": "counter", "process_open_fds": "gauge",
	} {
		if e.types[name] != typ {
			t.Errorf("family %s has type %q, want %s", name, e.types[name], typ)
		}
	}
	if e.value(t, "go_goroutines") < 1 || e.value(t, "process_resident_memory_bytes") <= 0 {
		t.Errorf("go_* and process_* wrong:\n%s", text)
	}
	if e.value(t, "streamd_streams") != 4 || e.value(t, "streamd_metrics_streams_omitted") != 1 ||
		e.value(t, "streamd_tcp_bytes_total") != 1234 || e.value(t, "streamd_tcp_values_total") != 56 || e.value(t, "streamd_tcp_connections_total") != 4 {
		t.Errorf("counters wrong:\n%s", text)
	}
	labels := []string{"0.5", "0.999", "1e-05", "1"}
	for name, vals := range values {
		key := exact.New(vals)
		want, err := s.api.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: s.Quantiles})
		if err != nil {
			t.Fatal(err)
		}
		for i, phi := range s.Quantiles {
			got := e.value(t, `streamd_stream_value{stream="`+name+`",quantile="`+labels[i]+`"}`)
			if float32(got) != float32(want.Quantiles[i].Value) {
				t.Errorf("%s φ %v: exported %v, Quantiles %v", name, phi, got, want.Quantiles[i].Value)
			}
			if err := key.CheckQuantile(phi, float64(float32(got)), testEps, int64(want.Quantiles[i].RankMin), int64(want.Quantiles[i].RankMax)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		var sum float64
		for _, v := range vals {
			sum += v
		}
		if c := e.value(t, `streamd_stream_value_count{stream="`+name+`"}`); c != float64(len(vals)) {
			t.Errorf("%s count %v, want %d", name, c, len(vals))
		}
		if got := e.value(t, `streamd_stream_value_sum{stream="`+name+`"}`); math.Abs(got-sum) > 1e-9*math.Abs(sum) {
			t.Errorf("%s sum %v, want %v", name, got, sum)
		}
		if e.value(t, `streamd_stream_values_total{stream="`+name+`"}`) != float64(len(vals)) ||
			e.value(t, `streamd_stream_memory_bytes{stream="`+name+`"}`) <= 0 {
			t.Errorf("%s: values or memory wrong:\n%s", name, text)
		}
	}
	// An empty stream's quantiles are NaN, as client libraries write them.
	if v := e.value(t, `streamd_stream_value{stream="s2.empty",quantile="0.5"}`); !math.IsNaN(v) {
		t.Errorf("empty stream's median %v, want NaN", v)
	}
	if e.value(t, `streamd_stream_value_count{stream="s2.empty"}`) != 0 {
		t.Error("empty stream's count is not 0")
	}
	if e.value(t, `streamd_rejected_total{stream="s0",reason="nan"}`) != 2 ||
		e.value(t, `streamd_rejected_total{stream="",reason="bad_stream_name"}`) != 5 {
		t.Errorf("rejects wrong:\n%s", text)
	}
	for series := range e.samples {
		if strings.Contains(series, "z.omitted") {
			t.Errorf("series %s of a stream beyond the cap", series)
		}
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain.name/x:1": "plain.name/x:1",
		"a\"b\\c\nd":     `a\"b\\c\nd`,
		"":               "",
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
	for v, want := range map[float64]string{0.5: "0.5", 1: "1", 1e-05: "1e-05", math.Inf(1): "+Inf", math.NaN(): "NaN", 123456789: "1.23456789e+08"} {
		if got := formatFloat(v); got != want {
			t.Errorf("formatFloat(%v) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		v    float64
		f64  bool
		want string
	}{
		{float64(float32(239.61)), false, "239.61"},
		{float64(float32(239.61)), true, "239.61000061035156"},
		{0.1, true, "0.1"},
		{-1e-7, false, "-1e-07"},
	} {
		if got := formatValue(c.v, c.f64); got != c.want {
			t.Errorf("formatValue(%v, %v) = %q, want %q", c.v, c.f64, got, c.want)
		}
	}
}

// TestMetricsLastN exports the quantiles of the last n values, clamped to
// each stream's sliding window, and checks them against the exact ones.
func TestMetricsLastN(t *testing.T) {
	s := openServer(t, func(s *Server) { s.LastN = 1000 })
	x, _ := synth.Generate(synth.Spec{Dist: synth.Normal, Order: synth.Sorted, Seed: 3}, 20000)
	if _, err := s.Pipeline.Create("small", summary.Config{SlidingWindow: 500}); err != nil {
		t.Fatal(err)
	}
	accept(t, s, "big", x)
	accept(t, s, "small", x)
	_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	e := parseExposition(t, text)
	rounded := round32(x)
	for name, n := range map[string]int{"big": 1000, "small": 500} {
		key := exact.New(rounded[len(rounded)-n:])
		for _, phi := range s.Quantiles {
			v := float64(float32(e.value(t, `streamd_stream_value{stream="`+name+`",quantile="`+formatFloat(phi)+`"}`)))
			if re, err := key.RankError(phi, v); err != nil || float64(re) > testEps*float64(n) {
				t.Errorf("%s φ %v over the last %d: %v has rank error %d (%v)", name, phi, n, v, re, err)
			}
		}
		if e.value(t, `streamd_stream_value_count{stream="`+name+`"}`) != float64(len(x)) {
			t.Errorf("%s: count is not over all history", name)
		}
	}
}
