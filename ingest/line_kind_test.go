package ingest

import (
	"context"
	"io"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"streamd/feed"
)

// TestLineStreamChangesKind: a connection's lines for a stream that is
// created as an item stream while the connection waits for input are read
// as items from then on, and the other way round; a connection need not
// reconnect to see a stream's kind.
func TestLineStreamChangesKind(t *testing.T) {
	var isItems atomic.Bool
	s := newRecordSink()
	s.isItems = func(string) bool { return isItems.Load() }
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		d := Decoder{Sink: s}
		done <- d.Decode(context.Background(), r)
	}()
	// wait waits until the sink has received the rejects want.
	wait := func(want map[reject]int) {
		t.Helper()
		for {
			if got := s.result().rejects; maps.Equal(got, want) {
				return
			}
			<-s.changed
		}
	}
	if _, err := io.WriteString(w, "addrs 10.1.2.3\n"); err != nil {
		t.Fatal(err)
	}
	wait(map[reject]int{{"addrs", feed.ReasonMalformed}: 1}) // no stream yet: a value
	isItems.Store(true)
	if _, err := io.WriteString(w, "addrs 10.1.2.4 10.1.2.5\n"); err != nil {
		t.Fatal(err)
	}
	for { // until the line is counted, as items or as malformed values
		s.mu.Lock()
		n := len(s.items["addrs"]) + s.got.rejects[reject{"addrs", feed.ReasonMalformed}]
		s.mu.Unlock()
		if n > 1 {
			break
		}
		<-s.changed
	}
	isItems.Store(false)
	if _, err := io.WriteString(w, "addrs 1.5\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := s.items["addrs"], []string{"10.1.2.4", "10.1.2.5"}; !slices.Equal(got, want) {
		t.Errorf("items %q, want %q", got, want)
	}
	if got := s.result(); !slices.Equal(got.values["addrs"], []float64{1.5}) || !maps.Equal(got.rejects, map[reject]int{{"addrs", feed.ReasonMalformed}: 1}) {
		t.Errorf("values %v and rejects %v, want [1.5] and the one malformed value", got.values, got.rejects)
	}
}
