package loadgen_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"streamd/feed"
	"streamd/items"
	"streamd/loadgen"
	"streamd/synth"
)

// memTarget is a Target that keeps what it is sent, in memory.
type memTarget struct {
	mu     sync.Mutex
	values map[string][]float64
	items  map[string][]string
	pairs  map[string][]float64 // x, y, x, y, …
	dials  int
}

func (m *memTarget) Dial(ctx context.Context) (loadgen.Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dials++
	if m.values == nil {
		m.values = make(map[string][]float64)
	}
	return memConn{m}, nil
}

type memConn struct{ m *memTarget }

func (c memConn) SendPairs(stream string, x, y []float64) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.pairs == nil {
		c.m.pairs = make(map[string][]float64)
	}
	for i := range x {
		c.m.pairs[stream] = append(c.m.pairs[stream], x[i], y[i])
	}
	return nil
}

func (c memConn) Send(stream string, values []float64) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	c.m.values[stream] = append(c.m.values[stream], values...)
	return nil
}

func (c memConn) SendItems(stream string, b *items.Batch) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.items == nil {
		c.m.items = make(map[string][]string)
	}
	for i := range b.Len() {
		c.m.items[stream] = append(c.m.items[stream], string(b.Item(i)))
	}
	return nil
}

func (c memConn) Close() (loadgen.Ack, error) { return loadgen.Ack{}, nil }

// writeFile writes data to name in a temporary directory, gzip-compressed
// if name ends in .gz, and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if strings.HasSuffix(name, ".gz") {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		data = b.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recording returns a file in the framed protocol that holds streams.
func recording(t *testing.T, name string, streams map[string][]float64) string {
	t.Helper()
	var b bytes.Buffer
	rec := loadgen.NewRecorder(&b)
	for _, s := range slices.Sorted(maps.Keys(streams)) {
		if _, err := rec.Accept(context.Background(), &feed.Batch{Stream: s, Values: streams[s]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, name, b.Bytes())
}

const csvData = `index,Date,Time,power,voltage
0,1/1/07,0:00:00,2.58,241.97
1,1/1/07,0:01:00,?,?
2,1/1/07,0:02:00,2.5,
3,1/1/07,0:03:00,1e3,240
`

func TestSources(t *testing.T) {
	synthValues, err := synth.Generate(synth.Spec{Dist: synth.Zipf, Order: synth.Sorted, Seed: 3}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		src     func(t *testing.T) loadgen.Source
		want    map[string][]float64
		skipped map[string]int64
	}{
		{
			name: "text",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.TextFile{Path: writeFile(t, "lat.txt", []byte("1.5\n  2\n\n# comment\n?\nNaN\n-0\n3e2\nx"))}
			},
			want:    map[string][]float64{"lat": {1.5, 2, 0, 300}},
			skipped: map[string]int64{"lat": 3},
		},
		{
			name: "text.gz",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.TextFile{Path: writeFile(t, "lat.txt.gz", []byte("1\n2\n3\n")), Stream: "s"}
			},
			want: map[string][]float64{"s": {1, 2, 3}},
		},
		{
			name: "csv by name",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.CSVFile{Path: writeFile(t, "p.csv", []byte(csvData)), Columns: []string{"power"}}
			},
			want:    map[string][]float64{"power": {2.58, 2.5, 1000}},
			skipped: map[string]int64{"power": 1},
		},
		{
			name: "csv by index",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.CSVFile{Path: writeFile(t, "p.csv", []byte(csvData)), Columns: []string{"4"}, Streams: []string{"v"}}
			},
			want:    map[string][]float64{"v": {241.97, 240}},
			skipped: map[string]int64{"v": 2},
		},
		{
			name: "csv columns with prefix, gzip",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.CSVFile{Path: writeFile(t, "p.csv.gz", []byte(csvData)), Columns: []string{"power", "voltage"}, Prefix: "house."}
			},
			want:    map[string][]float64{"house.power": {2.58, 2.5, 1000}, "house.voltage": {241.97, 240}},
			skipped: map[string]int64{"house.power": 1, "house.voltage": 2},
		},
		{
			name: "csv every numeric column, no header",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.CSVFile{Path: writeFile(t, "n.csv", []byte("1;x;2\n3;y;z\n")), NoHeader: true, Comma: ';'}
			},
			want:    map[string][]float64{"col0": {1, 3}, "col2": {2}},
			skipped: map[string]int64{"col2": 1},
		},
		{
			name: "recording",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.Recording{Path: recording(t, "r.sdb", map[string][]float64{"a": {1, 2}, "b": {3}})}
			},
			want: map[string][]float64{"a": {1, 2}, "b": {3}},
		},
		{
			name: "recording.gz with prefix",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.Recording{Path: recording(t, "r.sdb.gz", map[string][]float64{"a": {1, 2}}), Prefix: "x."}
			},
			want: map[string][]float64{"x.a": {1, 2}},
		},
		{
			name: "line protocol",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.Recording{Path: writeFile(t, "l.txt", []byte("a 1 2 bad\nb 3\n"))}
			},
			want:    map[string][]float64{"a": {1, 2}, "b": {3}},
			skipped: map[string]int64{"a": 1},
		},
		{
			name: "synth",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.Synth{Spec: synth.Spec{Dist: synth.Zipf, Order: synth.Sorted, Seed: 3}, Count: 1000, Streams: []string{"z"}}
			},
			want: map[string][]float64{"z": synthValues},
		},
		{
			name: "loop",
			src: func(t *testing.T) loadgen.Source {
				return &loadgen.Loop{Source: &loadgen.TextFile{Path: writeFile(t, "a.txt", []byte("1\n2\n"))}, N: 3}
			},
			want: map[string][]float64{"a": {1, 2, 1, 2, 1, 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &memTarget{}
			r := &loadgen.Runner{Source: tt.src(t), Target: m, Batch: 2}
			res, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !mapsEqual(m.values, tt.want) {
				t.Errorf("sent %v, want %v", m.values, tt.want)
			}
			var n, skipped int64
			for name, st := range res.Streams {
				var k int64
				for _, c := range st.Skipped {
					k += c
				}
				if k != tt.skipped[name] {
					t.Errorf("stream %s: skipped %d (%v), want %d", name, k, st.Skipped, tt.skipped[name])
				}
				n += st.Sent
				skipped += k
			}
			if res.Sent != n || res.Skipped != skipped {
				t.Errorf("result: sent %d skipped %d, streams say %d and %d", res.Sent, res.Skipped, n, skipped)
			}
		})
	}
}

func mapsEqual(a, b map[string][]float64) bool {
	return maps.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(x, y) })
}

// TestSynthEvery runs every distribution in every arrival order, several
// streams at once.
func TestSynthEvery(t *testing.T) {
	const n = 501
	for _, d := range synth.Dists {
		for _, o := range synth.Orders {
			spec := synth.Spec{Dist: d, Order: o, Seed: 7, Period: 10}
			m := &memTarget{}
			src := &loadgen.Synth{Spec: spec, Count: n, Streams: []string{"a", "b"}}
			if _, err := (&loadgen.Runner{Source: src, Target: m}).Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			for i, name := range src.Streams {
				s := spec
				s.Seed += uint64(i)
				want, _ := synth.Generate(s, n/2+1-i)
				if !slices.Equal(m.values[name], want) {
					t.Errorf("%s/%s stream %s: sent %d values, not those of synth.Generate", d, o, name, len(m.values[name]))
				}
			}
		}
	}
}

func TestRunnerLimits(t *testing.T) {
	endless := &loadgen.Synth{Spec: synth.Spec{Dist: synth.Uniform}, Streams: []string{"u"}}
	t.Run("count", func(t *testing.T) {
		m := &memTarget{}
		res, err := (&loadgen.Runner{Source: endless, Target: m, Count: 12345, Conns: 3}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 12345 || len(m.values["u"]) != 12345 || m.dials != 3 {
			t.Errorf("sent %d (target got %d over %d conns), want 12345 over 3", res.Sent, len(m.values["u"]), m.dials)
		}
	})
	t.Run("rate", func(t *testing.T) {
		m := &memTarget{}
		var reports []loadgen.Progress
		r := &loadgen.Runner{
			Source: endless, Target: m, Count: 1000, Rate: 10000,
			Progress: func(p loadgen.Progress) { reports = append(reports, p) }, ProgressInterval: 20 * time.Millisecond,
		}
		res, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 1000 || res.Elapsed < 90*time.Millisecond || res.Elapsed > 2*time.Second {
			t.Errorf("sent %d in %v at 10000/s, want 1000 in 100ms", res.Sent, res.Elapsed)
		}
		if len(reports) < 2 || reports[len(reports)-1].Sent != 1000 {
			t.Errorf("progress reports %v", reports)
		}
	})
	t.Run("duration", func(t *testing.T) {
		m := &memTarget{}
		res, err := (&loadgen.Runner{Source: endless, Target: m, Duration: 50 * time.Millisecond, Rate: 20000}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent < 500 || res.Sent > 1001 {
			t.Errorf("sent %d in 50ms at 20000/s, want about 1000", res.Sent)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err := (&loadgen.Runner{Source: endless, Target: &memTarget{}, Rate: 1000}).Run(ctx)
		if err == nil {
			t.Error("run without end returned nil when its context ended")
		}
	})
	t.Run("failing conn", func(t *testing.T) {
		_, err := (&loadgen.Runner{Source: endless, Target: &loadgen.TCP{Addr: "127.0.0.1:1"}}).Run(context.Background())
		if err == nil {
			t.Error("run to a closed port returned nil")
		}
	})
}

func TestProgressPrinter(t *testing.T) {
	var b strings.Builder
	pp := &loadgen.ProgressPrinter{W: &b, Terminal: true}
	pp.Print(loadgen.Progress{Sent: 1500, Total: 3000, Elapsed: time.Second})
	pp.Print(loadgen.Progress{Sent: 3000, Total: 3000, Elapsed: 2 * time.Second})
	pp.Done()
	want := "\rsent 1,500 values of 3,000 (50.0%), 1,500 values/s, elapsed 1s, ETA 1s" +
		"\rsent 3,000 values of 3,000 (100.0%), 1,500 values/s, elapsed 2s, ETA 0s\n"
	if b.String() != want {
		t.Errorf("terminal progress:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	pp = &loadgen.ProgressPrinter{W: &b}
	pp.Print(loadgen.Progress{Sent: 10, Elapsed: time.Second})
	pp.Done()
	if got := b.String(); got != "sent 10 values, 10 values/s, elapsed 1s\n" {
		t.Errorf("plain progress %q", got)
	}
}

func ExampleResult_WriteSummary() {
	res := &loadgen.Result{
		Sent: 4, Skipped: 1, Elapsed: 2 * time.Second,
		Streams: map[string]*loadgen.StreamResult{
			"power": {Sent: 3, Skipped: map[feed.Reason]int64{feed.ReasonMalformed: 1}},
			"volts": {Sent: 1},
		},
	}
	res.WriteSummary(os.Stdout)
	// Output:
	// stream  sent  skipped
	// power      3        1  malformed=1
	// volts      1        0
	// sent 4 values in 2s: 2 values/s; skipped 1 at the source
}

// TestItemSources sends items from the synthetic source and from a CSV
// column of strings, records them, and replays the recording with a
// prefix.
func TestItemSources(t *testing.T) {
	ctx := context.Background()
	run := func(src loadgen.Source) *memTarget {
		t.Helper()
		m := &memTarget{}
		r := &loadgen.Runner{Source: src, Target: m, Batch: 100}
		if _, err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		return m
	}
	spec := synth.Spec{Dist: synth.Zipf, S: 1.1, Distinct: 50, Seed: 3}
	m := run(&loadgen.Synth{Spec: spec, Count: 1000, Streams: []string{"z"}, Items: true})
	ranks, _ := synth.Generate(spec, 1000)
	var want []string
	for _, r := range ranks {
		want = append(want, synth.ItemName(r))
	}
	if got := m.items["z"]; !slices.Equal(got, want) {
		t.Fatalf("synthetic items %q..., want %q...", got[:min(5, len(got))], want[:5])
	}

	// Pareto's integer parts reach far past the names kept.
	spec = synth.Spec{Dist: synth.Pareto, Alpha: 0.3, Seed: 5}
	m = run(&loadgen.Synth{Spec: spec, Count: 1000, Streams: []string{"p"}, Items: true})
	values, _ := synth.Generate(spec, 1000)
	want = want[:0]
	for _, v := range values {
		want = append(want, synth.ItemName(v))
	}
	if got := m.items["p"]; !slices.Equal(got, want) || slices.Max(values) < 1<<22 {
		t.Fatalf("Pareto items %q..., want %q... (greatest value %v)", got[:min(5, len(got))], want[:5], slices.Max(values))
	}

	csv := writeFile(t, "log.csv", []byte("url,status,ms\n/a,200,1.5\n/b c,404,2\n,500,3\n/a,200,4\n"))
	m = run(&loadgen.CSVFile{Path: csv, Columns: []string{"ms"}, ItemColumns: []string{"url", "status"}})
	if got := m.items["url"]; !slices.Equal(got, []string{"/a", "/b c", "/a"}) {
		t.Errorf("url items %q", got)
	}
	if got := m.items["status"]; !slices.Equal(got, []string{"200", "404", "500", "200"}) {
		t.Errorf("status items %q", got)
	}
	if got := m.values["ms"]; !slices.Equal(got, []float64{1.5, 2, 3, 4}) {
		t.Errorf("ms values %v", got)
	}

	// Record, then replay with a prefix.
	var buf bytes.Buffer
	rec := loadgen.NewRecorder(&buf)
	var b items.Batch
	for _, x := range want {
		b.AppendString(x)
	}
	if _, err := rec.Accept(ctx, &feed.Batch{Stream: "z", Items: &b}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "items.sdb", buf.Bytes())
	m = run(&loadgen.Loop{Source: &loadgen.Recording{Path: path, Prefix: "p."}, N: 2})
	if got := m.items["p.z"]; !slices.Equal(got, append(slices.Clone(want), want...)) {
		t.Errorf("replayed %d items, want %d", len(got), 2*len(want))
	}
}
