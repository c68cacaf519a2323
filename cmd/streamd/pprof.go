package main

import (
	"net/http"
	"net/http/pprof"
)

// registerPprof adds the Go profiler's handlers (package net/http/pprof)
// under /debug/pprof/ to mux, so that the daemon can be profiled while it
// runs: a CPU profile of N seconds at /debug/pprof/profile?seconds=N, the
// heap, goroutines, an execution trace, and the index of the rest.
func registerPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
