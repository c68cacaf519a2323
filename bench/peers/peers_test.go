package main

import (
	"bytes"
	"io"
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
