package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"streamd/summary"
	"streamd/synth"
)

// benchServer serves n streams of 40,000 values each at the daemon's
// default ε and W (so each has a partial window of 40,000 values that
// every all-history query sorts), with a small sliding window to keep the
// benchmark's memory down.
func benchServer(b *testing.B, n int) *Server {
	s := openServer(b, func(s *Server) { s.MaxStreams = n })
	x, _ := synth.Generate(synth.Spec{Dist: synth.LogNormal, Seed: 1}, 40000)
	for i := range n {
		name := fmt.Sprintf("stream%04d", i)
		if _, err := s.Pipeline.Create(name, summary.Config{Epsilon: 0.001, WindowSize: 65536, SlidingWindow: 1000}); err != nil {
			b.Fatal(err)
		}
		accept(b, s, name, x)
	}
	return s
}

// BenchmarkHistorySample measures one round of the page's sampler over
// streams that all changed since the last round: with an interval of an
// hour, whose budget lets it ask every stream (the cost of a quantile
// sample is ns/op over the streams), and with the default second, whose
// budget bounds the round; and over streams that did not change (one
// Stats call each).
func BenchmarkHistorySample(b *testing.B) {
	for _, n := range []int{100, 1000} {
		s := benchServer(b, n)
		ctx := context.Background()
		now := time.Now()
		for _, interval := range []time.Duration{time.Hour, time.Second} {
			h := newHistory(s.api, s.Quantiles, n, time.Hour, interval)
			h.sample(ctx, now)
			b.Run(fmt.Sprintf("streams=%d/changed/interval=%v", n, interval), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					for i := range n {
						accept(b, s, fmt.Sprintf("stream%04d", i), []float64{1})
					}
					now = now.Add(interval)
					b.StartTimer()
					h.sample(ctx, now)
				}
			})
		}
		// An interval of an hour: the first round asks every stream.
		h := newHistory(s.api, s.Quantiles, n, time.Hour, time.Hour)
		h.sample(ctx, now)
		b.Run(fmt.Sprintf("streams=%d/idle", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Second)
				h.sample(ctx, now)
			}
		})
	}
}

// BenchmarkMetricsScrape measures one scrape of /metrics over HTTP with
// the default φs.
func BenchmarkMetricsScrape(b *testing.B) {
	for _, n := range []int{100, 1000} {
		s := benchServer(b, n)
		url := "http://" + s.ListenAddr() + "/metrics"
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
