package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamd/synth"
)

// TestCompare runs the comparison's plumbing at a tiny N: the exact
// baseline has no error, streamd stays within ε and within the bound it
// reports, and every sketch answers and serializes.
func TestCompare(t *testing.T) {
	const n, eps = 20000, 0.001 // heavy hitters are guaranteed for support ≥ ε
	o := options{N: n, Reps: 1, Epsilon: eps, Window: 1024, DDAlpha: 0.01, KLLK: 200, TDigest: 100, Seed: 7}
	for _, d := range benchDists {
		for _, ord := range benchOrders {
			st, err := syntheticStream(d, ord, n, o.Seed)
			if err != nil {
				t.Fatal(err)
			}
			k := newKey(st.Values)
			res, h, err := compare(st, k, defaultContenders(o), o.Reps, eps, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Bytes <= 0 || r.NsPerValue <= 0 {
					t.Errorf("%s %s: bytes %d, ns/value %v", st.Name, r.Sketch, r.Bytes, r.NsPerValue)
				}
				switch r.Sketch {
				case nameExact:
					if r.MaxRankErr != 0 || r.RelErr99 != 0 || r.RelErr999 != 0 {
						t.Errorf("%s: exact baseline has error %+v", st.Name, r.accuracy)
					}
				case nameStreamd:
					if r.MaxRankErr > eps {
						t.Errorf("%s: streamd rank error %v > ε = %v", st.Name, r.MaxRankErr, eps)
					}
					if r.MaxRankErr > r.Streamd.Bound+1/float64(n) {
						t.Errorf("%s: streamd rank error %v above its reported bound %v", st.Name, r.MaxRankErr, r.Streamd.Bound)
					}
				}
			}
			// No false negatives is a guarantee of both heavy-hitter sketches.
			for i, p := range []prf{h.Streamd[0], h.DS[0]} {
				if h.True > 0 && p.Recall != 1 {
					t.Errorf("%s: heavy hitters %d: recall %v without false negatives", st.Name, i, p.Recall)
				}
			}
			for i, p := range []prf{h.Streamd[1], h.DS[1]} {
				if p.Reported > 0 && p.Precise != 1 {
					t.Errorf("%s: heavy hitters %d: precision %v without false positives", st.Name, i, p.Precise)
				}
			}
		}
	}
}

func TestRankError(t *testing.T) {
	k := newKey([]float64{1, 2, 2, 2, 3, 5})
	for _, c := range []struct {
		phi, v float64
		want   int64
	}{
		{0.5, 2, 0},    // ⌈3⌉ = 3, 2 has ranks 2..4
		{0.5, 3, 2},    // 3 has rank 5
		{0.5, 1, 2},    // 1 has rank 1
		{0.99, 4, 1},   // 4 is absent: rank #{x<4} = 5, target 6
		{0.01, 0.5, 1}, // absent below everything: rank 0, target 1
	} {
		if got := k.rankError(c.phi, c.v); got != c.want {
			t.Errorf("rankError(%v, %v) = %d, want %d", c.phi, c.v, got, c.want)
		}
	}
}

// TestReport writes the whole report and plot at a tiny N, with the real
// columns when the data file is there.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	data := "../../data/household_power_consumption.csv.gz"
	if _, err := os.Stat(data); err != nil {
		data = ""
	}
	o := options{N: 5000, SweepN: 5000, Reps: 1, Epsilon: 0.01, Window: 512, DDAlpha: 0.01, KLLK: 100, TDigest: 100, Seed: 1,
		Data: data, Household: data != "", Out: filepath.Join(dir, "out.md"), Plot: filepath.Join(dir, "plot.png"),
		SweepNames: []string{string(synth.LogNormal) + "/" + string(synth.Random)}}
	if err := run(o, io.Discard); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Ingest", "## Heavy hitters", "## Rank error at equal memory", "## Conclusions", "github.com/DataDog/sketches-go", "(plot.png)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	png, err := os.ReadFile(o.Plot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("plot: %v", err)
	}
}

// TestBytesPerStream runs the bytes-per-stream mode with few instances:
// every contender has a positive live heap per stream at every count, and
// every one with an encoding a positive encoded size (the mode checks
// that streamd's streams count all their values, every full window
// summarised); the section names every contender.
func TestBytesPerStream(t *testing.T) {
	o := perStreamOptions{Counts: []int{1, 100, 10_000, 100_000}, Streams: []int{50, 50, 4, 1}, Seed: 3, DDAlpha: 0.01, KLLK: 200, TDigest: 100}
	r, err := collectPerStream(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.results) != len(memContenders(o)) {
		t.Fatalf("%d contenders measured, want %d", len(r.results), len(memContenders(o)))
	}
	for _, res := range r.results {
		if len(res.per) != len(o.Counts) {
			t.Fatalf("%s: %d counts measured, want %d", res.c.name, len(res.per), len(o.Counts))
		}
		for i, ps := range res.per {
			if ps.Heap <= 0 {
				t.Errorf("%s at %d values: heap %v bytes per stream", res.c.name, o.Counts[i], ps.Heap)
			}
			if hasEncoding := !strings.HasPrefix(res.c.name, "Prometheus"); hasEncoding != (ps.Serialized > 0) {
				t.Errorf("%s at %d values: serialized %d bytes", res.c.name, o.Counts[i], ps.Serialized)
			}
		}
	}
	var md bytes.Buffer
	if err := writePerStream(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Bytes per stream", "| n = 1 | n = 100 | n = 10^4 | n = 10^5 |", "github.com/prometheus/client_golang"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, md.String())
		}
	}
	for _, res := range r.results {
		if !strings.Contains(md.String(), "| "+res.c.name+" | ") {
			t.Errorf("section lacks a row for %s", res.c.name)
		}
	}
}

// TestStreamdHeapPerStream: streamd's heap per stream is the same whether
// one stream or three are measured, so nothing left from before the
// measurement (the warm-up's deleted streams) is freed during it and
// taken off the streams' figure.
func TestStreamdHeapPerStream(t *testing.T) {
	x, err := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 4}, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	x = round32(x)
	ctx := context.Background()
	one, err := measureStreamd(ctx, 1, x, streamdFloat32)
	if err != nil {
		t.Fatal(err)
	}
	three, err := measureStreamd(ctx, 3, x, streamdFloat32)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(one.Heap-three.Heap) > three.Heap/10 {
		t.Errorf("heap per stream of %d values: %.0f bytes measured with 1 stream, %.0f with 3", len(x), one.Heap, three.Heap)
	}
}
