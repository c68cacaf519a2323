package ingest

import (
	"cmp"
	"encoding/binary"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/segmentio/kafka-go"

	"streamd/feed"
)

func TestParsePair(t *testing.T) {
	for _, c := range []struct {
		tok  string
		x, y float64
		ok   bool
	}{
		{"1:2", 1, 2, true},
		{"-0.5:1e3", -0.5, 1000, true},
		{"12.5:-7", 12.5, -7, true},
		{"1e999:3", math.Inf(1), 3, true},
		{"NaN:1", math.NaN(), 1, true},
		{"1:2:3", 0, 0, false},
		{"1:", 0, 0, false},
		{":1", 0, 0, false},
		{"1", 0, 0, false},
		{"0x1p-2:1", 0, 0, false},
		{"a:b", 0, 0, false},
	} {
		x, y, ok := parsePair([]byte(c.tok))
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if ok != c.ok || ok && (!same(x, c.x) || !same(y, c.y)) {
			t.Errorf("parsePair(%q) = %v, %v, %v; want %v, %v, %v", c.tok, x, y, ok, c.x, c.y, c.ok)
		}
	}
}

func TestPairsText(t *testing.T) {
	x, y, tokens, bad := appendPairsText(nil, nil, []byte("1:2, 3:-4\n5:6 bad 7\t8:9e1,"))
	if !slices.Equal(x, []float64{1, 3, 5, 8}) || !slices.Equal(y, []float64{2, -4, 6, 90}) || tokens != 6 || bad != 2 {
		t.Fatalf("pairs %v %v, %d tokens, %d bad", x, y, tokens, bad)
	}
}

func TestAppendPairsFrame(t *testing.T) {
	x, y := []float64{1, -2.5, 3}, []float64{10, 20, -30}
	f, err := AppendPairsFrame(nil, "lat", x, y)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint32(f); int(n) != len(f)-4 || f[4] != 3 || string(f[6:9]) != "lat" || f[9] != typePairs64 {
		t.Fatalf("frame head % x", f[:10])
	}
	gx, gy := appendPairs64(nil, nil, f[10:])
	if !slices.Equal(gx, x) || !slices.Equal(gy, y) {
		t.Fatalf("decoded %v %v", gx, gy)
	}
	if _, err := AppendPairsFrame(nil, "lat", x, y[:2]); err == nil {
		t.Fatal("a frame of x and y of different lengths")
	}
	if _, err := AppendPairsFrame(nil, "", x, y); err == nil {
		t.Fatal("a frame without a stream name")
	}
}

// TestKafkaPairs consumes pairs in both pair formats, with bad ones among
// them, beside values: the pairs and rejects are those of the package
// documentation.
func TestKafkaPairs(t *testing.T) {
	t.Parallel()
	brokers := testBrokers(t)
	topic := createTopic(t, brokers, "pairs")
	bin := appendPairBytes(nil, []float64{5, math.Copysign(0, -1), math.NaN()}, []float64{50, math.Copysign(0, -1), 1})
	msgs := []kafka.Message{
		message(0, []byte("lat"), []byte("1:10 2:-20, 3:30\nNaN:1 x 4:Inf"), ContentTypePairs),
		message(1, []byte("lat"), bin, ContentTypePairs64),
		message(1, []byte("lat"), bin[:17], ContentTypePairs64),
		message(2, []byte("lat"), []byte(" \n"), ContentTypePairs),
		message(3, []byte("v"), []byte("1 2"), ContentTypeText),
		message(3, []byte("lat"), []byte("6:60"), ""), // the topic's format: pairs
	}
	produce(t, brokers, topic, msgs)
	sink := newRecordSink()
	c := testConsumer(t, brokers, "g-pairs", sink, topic)
	c.Formats = map[string]Format{topic: FormatPairsText}
	start(t, c)
	// A message is counted as it is read, before its unit reaches the
	// sink: wait for what the sink must get, then compare it.
	poll(t, "all messages", func() bool {
		got := sink.result()
		n := 0
		for _, k := range got.rejects {
			n += k
		}
		return c.Stats().Messages == uint64(len(msgs)) && len(got.values[pairsKey("lat")]) == 12 && len(got.values["v"]) == 2 && n == 6
	})
	got := sink.result()
	var pairs [][2]float64
	lat := got.values[pairsKey("lat")]
	for i := 0; i+1 < len(lat); i += 2 {
		pairs = append(pairs, [2]float64{lat[i], lat[i+1]})
	}
	slices.SortFunc(pairs, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	want := [][2]float64{{0, 0}, {1, 10}, {2, -20}, {3, 30}, {5, 50}, {6, 60}}
	if !slices.Equal(pairs, want) || math.Signbit(pairs[0][0]) || math.Signbit(pairs[0][1]) {
		t.Errorf("pairs %v, want %v", pairs, want)
	}
	if v := got.values["v"]; !slices.Equal(v, []float64{1, 2}) {
		t.Errorf("values %v", v)
	}
	rejects := map[reject]int{
		{"lat", feed.ReasonNaN}: 2, {"lat", feed.ReasonInf}: 1, {"lat", feed.ReasonMalformed}: 3,
	}
	if !maps.Equal(got.rejects, rejects) {
		t.Errorf("rejects %v, want %v", got.rejects, rejects)
	}
}
