// Package web serves streamd's HTTP port: a live page of the daemon's
// streams, the JSON API under /api/ that the page polls, the Prometheus
// exposition at /metrics and /healthz, and, with Pprof, the Go profiler
// under /debug/pprof/.
//
// The JSON API answers through the gRPC service's own code (package api):
// /api/quantiles, /api/ranks, /api/heavy-hitters, /api/frequencies,
// /api/correlated-sum and /api/stats take the fields of the gRPC request
// messages as query parameters (repeat phi and value, or separate them
// with commas; correlated-sum names its aggregate and side in lower case,
// as in aggregate=quantile&side=at_least) and
// answer with the gRPC response messages in protobuf's JSON mapping (proto
// field names; 64-bit integers as strings). Two answers have no gRPC
// counterpart: /api/streams lists the streams with their statistics and
// rates, and /api/history returns a stream's recent samples (count,
// rejects and quantiles every Interval), which the page charts. Sampling
// an idle stream costs a Stats call; a busy stream's quantiles sort its
// partial window, so the sampler spends at most about 5% of each Interval
// on them, least recently sampled streams first.
//
// When Token is set, the page, /api/, /debug/pprof/ and, unless
// MetricsOpen, /metrics require it: API clients send "Authorization:
// Bearer <token>"; a browser posts it once to /login, which sets an
// HttpOnly, SameSite=Strict cookie (Secure, with the __Host- prefix, over
// TLS) holding an HMAC of the token, so that the token never appears in a
// URL or a log. /healthz and the
// page's static files (which hold no data) are always open. /healthz
// answers 503 with the reason while Health reports the daemon degraded.
package web

import (
	"context"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"streamd/api"
	"streamd/ingest"
	"streamd/internal/connlimit"
	"streamd/pipeline"
)

// staticFiles holds the page (page/) and the files it loads (static/).
//
//go:embed page static
var staticFiles embed.FS

// Server serves the HTTP port. Create it with New, adjust the exported
// fields, then call Open; they must not change afterwards.
type Server struct {
	// Addr is the address to listen on, such as "127.0.0.1:7072".
	Addr string
	// Pipeline holds the streams; required.
	Pipeline *pipeline.Pipeline
	// TCPStats, if set, reports the TCP ingest counters for /metrics.
	TCPStats func() ingest.Stats
	// Health, if set, is asked by /healthz: while it returns an error,
	// /healthz answers 503 Service Unavailable with the error's text
	// (the daemon is degraded: say, its checkpoints fail); otherwise 200
	// and "ok".
	Health func() error
	// Checkpoints, if set, reports the checkpoint counters for /metrics.
	Checkpoints func() CheckpointStats
	// TCPAddr, if set, is the TCP ingest address, for the page's example
	// of sending values (default 127.0.0.1:7071).
	TCPAddr string
	// TLSConfig, if set, serves the port over TLS.
	TLSConfig *tls.Config
	// Token, if set, is required by the page, /api/ and /metrics.
	Token string
	// MetricsOpen serves /metrics without the token.
	MetricsOpen bool
	// Quantiles are the φs of the per-stream summary streamd_stream_value
	// (default 0.5, 0.9, 0.99).
	Quantiles []float64
	// LastN, if set, exports the quantiles of each stream's last LastN
	// values (at most its sliding window) instead of all history.
	LastN uint64
	// MaxStreams caps the streams, the first by name, that /metrics
	// exports per-stream series of and that History keeps samples of
	// (default 1000).
	MaxStreams int
	// History is how long samples are kept for the page's charts (default
	// 5 minutes); 0 keeps none, and rates are then not reported.
	History time.Duration
	// Interval is the time between samples (default 1s).
	Interval time.Duration
	// Pprof serves the Go profiler (package net/http/pprof) under
	// /debug/pprof/, behind the token.
	Pprof bool
	// GRPCConns, if set, reports the gRPC listener's counters for /metrics.
	GRPCConns func() connlimit.Stats
	// Logger receives the server's logs (default slog.Default()).
	Logger *slog.Logger

	api          *api.Server
	runtime      *prometheus.Registry // the Go runtime's and the process's metrics
	history      *history
	ln           net.Listener
	srv          *http.Server
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	unauthorized atomic.Uint64 // requests refused for a missing or wrong token
	logins       loginLimiter  // wrong tokens posted to /login, per client address
}

// New returns a server for the streams of p with the defaults set.
func New(addr string, p *pipeline.Pipeline) *Server {
	// The standard go_* and process_* series of the Prometheus client
	// libraries, beside streamd's own.
	runtime := prometheus.NewRegistry()
	runtime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Server{
		Addr:       addr,
		Pipeline:   p,
		Quantiles:  []float64{0.5, 0.9, 0.99},
		MaxStreams: 1000,
		History:    5 * time.Minute,
		Interval:   time.Second,
		runtime:    runtime,
	}
}

// Validate checks the exported fields.
func (s *Server) Validate() error {
	if s.Pipeline == nil {
		return errors.New("web: no pipeline")
	}
	for i, phi := range s.Quantiles {
		if !(phi >= 0 && phi <= 1) {
			return fmt.Errorf("web: quantile %v outside [0, 1]", phi)
		}
		if slices.Contains(s.Quantiles[:i], phi) {
			return fmt.Errorf("web: quantile %v given twice", phi)
		}
	}
	if s.MaxStreams < 0 {
		return fmt.Errorf("web: max streams %d is negative", s.MaxStreams)
	}
	if s.History < 0 {
		return fmt.Errorf("web: history %v is negative", s.History)
	}
	if s.History > 0 && s.Interval <= 0 {
		return fmt.Errorf("web: sample interval %v is not positive", s.Interval)
	}
	return nil
}

// Open listens on Addr, starts serving and, when History is set, starts
// sampling the streams.
func (s *Server) Open(ctx context.Context) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	s.api = &api.Server{Pipeline: s.Pipeline}
	s.history = newHistory(s.api, s.Quantiles, s.MaxStreams, s.History, s.Interval)
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("listen http: %w", err)
	}
	if s.TLSConfig != nil {
		ln = tls.NewListener(ln, s.TLSConfig)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
	var bg context.Context
	bg, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.History > 0 {
		s.wg.Go(func() { s.history.run(bg) })
	}
	s.wg.Go(func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("http server stopped", "err", err)
		}
	})
	return nil
}

// ListenAddr returns the listener's address ("" before Open).
func (s *Server) ListenAddr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops sampling and shuts the server down, waiting for requests in
// flight until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	var err error
	if s.srv != nil {
		if err = s.srv.Shutdown(ctx); err != nil {
			err = fmt.Errorf("close http: %w", err)
		}
	}
	s.wg.Wait()
	return err
}

// handler returns the server's routes.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static)))
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("GET /login", s.serveLogin)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("GET /metrics", s.guard(s.serveMetrics, s.MetricsOpen))
	mux.Handle("GET /api/streams", s.guard(s.apiStreams, false))
	mux.Handle("GET /api/stats", s.guard(s.apiStats, false))
	mux.Handle("GET /api/quantiles", s.guard(s.apiQuantiles, false))
	mux.Handle("GET /api/ranks", s.guard(s.apiRanks, false))
	mux.Handle("GET /api/heavy-hitters", s.guard(s.apiHeavyHitters, false))
	mux.Handle("GET /api/frequencies", s.guard(s.apiFrequencies, false))
	mux.Handle("GET /api/history", s.guard(s.apiHistory, false))
	mux.Handle("GET /api/hierarchical-heavy-hitters", s.guard(s.apiHierarchicalHeavyHitters, false))
	mux.Handle("GET /api/correlated-sum", s.guard(s.apiCorrelatedSum, false))
	mux.Handle("/api/", s.guard(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("no API at %s %s", r.Method, r.URL.Path))
	}, false))
	if s.Pprof {
		s.registerPprof(mux)
	}
	return securityHeaders(mux)
}

// serveHealth answers /healthz: 200 and "ok", or 503 and why the daemon
// is degraded (Health).
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.Health != nil {
		if err := s.Health(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
	}
	fmt.Fprintln(w, "ok")
}

// securityHeaders forbids framing, sniffing and referrers on every answer,
// and anything but the daemon's own scripts and styles on its pages.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.ServeHTTP(w, r)
	})
}

// staticHandler serves the embedded files; browsers revalidate them, so a
// new daemon's page is never mixed with an old one's script.
func staticHandler(files fs.FS) http.Handler {
	fsrv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		fsrv.ServeHTTP(w, r)
	})
}

// servePage serves the page, or the login form with 401 Unauthorized.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		s.refuse(w)
		return
	}
	host, port := "127.0.0.1", "7071"
	if s.TCPAddr != "" {
		if h, p, err := net.SplitHostPort(s.TCPAddr); err == nil {
			host, port = h, p
			if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
				host = "127.0.0.1" // listening on every address: the page's example runs on the daemon's host
			}
		}
	}
	s.render(w, http.StatusOK, "index.html", struct {
		Auth             bool
		TCPHost, TCPPort string
	}{s.Token != "", host, port})
}

// pages are the page and the login form.
var pages = template.Must(template.ParseFS(staticFiles, "page/*.html"))

func (s *Server) render(w http.ResponseWriter, code int, page string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := pages.ExecuteTemplate(w, page, data); err != nil {
		s.Logger.Warn("render page", "page", page, "err", err)
	}
}
