// Command streamd is the streamd daemon and its client.
//
//	streamd serve [flags]           run the daemon
//	streamd query <command> [flags] ask a running daemon
//	streamd version                 print the version
//
// Every serve flag can also be set by an environment variable: STREAMD_
// followed by the flag's name in upper case with "-" as "_"
// (--grpc-addr is STREAMD_GRPC_ADDR). A flag on the command line wins.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"streamd/internal/membudget"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	m := NewMain(os.Stdout, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := m.Exit(m.Run(ctx, os.Args[1:]))
	stop()
	os.Exit(code)
}

// Main is the program: its commands write to Stdout and Stderr.
type Main struct {
	Stdout, Stderr io.Writer
}

// NewMain returns a Main writing to stdout and stderr.
func NewMain(stdout, stderr io.Writer) *Main {
	return &Main{Stdout: stdout, Stderr: stderr}
}

// Run runs the command named by args[0]. It returns nil after printing
// the help that was asked for, and a usageError for a bad command line.
func (m *Main) Run(ctx context.Context, args []string) error {
	err := m.command(ctx, args)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

func (m *Main) command(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.usage(m.Stderr)
		return &usageError{err: errors.New("no command"), printed: true}
	}
	switch args[0] {
	case "serve":
		return m.serve(ctx, args[1:])
	case "query":
		return m.query(ctx, args[1:])
	case "version":
		fmt.Fprintln(m.Stdout, "streamd", version)
		return nil
	case "help", "-h", "-help", "--help":
		m.usage(m.Stdout)
		return nil
	}
	m.usage(m.Stderr)
	return &usageError{err: fmt.Errorf("unknown command %q", args[0])}
}

// usage prints streamd's usage to w.
func (m *Main) usage(w io.Writer) {
	fmt.Fprint(w, `streamd mines numeric streams for quantiles and heavy hitters.

Usage:
  streamd serve [flags]             run the daemon (streamd serve -h for flags)
  streamd query <command> [flags]   ask a running daemon (streamd query -h)
  streamd version                   print the version
`)
}

// Exit reports err, the result of Run, on Stderr as one line (unless it
// was printed already) and returns the exit status: 0 on success and for
// help asked for, 2 for a bad command line, 1 for any other error.
func (m *Main) Exit(err error) int {
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintln(m.Stderr, "streamd:", err)
		}
		return 2
	}
	fmt.Fprintln(m.Stderr, "streamd:", err)
	return 1
}

// A usageError is an error in the command line: streamd exits 2. printed
// is set when it has been printed already.
type usageError struct {
	err     error
	printed bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// errHelpShown ends a command whose usage was asked for and printed.
var errHelpShown = errors.New("help shown")

// helpAsked reports whether args ask for help (-h, -help or --help before
// any "--").
func helpAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			return true
		}
	}
	return false
}

func (m *Main) serve(ctx context.Context, args []string) error {
	cfg := DefaultConfig()
	fs := newServeFlags(&cfg)
	if helpAsked(args) {
		fs.SetOutput(m.Stdout)
		fs.Usage()
		return errHelpShown
	}
	// The flag package would print a bad flag's error with the whole
	// usage; Exit prints the error alone, with a pointer to the usage.
	fs.SetOutput(io.Discard)
	if err := applyEnv(fs, os.Getenv); err != nil {
		return &usageError{err: err}
	}
	if err := fs.Parse(args); err != nil {
		return &usageError{err: fmt.Errorf("serve: %w (streamd serve -h lists the flags)", err)}
	}
	if fs.NArg() > 0 {
		return &usageError{err: fmt.Errorf("serve: takes no arguments, not %q", fs.Arg(0))}
	}
	var handler slog.Handler = slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	if cfg.LogJSON {
		handler = slog.NewJSONHandler(m.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	}
	logger := slog.New(handler)
	d := NewDaemon(cfg, logger)
	if err := d.Open(ctx); err != nil {
		return err
	}
	if limit := d.MemoryLimit(); limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		// The garbage collector keeps the heap near the budget instead
		// of letting it grow to twice what is live.
		soft := limit + memoryHeadroom(limit)
		debug.SetMemoryLimit(soft)
		logger.Info("go memory limit set", "limit", membudget.Size(soft))
	}
	<-ctx.Done()
	// A second signal aborts the graceful shutdown: listen for it before
	// saying so.
	abort, stop := signalContext()
	defer stop()
	logger.Info("shutting down; interrupt again to abort")
	closeCtx, cancel := context.WithTimeout(abort, cfg.ShutdownTimeout)
	defer cancel()
	return d.Close(closeCtx)
}
