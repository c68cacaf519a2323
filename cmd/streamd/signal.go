package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// signalContext returns a context that ends at the next SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
