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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	m := NewMain(os.Stdout, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := m.Run(ctx, os.Args[1:])
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "streamd:", err)
		os.Exit(1)
	}
}

// Main is the program: its commands write to Stdout and Stderr.
type Main struct {
	Stdout, Stderr io.Writer
}

// NewMain returns a Main writing to stdout and stderr.
func NewMain(stdout, stderr io.Writer) *Main {
	return &Main{Stdout: stdout, Stderr: stderr}
}

// Run runs the command named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.usage()
		return flag.ErrHelp
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
		m.usage()
		return nil
	}
	m.usage()
	return fmt.Errorf("unknown command %q", args[0])
}

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, `streamd mines numeric streams for quantiles and heavy hitters.

Usage:
  streamd serve [flags]             run the daemon (streamd serve -h for flags)
  streamd query <command> [flags]   ask a running daemon (streamd query -h)
  streamd version                   print the version
`)
}
