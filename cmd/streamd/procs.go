package main

import (
	"context"
	"log/slog"
	"time"
)

// How often a procsGovernor looks at the windows sorted, and how long
// without any before it sets one P a core.
const (
	procsEvery = 250 * time.Millisecond
	procsQuiet = 5 * time.Second
)

// procsGovernor sets the Go scheduler's Ps (GOMAXPROCS) of a daemon with a
// GPU sorter by what the sorter has to do: two a core while the pipeline
// sorts windows, since the GL thread's calls into the driver and the
// workers waiting on them hold a P, and with one a core the goroutines
// that decode and summarise wait beside an idle core; one a core once it
// has sorted none for quiet, since with no GPU work the second P of each
// core only gives the kernel twice the busy threads to share the cores
// among.
// Streams below their window size W, a million thin ones say, fill no
// window: nothing is sorted and each value's cost is the accept path's.
//
// Measured on an H200 machine (BENCHMARKS.md): two Ps a core gain fat streams
// 16% on 4 cores and nothing on 8, and thin streams whose windows fill
// 7–15%; they cost streams below W 8–21% on 4 cores and 19–30% on 8.
type procsGovernor struct {
	cores  int             // Ps at one a core
	quiet  time.Duration   // without sorted windows, before one P a core
	sorted func() int64    // the windows sorted so far
	set    func(n int) int // sets the Ps: runtime.GOMAXPROCS
	logger *slog.Logger

	procs    int       // the Ps set last
	last     int64     // sorted() at the last step
	sortedAt time.Time // when the last step saw windows sorted
}

// newProcsGovernor returns a governor for cores Ps at one a core, which
// begins at one a core.
func newProcsGovernor(cores int, quiet time.Duration, sorted func() int64, set func(int) int, logger *slog.Logger) *procsGovernor {
	g := &procsGovernor{cores: cores, quiet: quiet, sorted: sorted, set: set, logger: logger, procs: cores, last: sorted()}
	set(cores)
	return g
}

// step looks at the windows sorted since the last step, at now, and sets
// the Ps they call for.
func (g *procsGovernor) step(now time.Time) {
	want := g.procs
	if n := g.sorted(); n != g.last {
		g.last, g.sortedAt = n, now
		want = 2 * g.cores
	} else if now.Sub(g.sortedAt) >= g.quiet {
		want = g.cores
	}
	if want != g.procs {
		g.set(want)
		g.procs = want
		g.logger.Debug("go scheduler ps set by the gpu sorter's work", "gomaxprocs", want)
	}
}

// run steps every interval until ctx ends, then sets one P a core again.
func (g *procsGovernor) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	defer g.set(g.cores)
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g.step(now)
		}
	}
}
