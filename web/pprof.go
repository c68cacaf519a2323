package web

import (
	"net/http"
	"net/http/pprof"
)

// registerPprof adds the Go profiler's handlers (package net/http/pprof)
// under /debug/pprof/ to mux, behind the token, so that the daemon can be
// profiled while it runs: a CPU profile of N seconds at
// /debug/pprof/profile?seconds=N, the heap, goroutines, an execution trace
// and the index of the rest.
func (s *Server) registerPprof(mux *http.ServeMux) {
	mux.Handle("/debug/pprof/", s.guard(pprof.Index, false))
	mux.Handle("/debug/pprof/cmdline", s.guard(pprof.Cmdline, false))
	mux.Handle("/debug/pprof/profile", s.guard(pprof.Profile, false))
	mux.Handle("/debug/pprof/symbol", s.guard(pprof.Symbol, false))
	mux.Handle("/debug/pprof/trace", s.guard(pprof.Trace, false))
}
