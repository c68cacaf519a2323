package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"streamd/feed"
	"streamd/ingest"
)

// printSink prints what it receives.
type printSink struct{}

func (printSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	if len(b.Float32) > 0 {
		fmt.Println("accept", b.Stream, b.Float32, "(float32)")
	} else {
		fmt.Println("accept", b.Stream, b.Values)
	}
	return b.Len(), nil
}

func (printSink) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	fmt.Printf("reject %q %s %d\n", stream, reason, n)
}

func (printSink) IsItemStream(string) bool { return false }

func ExampleDecoder_Decode() {
	in := "latency 12.5 13.1\n" +
		"latency 14 oops\n" +
		"# a comment\n" +
		"bad,name 1 2\n" +
		"errors 1 NaN\r\n"
	d := ingest.Decoder{Sink: printSink{}}
	if err := d.Decode(context.Background(), strings.NewReader(in)); err != nil {
		log.Fatal(err)
	}
	// Output:
	// reject "" bad_stream_name 2
	// accept latency [12.5 13.1 14]
	// reject "latency" malformed 1
	// accept errors [1]
	// reject "errors" nan 1
}

func ExampleAppendFrame() {
	in := []byte(ingest.Magic)
	in, err := ingest.AppendFrame(in, "latency", []float64{12.5, 13.1}, false)
	if err != nil {
		log.Fatal(err)
	}
	in, err = ingest.AppendFrame(in, "sizes", []float64{1024, 4096}, true)
	if err != nil {
		log.Fatal(err)
	}
	d := ingest.Decoder{Sink: printSink{}}
	if err := d.Decode(context.Background(), bytes.NewReader(in)); err != nil {
		log.Fatal(err)
	}
	// Output:
	// accept latency [12.5 13.1]
	// accept sizes [1024 4096] (float32)
}
