package loadgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"streamd/feed"
	"streamd/ingest"
	"streamd/items"
	"streamd/synth"
)

// A Source produces the values of one or more named streams. Run hands
// them, in batches, to sink.Accept, after the value rule
// (feed.CleanValues), and counts missing, malformed or non-finite input
// with sink.Reject; it calls the sink from the calling goroutine only. It
// returns nil when the source is exhausted, or the first error of reading
// or of Accept. Run may be called again to produce the values again.
type Source interface {
	Run(ctx context.Context, sink ingest.Sink) error
}

// A LaneSource is a Source that can hand its batches to several sinks at
// once, each from a goroutine of its own: every batch of a stream to
// sinks[lane(stream)], in the order Run would hand them over. lane is
// safe for concurrent use. A Runner that deals streams to its
// connections uses it to send from as many goroutines.
type LaneSource interface {
	Source
	RunLanes(ctx context.Context, sinks []ingest.Sink, lane func(stream string) int) error
}

// sourceBatch is how many values a file source gathers before handing
// them to its sink.
const sourceBatch = 4096

// openFile opens path for reading, through a gzip decompressor if the file
// starts with the gzip magic bytes, whatever its name.
func openFile(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return readCloser{br, f}, nil
	}
	gz, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return readCloser{bufio.NewReaderSize(gz, 256<<10), f}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// StreamName turns s into a valid stream name: bytes that a name cannot
// hold become "_", and the name is cut to feed.MaxNameLen bytes.
// An empty s becomes "_".
func StreamName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '.' || c == '_' || c == '-' || c == ':' || c == '/'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > feed.MaxNameLen {
		b = b[:feed.MaxNameLen]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// FileStreamName returns the default stream name of a file: its base name
// without the extensions ".gz", ".csv", ".txt" and ".sdb", made valid by
// StreamName.
func FileStreamName(path string) string {
	name := filepath.Base(path)
	for _, ext := range []string{".gz", ".csv", ".txt", ".sdb"} {
		name = strings.TrimSuffix(name, ext)
	}
	return StreamName(name)
}

// TextFile is a Source that reads a text file of one decimal value per
// line, in any syntax strconv.ParseFloat accepts, into one stream. Blanks
// around a value are ignored, and so are empty lines and lines starting
// with "#". A line that is not a number is counted as
// feed.ReasonMalformed and skipped. A gzip-compressed file is read
// transparently.
type TextFile struct {
	Path   string
	Stream string // the stream name; "" means FileStreamName(Path)
}

// Run implements Source.
func (t *TextFile) Run(ctx context.Context, sink ingest.Sink) error {
	stream := t.Stream
	if stream == "" {
		stream = FileStreamName(t.Path)
	}
	r, err := openFile(t.Path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	vals := make([]float64, 0, sourceBatch)
	bad := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		v, err := strconv.ParseFloat(string(line), 64)
		if err != nil {
			bad++
			continue
		}
		vals = append(vals, v)
		if len(vals) == cap(vals) {
			if err := acceptValues(ctx, sink, stream, vals); err != nil {
				return err
			}
			vals = vals[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", t.Path, err)
	}
	if bad > 0 {
		sink.Reject(stream, feed.Local, feed.ReasonMalformed, bad)
	}
	return acceptValues(ctx, sink, stream, vals)
}

// CSVFile is a Source that reads columns of a CSV file, one stream per
// column. A field that is empty or not a number (such as "?") is counted
// as feed.ReasonMalformed in its column's stream and skipped. A
// gzip-compressed file is read transparently.
type CSVFile struct {
	Path string

	// Columns chooses the columns, each by its name in the header or by
	// its index, counting from 0. Empty means every column whose first
	// row holds a number.
	Columns []string

	// NoHeader says the file has no header line; columns are then chosen
	// by index only and named "col<index>".
	NoHeader bool

	// Comma is the field separator; 0 means ",".
	Comma rune

	// Streams names the stream of each column of Columns, in order; a
	// missing or empty name means Prefix followed by the column's name,
	// made valid by StreamName.
	Streams []string
	Prefix  string

	// ItemColumns chooses columns of strings, by name or index like
	// Columns, whose fields go as items to item streams named like the
	// others (Prefix and the column's name). An empty field is counted as
	// feed.ReasonEmptyItem and skipped, an over-long one as
	// feed.ReasonItemTooLong. With ItemColumns and no Columns, only the item
	// columns are read.
	ItemColumns []string
}

// Run implements Source.
func (c *CSVFile) Run(ctx context.Context, sink ingest.Sink) error {
	r, err := openFile(c.Path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer r.Close()
	cr := csv.NewReader(r)
	if c.Comma != 0 {
		cr.Comma = c.Comma
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var header []string
	rec, err := cr.Read()
	if err != nil {
		return fmt.Errorf("read %s: %w", c.Path, err)
	}
	if c.NoHeader {
		for i := range rec {
			header = append(header, "col"+strconv.Itoa(i))
		}
	} else {
		header = append(header, rec...)
		if rec, err = cr.Read(); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read %s: %w", c.Path, err)
		}
	}
	var cols, itemCols []csvColumn
	if len(c.Columns) > 0 || len(c.ItemColumns) == 0 {
		if cols, err = c.columns(c.Columns, header, rec); err != nil {
			return fmt.Errorf("read %s: %w", c.Path, err)
		}
	}
	if len(c.ItemColumns) > 0 {
		if itemCols, err = c.columns(c.ItemColumns, header, rec); err != nil {
			return fmt.Errorf("read %s: %w", c.Path, err)
		}
	}
	lists := make([]items.Batch, len(itemCols))
	vals := make([][]float64, len(cols))
	bad := make([]int, len(cols))
	for {
		for i, col := range cols {
			if col.index >= len(rec) {
				bad[i]++
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[col.index]), 64)
			if err != nil {
				bad[i]++
				continue
			}
			vals[i] = append(vals[i], v)
			if len(vals[i]) == sourceBatch {
				if err := acceptValues(ctx, sink, col.stream, vals[i]); err != nil {
					return err
				}
				vals[i] = vals[i][:0]
			}
		}
		for i, col := range itemCols {
			field := ""
			if col.index < len(rec) {
				field = rec[col.index]
			}
			if r := feed.ItemReason([]byte(field)); r != "" {
				sink.Reject(col.stream, feed.Local, r, 1)
				continue
			}
			lists[i].AppendString(field)
			if lists[i].Len() == sourceBatch {
				if err := acceptItems(ctx, sink, col.stream, &lists[i]); err != nil {
					return err
				}
				lists[i].Reset()
			}
		}
		rec, err = cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", c.Path, err)
		}
	}
	for i, col := range cols {
		if bad[i] > 0 {
			sink.Reject(col.stream, feed.Local, feed.ReasonMalformed, bad[i])
		}
		if err := acceptValues(ctx, sink, col.stream, vals[i]); err != nil {
			return err
		}
	}
	for i, col := range itemCols {
		if err := acceptItems(ctx, sink, col.stream, &lists[i]); err != nil {
			return err
		}
	}
	return nil
}

type csvColumn struct {
	index  int
	stream string
}

// columns resolves names (c.Columns or c.ItemColumns) against the header
// and the first row.
func (c *CSVFile) columns(names, header, first []string) ([]csvColumn, error) {
	var idx []int
	for _, name := range names {
		i := -1
		if !c.NoHeader {
			i = indexOf(header, name)
		}
		if i < 0 {
			n, err := strconv.Atoi(name)
			if err != nil || n < 0 || n >= len(header) {
				return nil, fmt.Errorf("no column %q among %d", name, len(header))
			}
			i = n
		}
		idx = append(idx, i)
	}
	if len(names) == 0 {
		for i := range header {
			if i < len(first) {
				if _, err := strconv.ParseFloat(strings.TrimSpace(first[i]), 64); err == nil {
					idx = append(idx, i)
				}
			}
		}
		if len(idx) == 0 {
			return nil, errors.New("no numeric column")
		}
	}
	cols := make([]csvColumn, len(idx))
	for k, i := range idx {
		name := ""
		if k < len(c.Streams) {
			name = c.Streams[k]
		}
		if name == "" {
			name = StreamName(c.Prefix + header[i])
		}
		if err := feed.ValidName(name); err != nil {
			return nil, err
		}
		cols[k] = csvColumn{index: i, stream: name}
	}
	return cols, nil
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// Recording is a Source that replays a file in either protocol of package
// ingest: the framed protocol, as written by Recorder, or the line
// protocol. The streams are those the file names. A gzip-compressed file is
// read transparently. Bad input is counted as ingest.Decoder counts it.
type Recording struct {
	Path   string
	Prefix string // prefixed to every stream name of the file
}

// Run implements Source.
func (rec *Recording) Run(ctx context.Context, sink ingest.Sink) error {
	r, err := openFile(rec.Path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer r.Close()
	if rec.Prefix != "" {
		sink = prefixSink{sink, rec.Prefix}
	}
	d := ingest.Decoder{Sink: sink}
	if err := d.Decode(ctx, r); err != nil {
		return fmt.Errorf("replay %s: %w", rec.Path, err)
	}
	return nil
}

// prefixSink prefixes the stream names of an ingest.Sink.
type prefixSink struct {
	ingest.Sink
	prefix string
}

func (p prefixSink) Accept(ctx context.Context, b *feed.Batch) (int, error) {
	pb := *b
	pb.Stream = p.prefix + b.Stream
	return p.Sink.Accept(ctx, &pb)
}

func (p prefixSink) Reject(stream string, src feed.Source, reason feed.Reason, n int) {
	if stream != "" {
		stream = p.prefix + stream
	}
	p.Sink.Reject(stream, src, reason, n)
}

func (p prefixSink) IsItemStream(stream string) bool {
	return p.Sink.IsItemStream(p.prefix + stream)
}

// IsRecording reports whether the file at path, once decompressed, starts
// with ingest.Magic, as a file written by Recorder does.
func IsRecording(path string) (bool, error) {
	r, err := openFile(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	magic := make([]byte, len(ingest.Magic))
	n, err := io.ReadFull(r, magic)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return string(magic[:n]) == ingest.Magic, nil
}

// Loop is a Source that runs Source N times, or without end when N ≤ 0
// (until its sink fails, for example at the Runner's count or duration).
type Loop struct {
	Source Source
	N      int
}

// Run implements Source.
func (l *Loop) Run(ctx context.Context, sink ingest.Sink) error {
	for i := 0; l.N <= 0 || i < l.N; i++ {
		if err := l.Source.Run(ctx, sink); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Synth is a Source of synthetic streams: Streams streams (at least one)
// of Spec's distribution and arrival order, stream i seeded with
// Spec.Seed+i. Their batches are interleaved, one stream after the other.
//
// Count is the number of values over all streams, split evenly. Arrival
// orders other than random arrange all of a stream's values at once, so
// they need a Count and hold 8 bytes per value in memory; the random order
// draws values as it goes, and without a Count goes on until the sink
// fails.
type Synth struct {
	Spec    synth.Spec
	Count   int64
	Streams []string // the stream names; at least one

	// Items sends items instead of values, for item streams: the string
	// of each value drawn is synth.ItemName(value), so the Zipf
	// distribution gives Zipf-distributed strings.
	Items bool
	// Addresses, if set, makes the items IPv4 addresses drawn from it
	// (synth.AddrSource), for hierarchy streams, instead of the names of
	// values of Spec; stream i draws with seed Addresses.Seed+i. Items is
	// implied.
	Addresses *synth.AddrSpec

	// Pairs sends pairs instead of values, for pair streams: a request's
	// latency and its response's bytes (synth.PairSource, stream i seeded
	// with Spec.Seed+i; Spec's distribution is not used). Spec.Order is
	// random, or sorted or reverse by latency, which need a Count.
	Pairs bool

	// Sizes, if set, is the number of values of each stream of Streams,
	// in order, instead of Count split evenly: for many streams of
	// different sizes (synth.Sizes). The batches of the streams, of at
	// most Batch values (default 4096), then go in a random interleaving
	// seeded with Spec.Seed, so that every stream's batches spread over
	// the run, and batch k of stream i holds values drawn from a source
	// seeded with Spec.Seed+i and k. Only the random order goes with
	// Sizes; Count is not used, Items may be set, Addresses and Pairs may
	// not. The run holds 4 bytes for each batch and each stream besides
	// Streams and Sizes.
	Sizes []int64
	Batch int
}

// RunLanes implements LaneSource. A run of values with Sizes hands the
// batches of each stream to sinks[lane(stream)], from one goroutine for
// each sink; any other run hands them all to sinks[0], as Run does. Items
// go from one goroutine: each would keep its own cache of item names, up
// to 2^22 of them.
func (s *Synth) RunLanes(ctx context.Context, sinks []ingest.Sink, lane func(stream string) int) error {
	if s.Sizes == nil || s.Items || len(s.Streams) == 0 || len(sinks) == 1 {
		return s.Run(ctx, sinks[0])
	}
	return s.runSized(ctx, sinks, lane)
}

// Run implements Source.
func (s *Synth) Run(ctx context.Context, sink ingest.Sink) error {
	if len(s.Streams) == 0 {
		return errors.New("synth: no stream names")
	}
	if s.Sizes != nil {
		return s.runSized(ctx, []ingest.Sink{sink}, nil)
	}
	if s.Addresses != nil {
		return s.runAddresses(ctx, sink)
	}
	if s.Pairs {
		return s.runPairs(ctx, sink)
	}
	k := int64(len(s.Streams))
	random := s.Spec.Order == synth.Random || s.Spec.Order == ""
	if !random && s.Count <= 0 {
		return fmt.Errorf("synth: order %q needs a count", s.Spec.Order)
	}
	next := make([]func(dst []float64) []float64, k)
	for i := range next {
		spec := s.Spec
		spec.Seed += uint64(i)
		n := s.share(i)
		if random {
			src, err := synth.NewSource(spec)
			if err != nil {
				return err
			}
			next[i] = func(dst []float64) []float64 {
				m := int64(cap(dst))
				if n >= 0 {
					m = min(m, n)
					n -= m
				}
				dst = dst[:m]
				for j := range dst {
					dst[j] = src.Next()
				}
				return dst
			}
			continue
		}
		x, err := synth.Generate(spec, int(n))
		if err != nil {
			return err
		}
		next[i] = func(dst []float64) []float64 {
			m := copy(dst[:cap(dst)], x)
			x = x[m:]
			return dst[:m]
		}
	}
	accept := s.acceptor(sink)
	buf := make([]float64, sourceBatch)
	for live := k; live > 0; {
		live = 0
		for i, name := range s.Streams {
			vals := next[i](buf[:0])
			if len(vals) == 0 {
				continue
			}
			live++
			if err := accept(ctx, name, vals); err != nil {
				return err
			}
		}
	}
	return nil
}

// share returns stream i's share of s.Count, the first s.Count%k of the
// k streams taking one more than the others, or -1 without a Count: the
// stream is endless.
func (s *Synth) share(i int) int64 {
	if s.Count <= 0 {
		return -1
	}
	k := int64(len(s.Streams))
	n := s.Count / k
	if int64(i) < s.Count%k {
		n++
	}
	return n
}

// runAddresses is Run for s.Addresses: each stream's share of s.Count
// addresses (endless without a Count), batch by batch.
func (s *Synth) runAddresses(ctx context.Context, sink ingest.Sink) error {
	k := int64(len(s.Streams))
	srcs := make([]*synth.AddrSource, k)
	left := make([]int64, k)
	for i := range srcs {
		spec := *s.Addresses
		spec.Seed += uint64(i)
		src, err := synth.NewAddrSource(spec)
		if err != nil {
			return err
		}
		srcs[i] = src
		left[i] = s.share(i)
	}
	var b items.Batch
	for live := true; live; {
		live = false
		for i, name := range s.Streams {
			m := int64(sourceBatch)
			if left[i] >= 0 {
				m = min(m, left[i])
				left[i] -= m
			}
			if m == 0 {
				continue
			}
			live = true
			b.Reset()
			for range m {
				b.AppendString(srcs[i].Next())
			}
			if err := acceptItems(ctx, sink, name, &b); err != nil {
				return err
			}
		}
	}
	return nil
}

// acceptor returns the Accept that hands drawn values to sink: as they
// are, or for s.Items as the items they name (itemNamer).
func (s *Synth) acceptor(sink ingest.Sink) func(ctx context.Context, stream string, values []float64) error {
	if s.Items {
		return itemNamer(sink, s.Spec)
	}
	return func(ctx context.Context, stream string, values []float64) error {
		return acceptValues(ctx, sink, stream, values)
	}
}

// itemNamer returns an Accept that hands the items named by values of
// spec (synth.ItemName) to sink. The names of the integers below a limit
// are made once and kept, so that a Zipf stream costs no allocation per
// item: 2^16, or for Zipf, whose values are the integers below
// spec.Distinct, spec.Distinct if greater (at most 2^22). The integer
// parts of other distributions may spread far (Pareto's reach millions),
// so their rarer names are made as they come.
func itemNamer(sink ingest.Sink, spec synth.Spec) func(ctx context.Context, stream string, values []float64) error {
	limit := uint64(1 << 16)
	if spec.Dist == synth.Zipf {
		limit = max(limit, min(spec.Distinct, 1<<22))
	}
	var (
		names []string
		b     items.Batch
	)
	return func(ctx context.Context, stream string, values []float64) error {
		b.Reset()
		for _, v := range values {
			k := uint64(math.Abs(v))
			if k < limit {
				for uint64(len(names)) <= k {
					names = append(names, synth.ItemName(float64(len(names))))
				}
				b.AppendString(names[k])
			} else {
				b.AppendString(synth.ItemName(v))
			}
		}
		return acceptItems(ctx, sink, stream, &b)
	}
}

// runPairs is Run for pairs.
func (s *Synth) runPairs(ctx context.Context, sink ingest.Sink) error {
	k := int64(len(s.Streams))
	random := s.Spec.Order == synth.Random || s.Spec.Order == ""
	if !random && s.Count <= 0 {
		return fmt.Errorf("synth: order %q needs a count", s.Spec.Order)
	}
	type pairStream struct {
		src    *synth.PairSource // random order: drawn as they go
		x, y   []float64         // other orders: arranged whole
		remain int64             // pairs left to send; < 0: endless
	}
	streams := make([]pairStream, k)
	for i := range streams {
		seed := s.Spec.Seed + uint64(i)
		ps := &streams[i]
		ps.remain = s.share(i)
		if random {
			ps.src = synth.NewPairSource(seed)
			continue
		}
		var err error
		if ps.x, ps.y, err = synth.GeneratePairs(seed, int(ps.remain), s.Spec.Order); err != nil {
			return err
		}
	}
	bx, by := make([]float64, sourceBatch), make([]float64, sourceBatch)
	for live := k; live > 0; {
		live = 0
		for i, name := range s.Streams {
			ps := &streams[i]
			m := int64(sourceBatch)
			if ps.remain >= 0 {
				m = min(m, ps.remain)
				ps.remain -= m
			}
			if m == 0 {
				continue
			}
			live++
			x, y := bx[:m], by[:m]
			if ps.src != nil {
				for j := range x {
					x[j], y[j] = ps.src.Next()
				}
			} else {
				copy(x, ps.x)
				copy(y, ps.y)
				ps.x, ps.y = ps.x[m:], ps.y[m:]
			}
			if _, err := sink.Accept(ctx, &feed.Batch{Stream: name, Pairs: feed.Pairs{X: x, Y: y}}); err != nil {
				return err
			}
		}
	}
	return nil
}
