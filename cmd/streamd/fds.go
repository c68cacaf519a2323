package main

import (
	"fmt"
	"log/slog"
	"strings"

	"streamd/ingest"
)

// DefaultGRPCMaxConnections is the default --grpc-max-connections.
const DefaultGRPCMaxConnections = 1024

// fdReserve is how many file descriptors the daemon keeps beyond its
// connection limits: for checkpoints and the data dir, Kafka brokers and
// cluster peers, the HTTP port, the listeners, logs and a GPU driver.
const fdReserve = 128

// fitDescriptors raises the soft limit on open files to the hard limit,
// and checks that the connection limits (--max-connections when TCP
// ingest is on, --grpc-max-connections) with fdReserve more fit in it, so
// that connections cannot take the descriptors that checkpoints and
// accepts need. Limits left at their defaults are lowered, in proportion,
// to fit; others that do not fit are an error that names the flags. A
// limit of 0 (none) is not checked, and said so in the log.
func (c *Config) fitDescriptors(logger *slog.Logger) error {
	limit, err := raiseOpenFiles()
	if err != nil {
		logger.Warn("cannot check the connection limits against the open files limit", "err", err)
		return nil
	}
	if limit == 0 {
		return nil // no such limit here
	}
	return c.fitConnLimits(limit, logger)
}

// fitConnLimits is fitDescriptors for an open files limit.
func (c *Config) fitConnLimits(limit uint64, logger *slog.Logger) error {
	type connLimit struct {
		flag  string
		value *int
		def   int
	}
	var limits []connLimit
	if c.TCPAddr != "" {
		limits = append(limits, connLimit{"max-connections", &c.MaxConnections, ingest.DefaultMaxConnections})
	}
	limits = append(limits, connLimit{"grpc-max-connections", &c.GRPCMaxConnections, DefaultGRPCMaxConnections})
	var need, defaults uint64 = fdReserve, 0
	for _, l := range limits {
		if *l.value == 0 {
			logger.Warn("no connection limit: connections may take every file descriptor, and checkpoints fail", "flag", "--"+l.flag, "open_files_limit", limit)
			continue
		}
		need += uint64(*l.value)
		if *l.value == l.def {
			defaults += uint64(l.def)
		}
	}
	var names []string
	sum := ""
	for _, l := range limits {
		if *l.value > 0 {
			names = append(names, l.flag)
			sum += fmt.Sprintf("--%s %d + ", l.flag, *l.value)
		}
	}
	if need <= limit || len(names) == 0 {
		return nil
	}
	tooMany := &ConfigError{strings.Join(names, ","), need, fmt.Errorf(
		"%s%d in reserve need %d file descriptors, more than the open files limit %d: lower the flags or raise the limit (ulimit -n)",
		sum, fdReserve, need, limit)}
	// What the defaulted limits may share.
	if defaults == 0 || need-defaults >= limit {
		return tooMany
	}
	room := limit - (need - defaults)
	for _, l := range limits {
		if *l.value == 0 || *l.value != l.def {
			continue
		}
		n := int(uint64(l.def) * room / defaults)
		if n < 1 {
			return tooMany
		}
		logger.Warn("connection limit lowered to fit the open files limit", "flag", "--"+l.flag, "from", l.def, "to", n,
			"open_files_limit", limit, "reserve", fdReserve)
		*l.value = n
	}
	return nil
}
