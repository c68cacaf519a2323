package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"unicode/utf8"

	"streamd/loadgen"
)

func (m *Main) replay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loadgen replay", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	var (
		file, format, columns, itemColumns, stream, prefix, comma string
		noHeader                                                  bool
		loop                                                      int
		sf                                                        sendFlags
	)
	fs.StringVar(&file, "file", "", "the file to replay (gzip-compressed or not); required")
	fs.StringVar(&format, "format", "auto", "the file's format: auto, text, csv, recording or lines")
	fs.StringVar(&columns, "csv-columns", "", "comma-separated CSV columns, by header name or index from 0 (default: every numeric column)")
	fs.StringVar(&itemColumns, "csv-item-columns", "", "comma-separated CSV columns of strings, sent as items to item streams")
	fs.BoolVar(&noHeader, "csv-no-header", false, "the CSV file has no header line")
	fs.StringVar(&comma, "csv-comma", ",", "the CSV field separator")
	fs.StringVar(&stream, "stream", "", "the stream name of a text file or of a single CSV column (default: the file's or the column's name)")
	fs.StringVar(&prefix, "stream-prefix", "", "a prefix for the stream names of CSV columns and recordings")
	fs.IntVar(&loop, "loop", 1, "send the file this many times; 0 repeats it until --count or --duration")
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: loadgen replay --file PATH [flags]\n\nReplay a text, CSV or recorded file into streamd.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := m.parseFlags(fs, args); err != nil {
		return err
	}
	if file == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageErrorf("replay: --file is required and takes no arguments")
	}
	if format == "auto" {
		rec, err := loadgen.IsRecording(file)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		switch {
		case rec:
			format = "recording"
		case strings.HasSuffix(file, ".csv") || strings.HasSuffix(file, ".csv.gz"):
			format = "csv"
		default:
			format = "text"
		}
	}
	var src loadgen.Source
	switch format {
	case "text":
		src = &loadgen.TextFile{Path: file, Stream: stream}
	case "csv":
		c := &loadgen.CSVFile{Path: file, NoHeader: noHeader, Prefix: prefix}
		if columns != "" {
			c.Columns = strings.Split(columns, ",")
		}
		if itemColumns != "" {
			c.ItemColumns = strings.Split(itemColumns, ",")
		}
		if stream != "" {
			if len(c.Columns)+len(c.ItemColumns) != 1 {
				return usageErrorf("replay: --stream names one CSV column; use --stream-prefix for several")
			}
			c.Streams = []string{stream}
		}
		r, size := utf8.DecodeRuneInString(comma)
		if size != len(comma) || r == utf8.RuneError {
			return usageErrorf("replay: --csv-comma %q: want one character", comma)
		}
		c.Comma = r
		src = c
	case "recording", "lines":
		src = &loadgen.Recording{Path: file, Prefix: prefix}
	default:
		return usageErrorf("replay: unknown --format %q: want auto, text, csv, recording or lines", format)
	}
	if loop != 1 {
		src = &loadgen.Loop{Source: src, N: loop}
	}
	return m.send(ctx, &sf, src)
}
