package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"streamd/feed"
	"streamd/items"
)

// A reject is the key of recorded rejects.
type reject struct {
	stream string
	reason feed.Reason
}

// A result is what a Sink received, or what a model says it should.
type result struct {
	values  map[string][]float64
	rejects map[reject]int
}

func (r *result) add(stream string, vals ...float64) {
	if r.values == nil {
		r.values = make(map[string][]float64)
	}
	r.values[stream] = append(r.values[stream], vals...)
}

func (r *result) reject(stream string, reason feed.Reason, n int) {
	if r.rejects == nil {
		r.rejects = make(map[reject]int)
	}
	r.rejects[reject{stream, reason}] += n
}

// diff returns a description of the differences between got and want, or "".
func diff(got, want result) string {
	var b bytes.Buffer
	for _, s := range slices.Sorted(maps.Keys(merge(got.values, want.values))) {
		g, w := got.values[s], want.values[s]
		if !slices.EqualFunc(g, w, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) {
			fmt.Fprintf(&b, "stream %q: got %d values %v, want %d values %v\n", s, len(g), abbrev(g), len(w), abbrev(w))
		}
	}
	keys := merge(got.rejects, want.rejects)
	for _, k := range slices.SortedFunc(maps.Keys(keys), func(a, b reject) int {
		if c := cmpString(a.stream, b.stream); c != 0 {
			return c
		}
		return cmpString(string(a.reason), string(b.reason))
	}) {
		if g, w := got.rejects[k], want.rejects[k]; g != w {
			fmt.Fprintf(&b, "rejects %q %s: got %d, want %d\n", k.stream, k.reason, g, w)
		}
	}
	return b.String()
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func merge[K comparable, V any](a, b map[K]V) map[K]bool {
	m := make(map[K]bool)
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

func abbrev(v []float64) []float64 {
	if len(v) > 8 {
		return v[:8]
	}
	return v
}

// recordSink is a Sink that records everything it receives. Accept fails
// with feed.ErrStreamLimit for the streams that full returns true for, and
// waits for gate, if not nil, before recording. The streams that isItems
// returns true for take items, the others values; values or items sent to
// the other kind fail with feed.ErrWrongKind.
type recordSink struct {
	full    func(stream string) bool
	isItems func(stream string) bool
	gate    chan struct{} // Accept waits for a value or for ctx
	entered chan struct{} // receives a value when Accept waits on gate, if empty

	mu      sync.Mutex
	got     result
	items   map[string][]string
	times   []time.Time // the arrival times given, one per call
	accepts int
	changed chan struct{}
}

func newRecordSink() *recordSink {
	return &recordSink{changed: make(chan struct{}, 1), items: make(map[string][]string)}
}

func (s *recordSink) IsItemStream(stream string) bool {
	return s.isItems != nil && s.isItems(stream)
}

func (s *recordSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	stream := b.Stream
	if s.full != nil && s.full(stream) {
		return 0, fmt.Errorf("stream %q: %w", stream, feed.ErrStreamLimit)
	}
	if err := feed.ValidName(stream); err != nil {
		panic(fmt.Sprintf("Accept with a bad stream name: %v", err))
	}
	payloads := 0
	for _, n := range []int{len(b.Values), len(b.Float32), len(b.Pairs.X), b.Len() - len(b.Values) - len(b.Float32) - len(b.Pairs.X)} {
		if n > 0 {
			payloads++
		}
	}
	if n := b.Len(); payloads != 1 || n > batchLen {
		panic(fmt.Sprintf("Accept of %d values or items in %d payloads", n, payloads))
	}
	if (b.Items != nil) != s.IsItemStream(stream) {
		return 0, fmt.Errorf("stream %q: %w", stream, feed.ErrWrongKind)
	}
	values := b.Values
	if len(b.Float32) > 0 {
		values = nil
		for _, v := range b.Float32 {
			values = append(values, float64(v))
		}
		if m := feed.Measure(b.Float32); m.Count != b.Moments.Count || m.Min != b.Moments.Min || m.Max != b.Moments.Max {
			panic(fmt.Sprintf("Accept of float32 values of moments %+v, given %+v", m, b.Moments))
		}
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Float64bits(v) == 1<<63 {
			panic(fmt.Sprintf("Accept with value %v", v))
		}
	}
	if s.gate != nil {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	for i, x := range b.Pairs.X {
		y := b.Pairs.Y[i]
		if x-x != 0 || y-y != 0 || math.Float64bits(x) == 1<<63 || math.Float64bits(y) == 1<<63 {
			panic(fmt.Sprintf("Accept with pair (%v, %v)", x, y))
		}
	}
	s.mu.Lock()
	s.got.add(stream, values...)
	for i, x := range b.Pairs.X {
		s.got.add(pairsKey(stream), x, b.Pairs.Y[i])
	}
	if b.Items != nil {
		for i := range b.Items.Len() {
			x := b.Items.Item(i)
			if items.Check(x) != nil {
				panic(fmt.Sprintf("Accept with a bad item %q", x))
			}
			s.items[stream] = append(s.items[stream], string(x))
		}
	}
	s.times = append(s.times, b.At)
	s.accepts++
	s.mu.Unlock()
	s.notify()
	return b.Len(), nil
}

func (s *recordSink) Reject(stream string, _ feed.Source, reason feed.Reason, n int) {
	if n <= 0 {
		panic(fmt.Sprintf("Reject %q %s with n = %d", stream, reason, n))
	}
	if !slices.Contains(feed.Reasons(), reason) {
		panic(fmt.Sprintf("Reject with unknown reason %q", reason))
	}
	s.mu.Lock()
	s.got.reject(stream, reason, n)
	s.mu.Unlock()
	s.notify()
}

func (s *recordSink) notify() {
	if s.changed == nil {
		return
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// result returns a copy of what s received.
func (s *recordSink) result() result {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r result
	for k, v := range s.got.values {
		r.add(k, v...)
	}
	for k, n := range s.got.rejects {
		r.reject(k.stream, k.reason, n)
	}
	return r
}

// waitFor waits until s has received want, and fails t if that takes more
// than 10 s.
func (s *recordSink) waitFor(t *testing.T, want result) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		d := diff(s.result(), want)
		if d == "" {
			return
		}
		select {
		case <-s.changed:
		case <-timeout:
			t.Fatalf("timed out waiting for the sink:\n%s", d)
		}
	}
}

// poll waits until cond is true, checking every millisecond, and fails t if
// that takes more than 10 s.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	timeout := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// chunkReader returns the bytes of data in reads of the given sizes, then
// of the last size, then io.EOF.
type chunkReader struct {
	data  []byte
	sizes []int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = max(r.sizes[0], 1)
		if len(r.sizes) > 1 {
			r.sizes = r.sizes[1:]
		}
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// errAfterReader returns data, then err instead of io.EOF.
type errAfterReader struct {
	data []byte
	err  error
}

func (r *errAfterReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// decodeAll decodes data, read in reads of the given sizes, with a read
// buffer of bufSize bytes (0 for the default) into a new recordSink, which
// takes no items.
func decodeAll(data []byte, sizes []int, bufSize, maxLine, maxFrame int, full func(string) bool) (result, error) {
	s := newRecordSink()
	s.full = full
	d := Decoder{Sink: s, MaxLineBytes: maxLine, MaxFrameBytes: maxFrame, bufSize: bufSize}
	err := d.Decode(context.Background(), &chunkReader{data: data, sizes: sizes})
	return s.result(), err
}

// model returns what decoding in should give, following the package
// documentation with plain and slow code, and whether decoding should fail
// (unknown format or frame too large).
func model(in []byte, maxLine, maxFrame int) (r result, fail bool) {
	if len(in) == 0 {
		return r, false
	}
	switch c := in[0]; {
	case bytes.HasPrefix(in, []byte(Magic)):
		return frameModel(in[len(Magic):], maxFrame)
	case c == 0, !(feed.IsNameByte(c) || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '#'):
		r.reject("", feed.ReasonUnknownFormat, 1)
		return r, true
	}
	return lineModel(in, maxLine), false
}

func lineModel(in []byte, maxLine int) result {
	var r result
	lines := bytes.Split(in, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for _, line := range lines {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > maxLine {
			p := bytes.TrimLeft(line[:maxLine+1], " \t")
			name := ""
			if k := bytes.IndexAny(p, " \t"); k > 0 && feed.ValidName(string(p[:k])) == nil {
				name = string(p[:k])
			}
			r.reject(name, feed.ReasonLineTooLong, 1)
			continue
		}
		fields := bytes.FieldsFunc(line, func(c rune) bool { return c == ' ' || c == '\t' })
		if len(fields) == 0 || fields[0][0] == '#' {
			continue
		}
		name := string(fields[0])
		if feed.ValidName(name) != nil {
			r.reject("", feed.ReasonBadStreamName, max(1, len(fields)-1))
			continue
		}
		if len(fields) == 1 {
			r.reject(name, feed.ReasonMalformed, 1)
		}
		if len(fields) > 1 && bytes.IndexByte(fields[1], ':') >= 0 {
			// A line of pairs: each field is x:y.
			for _, f := range fields[1:] {
				xs, ys, ok := bytes.Cut(f, []byte(":"))
				x, errx := strconv.ParseFloat(string(xs), 64)
				y, erry := strconv.ParseFloat(string(ys), 64)
				if !ok || bytes.IndexByte(ys, ':') >= 0 || errx != nil && !math.IsInf(x, 0) || erry != nil && !math.IsInf(y, 0) || bytes.ContainsAny(f, "_xX") {
					r.reject(name, feed.ReasonMalformed, 1)
					continue
				}
				r.pair(name, x, y)
			}
			continue
		}
		for _, f := range fields[1:] {
			v, err := strconv.ParseFloat(string(f), 64)
			if err != nil && !math.IsInf(v, 0) || bytes.ContainsAny(f, "_xX") {
				r.reject(name, feed.ReasonMalformed, 1)
				continue
			}
			r.value(name, v)
		}
	}
	return r
}

// pairsKey is the key under which a result keeps the pairs of stream, as
// x, y, x, y, …
func pairsKey(stream string) string { return "pairs of " + stream }

// pair adds (x, y) to stream, or counts it as rejected, as
// feed.CleanPairs does.
func (r *result) pair(stream string, x, y float64) {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		r.reject(stream, feed.ReasonNaN, 1)
	case math.Abs(x) > feed.MaxPair || math.Abs(y) > feed.MaxPair: // ±Inf too
		r.reject(stream, feed.ReasonInf, 1)
	default:
		r.add(pairsKey(stream), x+0, y+0)
	}
}

// value adds v to stream, or counts it as rejected, as feed.CleanValues
// does.
func (r *result) value(stream string, v float64) {
	switch {
	case math.IsNaN(v):
		r.reject(stream, feed.ReasonNaN, 1)
	case math.IsInf(v, 0):
		r.reject(stream, feed.ReasonInf, 1)
	case v == 0:
		r.add(stream, 0)
	default:
		r.add(stream, v)
	}
}

func frameModel(in []byte, maxFrame int) (r result, fail bool) {
	for len(in) > 0 {
		if len(in) < 4 {
			r.reject("", feed.ReasonMalformed, 1)
			break
		}
		n := int64(binary.LittleEndian.Uint32(in))
		in = in[4:]
		if n > int64(maxFrame) {
			r.reject("", feed.ReasonFrameTooLarge, 1)
			return r, true
		}
		body := in[:min(int(n), len(in))]
		cut := len(body) < int(n)
		in = in[len(body):]
		if n < 3 {
			r.reject("", feed.ReasonMalformed, 1)
			continue
		}
		if len(body) < 2 {
			r.reject("", feed.ReasonMalformed, 1)
			break
		}
		nameLen := int(binary.LittleEndian.Uint16(body))
		if 3+int64(nameLen) > n {
			r.reject("", feed.ReasonMalformed, 1)
			continue
		}
		if nameLen == 0 || nameLen > feed.MaxNameLen {
			r.reject("", feed.ReasonBadStreamName, 1)
			continue
		}
		if len(body) < 3+nameLen {
			r.reject("", feed.ReasonMalformed, 1)
			break
		}
		name := string(body[2 : 2+nameLen])
		if feed.ValidName(name) != nil {
			r.reject("", feed.ReasonBadStreamName, 1)
			continue
		}
		size := 0
		switch body[2+nameLen] {
		case 1:
			size = 4
		case 2:
			size = 8
		case 3:
			if itemsModel(&r, name, body[3+nameLen:], int(n)-3-nameLen) {
				return r, false // cut short: the input ends
			}
			continue
		case 4:
			size = 16
		default:
			r.reject(name, feed.ReasonBadValueType, 1)
			continue
		}
		if (n-3-int64(nameLen))%int64(size) != 0 {
			r.reject(name, feed.ReasonMalformed, 1)
			continue
		}
		vals := body[3+nameLen:]
		for len(vals) >= size {
			if size == 16 {
				r.pair(name, math.Float64frombits(binary.LittleEndian.Uint64(vals)), math.Float64frombits(binary.LittleEndian.Uint64(vals[8:])))
				vals = vals[size:]
				continue
			}
			if size == 4 {
				r.value(name, float64(math.Float32frombits(binary.LittleEndian.Uint32(vals))))
			} else {
				r.value(name, math.Float64frombits(binary.LittleEndian.Uint64(vals)))
			}
			vals = vals[size:]
		}
		if cut {
			r.reject(name, feed.ReasonMalformed, 1)
		}
	}
	return r, false
}

// itemsModel counts the items of an item frame of stream as a sink that
// takes no items does: the valid ones as "wrong_kind". left is the length
// of the frame's items, avail what the input holds of them. It reports
// whether the input ends in the frame.
func itemsModel(r *result, stream string, avail []byte, left int) (cut bool) {
	valid := 0
	defer func() {
		if valid > 0 {
			r.reject(stream, feed.ReasonWrongKind, valid)
		}
	}()
	for left > 0 {
		switch {
		case left < 2:
			r.reject(stream, feed.ReasonMalformed, 1)
			return len(avail) < left
		case len(avail) < 2:
			r.reject(stream, feed.ReasonMalformed, 1)
			return true
		}
		k := int(binary.LittleEndian.Uint16(avail))
		switch {
		case 2+k > left:
			r.reject(stream, feed.ReasonMalformed, 1)
			return len(avail) < left
		case 2+k > len(avail) && k > items.MaxLen:
			r.reject(stream, feed.ReasonItemTooLong, 1)
			return true
		case 2+k > len(avail):
			r.reject(stream, feed.ReasonMalformed, 1)
			return true
		}
		switch x := avail[2 : 2+k]; {
		case k == 0:
			r.reject(stream, feed.ReasonEmptyItem, 1)
		case k > items.MaxLen:
			r.reject(stream, feed.ReasonItemTooLong, 1)
		case !utf8.Valid(x):
			r.reject(stream, feed.ReasonBadUTF8, 1)
		default:
			valid++
		}
		avail, left = avail[2+k:], left-2-k
	}
	return false
}

// frames returns Magic followed by frames of the given streams and values.
func frames(t testing.TB, f32 bool, streamValues ...any) []byte {
	t.Helper()
	b := []byte(Magic)
	for i := 0; i < len(streamValues); i += 2 {
		var err error
		b, err = AppendFrame(b, streamValues[i].(string), streamValues[i+1].([]float64), f32)
		if err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// rawFrame returns a frame with the given body parts.
func rawFrame(parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func u16(n int) []byte { return binary.LittleEndian.AppendUint16(nil, uint16(n)) }

func f32s(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func f64s(vals ...float64) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// waitStats waits until s's Stats satisfy cond, and fails t with them and
// want, what cond wants, if they do not within poll's timeout. A
// connection adds its counts to the Stats before each read, a moment after
// its sink has them.
func waitStats(t *testing.T, s *TCPServer, want string, cond func(Stats) bool) {
	t.Helper()
	var st Stats
	defer func() {
		if t.Failed() {
			t.Logf("last Stats() = %+v", st)
		}
	}()
	poll(t, "Stats with "+want, func() bool { st = s.Stats(); return cond(st) })
}
