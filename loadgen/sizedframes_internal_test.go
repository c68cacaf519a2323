package loadgen

import (
	"math"
	"testing"

	"streamd/synth"
)

// TestSizedFramesPace: the connections of a run of rendered frames share
// its rate by their values, unequal as they are, so that each is due to
// send its last value when the run as a whole is, at Len()/Rate seconds,
// as a Runner paces the same batches; a connection without frames takes
// no share.
func TestSizedFramesPace(t *testing.T) {
	sizes := synth.Sizes{Min: 10, Max: 5000, S: 1}.Draw(4, 40)
	names := make([]string, len(sizes))
	for i := range names {
		names[i] = "p" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	const rate = 10_000.0
	for _, conns := range []int{1, 3, 64} {
		f, err := RenderSized(&Synth{Spec: synth.Spec{Dist: synth.Uniform, Seed: 4}, Streams: names, Sizes: sizes, Batch: 50}, conns, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &FrameRunner{Sized: f, Conns: conns, Rate: rate}
		senders, lanes := f.plan()
		end := float64(f.Len()) / rate
		var idle int
		for i, s := range senders {
			sc := lanes[i].c
			if len(sc.values) == 0 {
				idle++
				if s.share != 0 {
					t.Errorf("%d connections: connection %d sends nothing, with a share %v of the rate", conns, i, s.share)
				}
				continue
			}
			values := float64(sc.values[len(sc.values)-1])
			if due := values / (r.Rate * s.share); math.Abs(due-end) > 1e-9*end {
				t.Errorf("%d connections: connection %d sends its %v values by %.4fs, the run ends at %.4fs", conns, i, values, due, end)
			}
		}
		if conns == 64 && idle == 0 {
			t.Errorf("%d connections for %d streams: none idle", conns, len(names))
		}
	}
}
