package main

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"streamd/synth"
)

// A stream is one input of the comparison: its values, rounded to float32
// (as streamd stores them) and widened back, in arrival order. Every
// sketch gets exactly these values, so one answer key serves all of them.
type stream struct {
	Name   string
	Values []float64
}

// The synthetic distributions and arrival orders of the comparison.
var (
	benchDists  = []synth.Dist{synth.Uniform, synth.Normal, synth.LogNormal, synth.Pareto, synth.Zipf}
	benchOrders = []synth.Order{synth.Random, synth.Sorted, synth.Alternating}
)

// householdColumns are the real columns of the household power data.
var householdColumns = []string{"Global_active_power", "Voltage", "Global_intensity", "Sub_metering_1"}

// round32 rounds x to float32 in place, as streamd's default stores it.
func round32(x []float64) []float64 {
	for i, v := range x {
		x[i] = float64(float32(v))
	}
	return x
}

// syntheticStream draws n values of d in order o. Alternating blocks are
// n/37 values long, as in streamd's own tests: each block spans the whole
// range, alternately ascending and descending.
func syntheticStream(d synth.Dist, o synth.Order, n int, seed uint64) (stream, error) {
	x, err := synth.Generate(synth.Spec{Dist: d, Order: o, Seed: seed, Period: max(1, n/37)}, n)
	if err != nil {
		return stream{}, fmt.Errorf("generate %s/%s: %w", d, o, err)
	}
	return stream{Name: fmt.Sprintf("%s/%s", d, o), Values: round32(x)}, nil
}

// readColumns reads the named columns of a CSV file (gzip-compressed when
// its name ends in .gz) with a header line, in file order. Fields that are
// not finite numbers ("?" marks a missing measurement) are skipped and
// counted in skipped.
func readColumns(path string, columns []string) (values map[string][]float64, skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("read %s header: %w", path, err)
	}
	index := make([]int, len(columns))
	for i, c := range columns {
		if index[i] = slices.Index(header, c); index[i] < 0 {
			return nil, 0, fmt.Errorf("read %s: no column %q", path, c)
		}
	}
	values = make(map[string][]float64)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		for i, c := range columns {
			v, err := strconv.ParseFloat(rec[index[i]], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				skipped++
				continue
			}
			values[c] = append(values[c], v)
		}
	}
	return values, skipped, nil
}

// householdStreams returns the real columns as streams, in file order.
func householdStreams(path string) ([]stream, int, error) {
	cols, skipped, err := readColumns(path, householdColumns)
	if err != nil {
		return nil, 0, err
	}
	var out []stream
	for _, c := range householdColumns {
		out = append(out, stream{Name: "household/" + c, Values: round32(cols[c])})
	}
	return out, skipped, nil
}
