package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "streamd/api/proto/streamd/v1"
	"streamd/summary"
)

// TestHistory samples by hand, one second apart: only the first streams
// by name are sampled, the ring keeps the newest samples, rates follow the
// counts, an unchanged stream is not asked again, and deleted or
// recreated streams are forgotten.
func TestHistory(t *testing.T) {
	s := openServer(t, nil)
	ctx := context.Background()
	h := newHistory(s.api, []float64{0.42, 0.5}, 2, 5*time.Second, time.Second)
	if want := append(chartPhis(), 0.42); len(h.phis) != len(want) || !slices.IsSorted(h.phis) || !slices.Contains(h.phis, 0.42) {
		t.Fatalf("phis %v", h.phis)
	}
	seq := func(from, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(from + i)
		}
		return out
	}
	accept(t, s, "a", seq(0, 1000))
	accept(t, s, "b", seq(0, 10))
	accept(t, s, "c", seq(0, 5))
	t0 := time.UnixMilli(1_700_000_000_000)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

	h.sample(ctx, at(0))
	for _, name := range []string{"a", "b"} {
		got, ok := h.since(name, 0)
		if !ok || len(got) != 1 {
			t.Fatalf("%s after one sample: %v, %v", name, got, ok)
		}
		want, err := s.api.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: h.phis})
		if err != nil {
			t.Fatal(err)
		}
		if got[0].count != want.Count || got[0].unixMilli != t0.UnixMilli() || len(got[0].quantiles) != len(h.phis) {
			t.Fatalf("%s sample %+v, want count %d", name, got[0], want.Count)
		}
		for i, q := range want.Quantiles {
			if got[0].quantiles[i] != q.Value {
				t.Errorf("%s φ %v: sampled %v, asked %v", name, q.Phi, got[0].quantiles[i], q.Value)
			}
		}
		if _, ok := h.rate(name); ok {
			t.Errorf("%s has a rate after one sample", name)
		}
	}
	if _, ok := h.since("c", 0); ok {
		t.Error("c is sampled beyond the cap of 2 streams")
	}

	// Seven more samples: a grows by 100 a second, b stays.
	for sec := 1; sec <= 7; sec++ {
		accept(t, s, "a", seq(1000+100*(sec-1), 100))
		h.sample(ctx, at(sec))
	}
	got, _ := h.since("a", 0)
	if len(got) != 5 || got[0].unixMilli != at(3).UnixMilli() || got[4].count != 1700 || got[0].count != 1300 {
		t.Fatalf("a's ring: %+v", got)
	}
	if rate, ok := h.rate("a"); !ok || rate != 100 {
		t.Errorf("a's rate %v, %v; want 100/s", rate, ok)
	}
	if rate, ok := h.rate("b"); !ok || rate != 0 {
		t.Errorf("b's rate %v, %v; want 0", rate, ok)
	}
	if recent, _ := h.since("a", at(5).UnixMilli()); len(recent) != 2 || recent[0].unixMilli != at(6).UnixMilli() {
		t.Errorf("a since 5s: %+v", recent)
	}
	bs, _ := h.since("b", 0)
	for _, x := range bs[1:] {
		if &x.quantiles[0] != &bs[0].quantiles[0] {
			t.Fatal("b's quantiles were asked again though its count did not change")
		}
	}

	// b deleted: forgotten, and c moves up into the cap. a recreated with
	// fewer values: its samples start afresh.
	if err := s.Pipeline.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Pipeline.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pipeline.Create("a", summary.Config{}); err != nil {
		t.Fatal(err)
	}
	accept(t, s, "a", seq(0, 10))
	h.sample(ctx, at(8))
	if _, ok := h.since("b", 0); ok {
		t.Error("b is still sampled after its deletion")
	}
	if got, ok := h.since("c", 0); !ok || len(got) != 1 || got[0].count != 5 {
		t.Errorf("c after b's deletion: %+v, %v", got, ok)
	}
	if got, _ := h.since("a", 0); len(got) != 1 || got[0].count != 10 {
		t.Errorf("a recreated: %+v", got)
	}
}

// TestHistoryEmptyStream samples a stream with no values: no quantiles.
func TestHistoryEmptyStream(t *testing.T) {
	s := openServer(t, nil)
	if _, err := s.Pipeline.Create("empty", summary.Config{}); err != nil {
		t.Fatal(err)
	}
	h := newHistory(s.api, nil, 10, time.Minute, time.Second)
	h.sample(context.Background(), time.Now())
	got, ok := h.since("empty", 0)
	if !ok || len(got) != 1 || got[0].count != 0 || got[0].quantiles != nil {
		t.Fatalf("empty stream's samples %+v, %v", got, ok)
	}
}

// TestHistoryServed runs the sampler in the server and reads its samples
// and rates over the API, as the page does.
func TestHistoryServed(t *testing.T) {
	s := openServer(t, func(s *Server) { s.History, s.Interval = time.Second, 10*time.Millisecond })
	accept(t, s, "x", []float64{1, 2, 3})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var hist historyResponse
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/history?stream=x", nil)
		if err := json.Unmarshal([]byte(body), &hist); err != nil || resp.StatusCode != 200 {
			t.Fatalf("history: %s %q: %v", resp.Status, body, err)
		}
		if hist.Sampled && len(hist.Samples) >= 2 && hist.IntervalMS == 10 && hist.KeptMS == 1000 {
			last := hist.Samples[len(hist.Samples)-1]
			if last.Count != 3 || len(last.Quantiles) != len(hist.Phis) || last.Quantiles[0] != 1 || last.Quantiles[len(last.Quantiles)-1] != 3 {
				t.Fatalf("history sample %+v of φs %v", last, hist.Phis)
			}
			var later historyResponse
			_, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/history?stream=x&since="+strconv.FormatInt(last.TimeUnixMS, 10), nil)
			if err := json.Unmarshal([]byte(body), &later); err != nil {
				t.Fatal(err)
			}
			for _, x := range later.Samples {
				if x.TimeUnixMS <= last.TimeUnixMS {
					t.Fatalf("since %d returned a sample of %d", last.TimeUnixMS, x.TimeUnixMS)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no samples: %s", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHistoryBudget gives the sampler no time to spare: each round asks
// one changed stream for its quantiles, the one asked least recently, so
// that every busy stream is sampled in turn.
func TestHistoryBudget(t *testing.T) {
	s := openServer(t, nil)
	h := newHistory(s.api, nil, 10, time.Hour, time.Nanosecond)
	t0 := time.UnixMilli(1_700_000_000_000)
	var order []string
	for round := range 6 {
		for _, name := range []string{"c", "a", "b"} {
			accept(t, s, name, []float64{float64(round)})
		}
		h.sample(context.Background(), t0.Add(time.Duration(round)*time.Second))
		for _, name := range []string{"a", "b", "c"} {
			got, _ := h.since(name, t0.Add(time.Duration(round)*time.Second).UnixMilli()-1)
			if len(got) == 1 {
				order = append(order, name)
			}
		}
		if rate, ok := h.rate("a"); round > 0 && (!ok || rate != 1) {
			t.Errorf("round %d: a's rate %v, %v; want 1/s whether or not its quantiles were taken", round, rate, ok)
		}
	}
	if got := strings.Join(order, ""); got != "abcabc" {
		t.Errorf("streams sampled in the order %q, want abcabc", got)
	}
}

// TestHistoryKeepsCostlyListing gives the sampler an interval that any
// listing overruns: it keeps its listing for maxListAge rounds, so that a
// stream created before the sampled ones waits, until a sampled stream is
// deleted and the next round lists them again.
func TestHistoryKeepsCostlyListing(t *testing.T) {
	s := openServer(t, nil)
	ctx := context.Background()
	h := newHistory(s.api, nil, 2, time.Hour, time.Microsecond)
	accept(t, s, "b", []float64{1})
	accept(t, s, "c", []float64{2})
	t0 := time.UnixMilli(1_700_000_000_000)
	sampled := func(round int, want ...string) {
		t.Helper()
		h.sample(ctx, t0.Add(time.Duration(round)*time.Second))
		for _, name := range []string{"a", "b", "c"} {
			_, ok := h.since(name, 0)
			if ok != slices.Contains(want, name) {
				t.Fatalf("round %d: %s sampled %v, want the streams %v", round, name, ok, want)
			}
		}
	}
	sampled(0, "b", "c")
	accept(t, s, "a", []float64{3})
	for round := 1; round < maxListAge; round++ {
		sampled(round, "b", "c")
	}
	sampled(maxListAge, "a", "b")
	accept(t, s, "0", []float64{4})
	if err := s.Pipeline.Delete("b"); err != nil {
		t.Fatal(err)
	}
	sampled(maxListAge+1, "a")
	h.sample(ctx, t0.Add(time.Duration(maxListAge+2)*time.Second))
	if _, ok := h.since("0", 0); !ok {
		t.Fatal("0 not sampled in the round after a sampled stream was deleted")
	}
}
