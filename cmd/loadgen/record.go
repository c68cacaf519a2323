package main

import (
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"streamd/feed"
	"streamd/ingest"
	"streamd/loadgen"
)

func (m *Main) record(ctx context.Context, args []string) (err error) {
	fs := flag.NewFlagSet("loadgen record", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	var (
		out, listen, brokers, topic, format string
		itemStreams                         string
		count                               int64
		duration                            time.Duration
	)
	fs.StringVar(&out, "out", "", "the file to write, in the framed protocol; gzip-compressed if it ends in .gz; required")
	fs.StringVar(&listen, "listen", "", "serve streamd's TCP protocols on this address and record what arrives")
	fs.StringVar(&brokers, "kafka-brokers", "", "comma-separated Kafka brokers: record --topic instead of a TCP feed")
	fs.StringVar(&topic, "topic", "streamd", "the Kafka topic to record, from its start")
	fs.StringVar(&format, "kafka-format", "f64", "format of Kafka messages without a content-type header: f64, f32 or text")
	fs.StringVar(&itemStreams, "item-streams", "", "comma-separated streams whose lines carry items (a stream that sends item frames is one too)")
	fs.Int64Var(&count, "count", 0, "stop after this many values; 0 for no limit")
	fs.DurationVar(&duration, "duration", 0, "stop after this long; 0 for no limit")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen record --out PATH (--listen ADDR | --kafka-brokers LIST --topic T) [flags]\n\nRecord a TCP feed or a Kafka topic into a file that loadgen replay sends again.\nIt stops after --count values, after --duration, or at an interrupt.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := m.parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || (listen == "") == (brokers == "") || fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("record: want --out and one of --listen or --kafka-brokers")
	}
	kfmt, err := loadgen.ParseKafkaFormat(format)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, nil))

	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("record: %w", cerr)
		}
	}()
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	rec := loadgen.NewRecorder(w)
	rec.Limit = count
	if itemStreams != "" {
		rec.ItemStreams = make(map[string]bool)
		for _, name := range strings.Split(itemStreams, ",") {
			rec.ItemStreams[name] = true
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, duration)
		defer cancel()
	}
	start := time.Now()
	if listen != "" {
		srv := ingest.NewTCPServer(listen, rec)
		srv.Logger = logger
		if err := srv.Open(ctx); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		logger.Info("loadgen recording", "listen", srv.ListenAddr().String(), "out", out)
		select {
		case <-runCtx.Done():
		case <-rec.Full():
		}
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Close(closeCtx); err != nil {
			logger.Warn("close tcp listener", "err", err)
		}
	} else {
		logger.Info("loadgen recording", "topic", topic, "out", out)
		go func() {
			select {
			case <-rec.Full():
				cancel()
			case <-runCtx.Done():
			}
		}()
		if err := loadgen.ReadKafka(runCtx, strings.Split(brokers, ","), topic, kfmt, nil, rec); err != nil && runCtx.Err() == nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	if err := rec.Flush(); err != nil {
		return err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	st := rec.Stats()
	for _, name := range slices.Sorted(maps.Keys(st.Streams)) {
		fmt.Fprintf(m.Stdout, "%s\t%d\n", name, st.Streams[name])
	}
	streams := fmt.Sprintf("%d streams", len(st.Streams))
	if len(st.Streams) == 1 {
		streams = "1 stream"
	}
	fmt.Fprintf(m.Stdout, "recorded %d values of %s in %s to %s", st.Values, streams, time.Since(start).Round(time.Millisecond), out)
	var bad int64
	for _, n := range st.Rejected {
		bad += n
	}
	if bad > 0 {
		fmt.Fprintf(m.Stdout, "; rejected %d (%s)", bad, loadgen.FormatReasons(st.Rejected))
		if st.Rejected[feed.ReasonMalformed] > 0 && itemStreams == "" {
			fmt.Fprintf(m.Stdout, "; lines of item streams need --item-streams")
		}
	}
	fmt.Fprintln(m.Stdout)
	// An interrupt is record's documented way to stop: no error.
	return nil
}
