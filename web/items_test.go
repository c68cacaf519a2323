package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/items"
)

// skewedItems returns n items, a few of them frequent, some holding commas,
// spaces, quotes and non-ASCII letters, and each item's exact count.
func skewedItems(n int) ([]string, map[string]int64) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"/index.html", "a,b", "a b", "é,ü", `q"uote`, "x&y=z"}
	out := make([]string, n)
	counts := map[string]int64{}
	for i := range out {
		k := int(float64(500) * r.Float64() * r.Float64() * r.Float64()) // skewed towards 0
		x := fmt.Sprintf("item-%d", k)
		if k < len(names) {
			x = names[k]
		}
		out[i] = x
		counts[x]++
	}
	return out, counts
}

// acceptItems adds items to an item stream, a thousand at a time, and waits
// until no window of it is in flight.
func acceptItems(t testing.TB, s *Server, stream string, list []string) {
	t.Helper()
	for i := 0; i < len(list); i += 1000 {
		var b items.Batch
		for _, x := range list[i:min(i+1000, len(list))] {
			b.AppendString(x)
		}
		if _, err := s.Pipeline.Accept(context.Background(), &feed.Batch{Stream: stream, Items: &b}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, s, stream)
}

// TestAPIItemStream asks the JSON API, /metrics and the history of an item
// stream, and checks the items' counts against the exact ones.
func TestAPIItemStream(t *testing.T) {
	s := openServer(t, func(s *Server) {
		s.Quantiles = []float64{0.5, 0.99}
		s.History, s.Interval = time.Minute, 10*time.Millisecond
	})
	ctx := context.Background()
	n := 50000
	if testing.Short() {
		n = 10000
	}
	list, counts := skewedItems(n)
	acceptItems(t, s, "a.items", list)
	accept(t, s, "b.values", []float64{1, 2, 3})
	epsN := testEps * float64(n)

	checkBounds := func(what, item string, lo, hi uint64) {
		t.Helper()
		want := counts[item]
		if int64(lo) > want || int64(hi) < want || float64(hi-lo) > epsN {
			t.Fatalf("%s %q: count in [%d, %d], exact %d, εn %v", what, item, lo, hi, want, epsN)
		}
	}
	for _, support := range []float64{0.002, 0.01, 0.05, 0.3} {
		var hh pb.HeavyHittersResponse
		getMessage(t, s, fmt.Sprintf("/api/heavy-hitters?stream=a.items&support=%v", support), &hh)
		if hh.Count != uint64(n) {
			t.Fatalf("support %v: count %d, want %d", support, hh.Count, n)
		}
		got := map[string]bool{}
		for _, it := range hh.Items {
			if _, ok := counts[it.Item]; !ok || it.Value != 0 {
				t.Fatalf("support %v: heavy hitter %v is not an item of the stream", support, it)
			}
			checkBounds(fmt.Sprintf("support %v", support), it.Item, it.CountMin, it.CountMax)
			if float64(counts[it.Item]) < (support-testEps)*float64(n) {
				t.Fatalf("support %v: %q with exact count %d", support, it.Item, counts[it.Item])
			}
			got[it.Item] = true
		}
		for x, c := range counts {
			if float64(c) >= support*float64(n) && !got[x] {
				t.Fatalf("support %v: %q (exact count %d) missing", support, x, c)
			}
		}
		want, err := s.api.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: "a.items", Support: support})
		if err != nil || !proto.Equal(want, &hh) {
			t.Fatalf("support %v: JSON and gRPC answers differ (%v)", support, err)
		}
	}

	// Frequencies: repeated item parameters, in order, commas kept.
	asked := []string{"a,b", "nowhere", "é,ü", "/index.html", "item-400", `q"uote`, "x&y=z"}
	var q []string
	for _, x := range asked {
		q = append(q, "item="+url.QueryEscape(x))
	}
	var freqs pb.FrequenciesResponse
	getMessage(t, s, "/api/frequencies?stream=a.items&"+strings.Join(q, "&"), &freqs)
	if len(freqs.Items) != len(asked) || freqs.Count != uint64(n) {
		t.Fatalf("frequencies of %q: %v", asked, &freqs)
	}
	for i, it := range freqs.Items {
		if it.Item != asked[i] {
			t.Fatalf("frequency %d is of %q, asked %q", i, it.Item, asked[i])
		}
		checkBounds("frequency", it.Item, it.CountMin, it.CountMax)
	}
	for _, c := range []struct{ path, want string }{
		{"/api/frequencies?stream=a.items&value=1", "FailedPrecondition"},
		{"/api/frequencies?stream=b.values&item=x", "FailedPrecondition"},
		{"/api/quantiles?stream=a.items&phi=0.5", "FailedPrecondition"},
	} {
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), c.path, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %s %s, want 400 %s", c.path, resp.Status, body, c.want)
		}
	}

	// /metrics: the item stream's count, and no quantiles.
	_, text := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/metrics", nil)
	e := parseExposition(t, text)
	if e.value(t, `streamd_stream_value_count{stream="a.items"}`) != float64(n) ||
		e.value(t, `streamd_stream_values_total{stream="a.items"}`) != float64(n) ||
		e.value(t, `streamd_stream_value{stream="b.values",quantile="0.5"}`) != 2 {
		t.Errorf("/metrics counts wrong:\n%s", text)
	}
	if strings.Contains(text, `streamd_stream_value{stream="a.items",quantile=`) {
		t.Errorf("/metrics has quantiles of an item stream:\n%s", text)
	}

	// The history: counts, and null quantiles.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var hist historyResponse
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/history?stream=a.items", nil)
		if err := json.Unmarshal([]byte(body), &hist); err != nil || resp.StatusCode != 200 {
			t.Fatalf("history: %s %q: %v", resp.Status, body, err)
		}
		for _, x := range hist.Samples {
			if x.Count == 0 || x.Quantiles != nil {
				t.Fatalf("item stream's history sample %+v", x)
			}
		}
		if hist.Sampled && len(hist.Samples) > 0 && hist.Samples[len(hist.Samples)-1].Count == uint64(n) {
			if !strings.Contains(body, `"quantiles":null`) {
				t.Fatalf("history: %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no samples: %s", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
