package web

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"streamd/api"
	pb "streamd/api/proto/streamd/v1"
	"streamd/feed"
	"streamd/gpusort"
	"streamd/internal/exact"
	"streamd/pipeline"
	"streamd/summary"
	"streamd/synth"
)

const testEps = 0.001

// openServer serves a fresh pipeline on 127.0.0.1:0, without sampling
// unless mod turns it on.
func openServer(t testing.TB, mod func(*Server)) *Server {
	t.Helper()
	return servePipeline(t, pipeline.Config{Defaults: summary.Config{Epsilon: testEps, WindowSize: 4096, SlidingWindow: 100000}}, mod)
}

// servePipeline is openServer for a fresh pipeline of cfg, with the CPU
// sorter unless cfg names one, and no logs. The pipeline and the server
// close when the test ends.
func servePipeline(t testing.TB, cfg pipeline.Config, mod func(*Server)) *Server {
	t.Helper()
	if cfg.Sorter == nil {
		cfg.Sorter = gpusort.NewCPU(0)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	p, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	s := New("127.0.0.1:0", p)
	s.History = 0
	s.Logger = slog.New(slog.DiscardHandler)
	if mod != nil {
		mod(s)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

// accept adds values to a stream and waits until no window of it is in
// flight, so that its answers stay the same until more values come.
func accept(t testing.TB, s *Server, stream string, values []float64) {
	t.Helper()
	if _, err := s.Pipeline.Accept(context.Background(), &feed.Batch{Stream: stream, Values: append([]float64(nil), values...)}); err != nil {
		t.Fatal(err)
	}
	settle(t, s, stream)
}

// settle waits until no window of a stream is in flight.
func settle(t testing.TB, s *Server, stream string) {
	t.Helper()
	st, err := s.Pipeline.Stream(stream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for x := st.Stats(); x.Pending >= int64(x.Config.WindowSize); x = st.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d values still in flight", stream, x.Pending)
		}
		time.Sleep(time.Millisecond)
	}
}

// get asks the server for path with the given request headers.
func get(t *testing.T, client *http.Client, base, path string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// getMessage asks the JSON API and decodes its answer into m.
func getMessage(t *testing.T, s *Server, path string, m proto.Message) {
	t.Helper()
	resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), path, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", path, resp.Status, body)
	}
	if err := protojson.Unmarshal([]byte(body), m); err != nil {
		t.Fatalf("GET %s: decode %q: %v", path, body, err)
	}
}

func round32(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(float32(v))
	}
	return out
}

// TestAPIAgainstExact sends every distribution in several arrival orders
// and checks each JSON answer against the exact one, within ε, and
// against the gRPC service's answer, which it must equal.
func TestAPIAgainstExact(t *testing.T) {
	s := openServer(t, nil)
	n := 20000
	orders := []synth.Order{synth.Random, synth.Sorted, synth.Reverse, synth.Alternating}
	if testing.Short() {
		n, orders = 5000, orders[:2]
	}
	streams := exact.Synthetic(n, 7, orders...)
	grpcAPI := &api.Server{Pipeline: s.Pipeline}
	ctx := context.Background()
	for i, x := range streams {
		accept(t, s, fmt.Sprintf("s%02d", i), x.Values)
	}
	phis := []float64{0, 0.001, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1}
	for i, x := range streams {
		name := fmt.Sprintf("s%02d", i)
		values := round32(x.Values)
		for _, lastN := range []uint64{0, 1, 777, uint64(n)} {
			set := values[len(values)-int(max(lastN, 1)):]
			if lastN == 0 {
				set = values
			}
			key := exact.New(set)
			q := fmt.Sprintf("stream=%s&last_n=%d", name, lastN)

			var quantiles pb.QuantilesResponse
			getMessage(t, s, "/api/quantiles?"+q+"&phi=0,0.001,0.01&phi=0.25&phi=0.5,0.9,0.99,0.999,1", &quantiles)
			if quantiles.Count != uint64(len(set)) || len(quantiles.Quantiles) != len(phis) {
				t.Fatalf("%s %s: %v", x.Name, q, &quantiles)
			}
			for j, a := range quantiles.Quantiles {
				if a.Phi != phis[j] {
					t.Fatalf("%s %s: φ %v in place of %v", x.Name, q, a.Phi, phis[j])
				}
				if err := key.CheckQuantile(a.Phi, a.Value, testEps, int64(a.RankMin), int64(a.RankMax)); err != nil {
					t.Fatalf("%s %s: %v", x.Name, q, err)
				}
			}
			want, err := grpcAPI.Quantiles(ctx, &pb.QuantilesRequest{Stream: name, Phis: phis, LastN: lastN})
			if err != nil || !proto.Equal(want, &quantiles) {
				t.Fatalf("%s %s: JSON %v, gRPC %v (%v)", x.Name, q, &quantiles, want, err)
			}

			probe := []float64{key.Quantile(0.1), key.Quantile(0.5), key.Quantile(0.9), -1e9, 1e9}
			var probeQ []string
			for _, v := range probe {
				probeQ = append(probeQ, "value="+url.QueryEscape(fmt.Sprint(v)))
			}
			var ranks pb.RanksResponse
			getMessage(t, s, "/api/ranks?"+q+"&"+strings.Join(probeQ, "&"), &ranks)
			for _, a := range ranks.Ranks {
				if err := key.CheckRank(a.Value, int64(a.RankMin), int64(a.RankMax), testEps); err != nil {
					t.Fatalf("%s %s: %v", x.Name, q, err)
				}
			}
			var freqs pb.FrequenciesResponse
			getMessage(t, s, "/api/frequencies?"+q+"&"+strings.Join(probeQ, "&"), &freqs)
			if len(freqs.Items) != len(probe) {
				t.Fatalf("%s %s: %d frequencies for %d values", x.Name, q, len(freqs.Items), len(probe))
			}
			for _, a := range freqs.Items {
				if err := key.CheckFrequency(a.Value, int64(a.CountMin), int64(a.CountMax), testEps); err != nil {
					t.Fatalf("%s %s: %v", x.Name, q, err)
				}
			}
			for _, support := range []float64{0.005, 0.05, 0.3} {
				var hh pb.HeavyHittersResponse
				getMessage(t, s, fmt.Sprintf("/api/heavy-hitters?%s&support=%v", q, support), &hh)
				var got []float64
				for _, it := range hh.Items {
					got = append(got, it.Value)
				}
				if err := key.CheckHeavyHitters(support, testEps, got); err != nil {
					t.Fatalf("%s %s support %v: %v", x.Name, q, support, err)
				}
				want, err := grpcAPI.HeavyHitters(ctx, &pb.HeavyHittersRequest{Stream: name, Support: support, LastN: lastN})
				if err != nil || !proto.Equal(want, &hh) {
					t.Fatalf("%s %s: JSON %v, gRPC %v (%v)", x.Name, q, &hh, want, err)
				}
			}
		}
		var st pb.StatsResponse
		getMessage(t, s, "/api/stats?stream="+name, &st)
		want, err := grpcAPI.Stats(ctx, &pb.StatsRequest{Stream: name})
		if err != nil || !proto.Equal(want, &st) || st.Count != uint64(n) {
			t.Fatalf("%s: stats JSON %v, gRPC %v (%v)", x.Name, &st, want, err)
		}
	}

	// The list: every stream with its statistics, filtered and limited,
	// page by page.
	var list struct {
		Total   int `json:"total"`
		Streams []struct {
			Stream string          `json:"stream"`
			Stats  json.RawMessage `json:"stats"`
			Rate   *float64        `json:"valuesPerSecond"`
		} `json:"streams"`
		NextCursor string `json:"nextCursor"`
	}
	_, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/streams", nil)
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if list.Total != len(streams) || len(list.Streams) != len(streams) || list.NextCursor != "" {
		t.Fatalf("list: %d of %d streams, want %d", len(list.Streams), list.Total, len(streams))
	}
	for i, e := range list.Streams {
		var st pb.StatsResponse
		if err := protojson.Unmarshal(e.Stats, &st); err != nil || e.Stream != fmt.Sprintf("s%02d", i) || st.Count != uint64(n) || e.Rate != nil {
			t.Fatalf("list entry %d: %s %s %v (%v)", i, e.Stream, e.Stats, e.Rate, err)
		}
	}
	var names []string
	for path := "/api/streams?match=0&limit=3"; ; {
		_, body = get(t, http.DefaultClient, "http://"+s.ListenAddr(), path, nil)
		list.NextCursor = ""
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		if list.Total != len(streams) || len(list.Streams) > 3 {
			t.Fatalf("list %s: %s", path, body)
		}
		for _, e := range list.Streams {
			names = append(names, e.Stream)
		}
		if list.NextCursor == "" {
			break
		}
		path = "/api/streams?match=0&limit=3&cursor=" + url.QueryEscape(list.NextCursor)
	}
	var want []string
	for i := range streams {
		if name := fmt.Sprintf("s%02d", i); strings.Contains(name, "0") {
			want = append(want, name)
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("list match=0 limit=3, page by page: %v, want %v", names, want)
	}
	_, body = get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/api/streams?prefix=s1&limit=2", nil)
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Streams) != 2 || list.Streams[1].Stream != "s11" || list.NextCursor == "" {
		t.Fatalf("list prefix=s1 limit=2: %s", body)
	}
}

// TestAPIErrors checks the status and the error of bad requests.
func TestAPIErrors(t *testing.T) {
	s := openServer(t, nil)
	accept(t, s, "x", []float64{1, 2, 3})
	for _, c := range []struct {
		path string
		code int
		want string // in the error's message
	}{
		{"/api/quantiles?phi=0.5", 400, "parameter stream is required"},
		{"/api/quantiles?stream=nope&phi=0.5", 404, "stream not found"},
		{"/api/quantiles?stream=x&phi=abc", 400, `phi: "abc" is not a number`},
		{"/api/quantiles?stream=x&phi=1.5", 400, "outside [0, 1]"},
		{"/api/quantiles?stream=x&phi=NaN", 400, "outside [0, 1]"},
		{"/api/quantiles?stream=x&phis=0.5", 400, `unknown parameter "phis"`},
		{"/api/quantiles?stream=x&stream=y", 400, `parameter "stream" given 2 times`},
		{"/api/quantiles?stream=x&last_n=-1", 400, "not an unsigned integer"},
		{"/api/quantiles?stream=x&last_n=100001", 400, "exceeds the sliding window"},
		{"/api/ranks?stream=x&value=Inf", 400, "not finite"},
		{"/api/heavy-hitters?stream=x&support=0.0005", 400, "support 0.0005 outside"},
		{"/api/heavy-hitters?stream=x", 400, "support 0 outside"},
		{"/api/history?stream=nope", 404, "stream not found"},
		{"/api/streams?limit=0", 400, "parameter limit"},
		{"/api/streams?cursor=%21", 400, "page_token"},
		{"/api/nothing", 404, "no API at GET /api/nothing"},
	} {
		resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), c.path, nil)
		var e apiError
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Errorf("%s: body %q: %v", c.path, body, err)
			continue
		}
		if resp.StatusCode != c.code || !strings.Contains(e.Error, c.want) || e.Code == "" {
			t.Errorf("%s: %d %+v, want %d and %q", c.path, resp.StatusCode, e, c.code, c.want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: content type %q", c.path, ct)
		}
	}
	resp, _ := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/static/", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/static/ lists the directory: %s", resp.Status)
	}
}

// noRedirect is a client that shows redirects instead of following them.
func noRedirect(c *http.Client) *http.Client {
	cc := *c
	cc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cc
}

// postLogin posts the login form.
func postLogin(t *testing.T, client *http.Client, base, token string) *http.Response {
	t.Helper()
	resp, err := noRedirect(client).PostForm(base+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestToken checks that with a token nothing but /healthz, the login form
// and the static files answers without it; that a bearer token and the
// cookie of a login are let in; that wrong ones are refused and counted;
// and that /metrics follows MetricsOpen.
func TestToken(t *testing.T) {
	const token = "s3cret-token"
	for _, metricsOpen := range []bool{false, true} {
		s := openServer(t, func(s *Server) { s.Token, s.MetricsOpen = token, metricsOpen })
		accept(t, s, "x", []float64{1, 2, 3})
		base := "http://" + s.ListenAddr()
		bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
		guarded := []string{"/", "/api/streams", "/api/stats?stream=x", "/api/quantiles?stream=x&phi=0.5",
			"/api/heavy-hitters?stream=x&support=0.5", "/api/history?stream=x", "/api/nothing"}
		if !metricsOpen {
			guarded = append(guarded, "/metrics")
		}
		for _, path := range guarded {
			for _, h := range []http.Header{nil, bearer("wrong"), bearer(""), {"Authorization": {token}},
				{"Cookie": {"streamd_session=" + token}}, {"Cookie": {"streamd_session=" + sessionValue("wrong")}}} {
				resp, body := get(t, http.DefaultClient, base, path, h)
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s with %v: %s, want 401", path, h, resp.Status)
				}
				if strings.Contains(body, `"count"`) || strings.Contains(body, "streamd_stream") {
					t.Errorf("%s with %v: data in a refusal: %q", path, h, body)
				}
			}
			if resp, _ := get(t, http.DefaultClient, base, path, bearer(token)); resp.StatusCode == http.StatusUnauthorized {
				t.Errorf("%s with the bearer token: %s", path, resp.Status)
			}
		}
		for _, path := range []string{"/healthz", "/login", "/static/app.js", "/static/style.css", "/static/vendor/uPlot.iife.min.js"} {
			if resp, _ := get(t, http.DefaultClient, base, path, nil); resp.StatusCode != http.StatusOK {
				t.Errorf("%s without a token: %s", path, resp.Status)
			}
		}
		if resp, _ := get(t, http.DefaultClient, base, "/metrics", nil); (resp.StatusCode == http.StatusOK) != metricsOpen {
			t.Errorf("/metrics without a token, metrics open %v: %s", metricsOpen, resp.Status)
		}

		// The page without a token is the login form, with 401.
		resp, body := get(t, http.DefaultClient, base, "/", nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `action="/login"`) || strings.Contains(body, "app.js") {
			t.Errorf("page without a token: %s %q", resp.Status, body)
		}

		// A wrong login is refused; a right one sets the cookie.
		if resp := postLogin(t, http.DefaultClient, base, "wrong"); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
			t.Errorf("wrong login: %s, cookies %v", resp.Status, resp.Cookies())
		}
		resp = postLogin(t, http.DefaultClient, base, token)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("login: %s to %q", resp.Status, resp.Header.Get("Location"))
		}
		cookies := resp.Cookies()
		if len(cookies) != 1 {
			t.Fatalf("login cookies %v", cookies)
		}
		c := cookies[0]
		if c.Name != "streamd_session" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" ||
			strings.Contains(c.Value, token) || c.Value != sessionValue(token) {
			t.Errorf("login cookie %+v", c)
		}
		withCookie := http.Header{"Cookie": {c.Name + "=" + c.Value}}
		for _, path := range guarded {
			if resp, _ := get(t, http.DefaultClient, base, path, withCookie); resp.StatusCode == http.StatusUnauthorized {
				t.Errorf("%s with the cookie: %s", path, resp.Status)
			}
		}
		resp, body = get(t, http.DefaultClient, base, "/", withCookie)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "/static/app.js") || !strings.Contains(body, `action="/logout"`) {
			t.Errorf("page with the cookie: %s %q", resp.Status, body)
		}
		if resp := postLogin(t, http.DefaultClient, base, token); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("second login: %s", resp.Status)
		}

		// Logging out clears the cookie.
		req, _ := http.NewRequest("POST", base+"/logout", nil)
		req.Header.Set("Cookie", c.Name+"="+c.Value)
		out, err := noRedirect(http.DefaultClient).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out.Body.Close()
		if len(out.Cookies()) != 1 || out.Cookies()[0].MaxAge >= 0 || out.Cookies()[0].Value != "" {
			t.Errorf("logout cookies %v", out.Cookies())
		}

		// Every refusal is counted.
		_, metrics := get(t, http.DefaultClient, base, "/metrics", bearer(token))
		if !strings.Contains(metrics, "streamd_http_unauthorized_total ") || strings.Contains(metrics, "streamd_http_unauthorized_total 0\n") {
			t.Errorf("refusals not counted:\n%s", metrics)
		}
	}
}

// TestTLS serves the port over TLS: the login cookie is Secure and
// __Host- prefixed, and plain HTTP is not answered.
func TestTLS(t *testing.T) {
	// httptest's certificate for 127.0.0.1, and a client that trusts it.
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	cert, client := ts.TLS.Certificates, ts.Client()
	ts.Close()
	s := openServer(t, func(s *Server) {
		s.Token = "tok"
		s.TLSConfig = &tls.Config{Certificates: cert, MinVersion: tls.VersionTLS12}
	})
	base := "https://" + s.ListenAddr()
	if resp, _ := get(t, client, base, "/api/streams", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("over TLS without a token: %s", resp.Status)
	}
	resp := postLogin(t, client, base, "tok")
	if len(resp.Cookies()) != 1 {
		t.Fatalf("login over TLS: %s, cookies %v", resp.Status, resp.Cookies())
	}
	c := resp.Cookies()[0]
	if c.Name != "__Host-streamd_session" || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("login cookie over TLS %+v", c)
	}
	if resp, _ := get(t, client, base, "/api/streams", http.Header{"Cookie": {c.Name + "=" + c.Value}}); resp.StatusCode != http.StatusOK {
		t.Errorf("cookie over TLS: %s", resp.Status)
	}
	if resp, err := http.Get("http://" + s.ListenAddr() + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered by a TLS port")
		}
	}
}

// TestPageHeaders checks that pages forbid framing and foreign scripts.
func TestPageHeaders(t *testing.T) {
	s := openServer(t, nil)
	resp, body := get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "/static/app.js") || strings.Contains(body, "/logout") {
		t.Fatalf("page without a token set: %s %q", resp.Status, body)
	}
	h := resp.Header
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") || h.Get("X-Frame-Options") != "DENY" ||
		h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Errorf("page headers %v", h)
	}
	resp, _ = get(t, http.DefaultClient, "http://"+s.ListenAddr(), "/login", nil)
	if resp.Request.URL.Path != "/" {
		t.Errorf("login with no token set stays at %s", resp.Request.URL)
	}
}

// FuzzAPIQuery sends arbitrary query strings to every API: each answers
// 200 with JSON, or an error status with a JSON error; none panics or
// answers 500.
func FuzzAPIQuery(f *testing.F) {
	s := openServer(f, nil)
	accept(f, s, "x", []float64{1, 2, 2, 3, 5})
	acceptItems(f, s, "i", []string{"a", "b,c", "a"})
	h := s.handler()
	for _, q := range []string{"stream=i&item=a&item=b,c", "stream=x&item=a", "stream=i&support=0.5", "stream=x&phi=0.5", "stream=x&phi=0,1&last_n=3", "stream=x&value=2", "stream=x&support=0.5",
		"stream=x&since=0", "stream=%zz", "stream=x&phi=1e400", "stream=x&last_n=18446744073709551616", "match=x&limit=2", ""} {
		f.Add("quantiles", q)
	}
	f.Fuzz(func(t *testing.T, api, query string) {
		paths := []string{"quantiles", "ranks", "heavy-hitters", "frequencies", "stats", "streams", "history"}
		path := paths[len(api)%len(paths)]
		req := httptest.NewRequest("GET", "/api/"+path, nil)
		req.URL.RawQuery = query
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == http.StatusInternalServerError || (w.Code != 200 && w.Code != 400 && w.Code != 404) {
			t.Fatalf("%s?%s: %d %s", path, query, w.Code, w.Body)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s?%s: not JSON: %q", path, query, w.Body)
		}
	})
}

// TestValidate refuses what would make a bad exposition or a dead sampler.
func TestValidate(t *testing.T) {
	for name, mod := range map[string]func(*Server){
		"no pipeline":      func(s *Server) { s.Pipeline = nil },
		"φ outside [0, 1]": func(s *Server) { s.Quantiles = []float64{0.5, -0.1} },
		"φ twice":          func(s *Server) { s.Quantiles = []float64{0.5, 0.9, 0.5} },
		"negative cap":     func(s *Server) { s.MaxStreams = -1 },
		"negative history": func(s *Server) { s.History = -time.Second },
		"no interval":      func(s *Server) { s.Interval = 0 },
	} {
		s := New("127.0.0.1:0", &pipeline.Pipeline{})
		mod(s)
		if err := s.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if err := s.Open(context.Background()); err == nil {
			_ = s.Close(context.Background())
			t.Errorf("%s: opened", name)
		}
	}
	if err := New("127.0.0.1:0", &pipeline.Pipeline{}).Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestAPINamesAndWindows checks that the API answers in protobuf's JSON
// names (lowerCamelCase, as streamd query --json prints them), and takes
// the request fields last (a duration) and scope besides last_n (or
// lastN).
func TestAPINamesAndWindows(t *testing.T) {
	s := openServer(t, nil)
	accept(t, s, "lat", []float64{1, 2, 3, 4, 5})
	base := "http://" + s.ListenAddr()
	for path, want := range map[string][]string{
		"/api/quantiles?stream=lat&phi=0.5":           {`"rankMin"`, `"rankMax"`},
		"/api/quantiles?stream=lat&phi=0.5&last=5m":   {`"rankMin"`, `"window"`, `"cutoffUnixNano"`},
		"/api/quantiles?stream=lat&phi=0.5&lastN=3":   {`"count":"3"`},
		"/api/quantiles?stream=lat&phi=0.5&last_n=3":  {`"count":"3"`},
		"/api/heavy-hitters?stream=lat&support=0.1":   {`"countMin"`, `"countMax"`},
		"/api/stats?stream=lat&scope=local":           {`"windowSize"`, `"rejectedTotal"`, `"slidingWindow"`},
		"/api/streams":                                {`"valuesPerSecond"`, `"summaryBytes"`},
		"/api/frequencies?stream=lat&value=3&last=1h": {`"countMin"`, `"window"`},
	} {
		resp, body := get(t, http.DefaultClient, base, path, nil)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s %s", path, resp.Status, body)
			continue
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %s in %s", path, w, body)
			}
		}
		if regexp.MustCompile(`"[a-z]+_[a-z_]+"\s*:`).MatchString(body) {
			t.Errorf("%s: a snake_case name in %s", path, body)
		}
	}
	for path, code := range map[string]int{
		"/api/quantiles?stream=lat&phi=0.5&last=5x":             http.StatusBadRequest,
		"/api/quantiles?stream=lat&phi=0.5&last=-1s":            http.StatusBadRequest,
		"/api/quantiles?stream=lat&phi=0.5&scope=galaxy":        http.StatusBadRequest,
		"/api/quantiles?stream=lat&phi=0.5&lastN=3&last_n=3":    http.StatusBadRequest,
		"/api/stats?stream=lat&scope=cluster":                   http.StatusBadRequest, // no cluster: FailedPrecondition
		"/api/quantiles?stream=lat&phi=0.5&last=5m&scope=local": http.StatusOK,
	} {
		if resp, body := get(t, http.DefaultClient, base, path, nil); resp.StatusCode != code {
			t.Errorf("%s: %s %s, want %d", path, resp.Status, body, code)
		}
	}
}
