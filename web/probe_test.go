package web

import (
	"testing"

	pb "streamd/api/proto/streamd/v1"
)

// TestAPIProbesRounded asks /api/ranks and /api/frequencies about values
// that float32 cannot hold, in a float32 stream: each is rounded as the
// stream stores its values, so it counts the values it stands for.
func TestAPIProbesRounded(t *testing.T) {
	s := openServer(t, nil)
	accept(t, s, "fr", []float64{0.1, 0.1, 0.1, 13.1, 13.1, 9.8, 12.5, 3.4e38})
	const q = "stream=fr&value=0.1&value=13.1&value=9.8&value=3.4e38&value=3.5e38"
	want := []struct{ count, rank uint64 }{{3, 3}, {2, 7}, {1, 4}, {1, 8}, {0, 8}}
	for _, last := range []string{"", "&last_n=8"} {
		var ranks pb.RanksResponse
		getMessage(t, s, "/api/ranks?"+q+last, &ranks)
		var freqs pb.FrequenciesResponse
		getMessage(t, s, "/api/frequencies?"+q+last, &freqs)
		if len(ranks.Ranks) != len(want) || len(freqs.Items) != len(want) {
			t.Fatalf("%d ranks, %d frequencies, want %d", len(ranks.Ranks), len(freqs.Items), len(want))
		}
		for i, w := range want {
			if r := ranks.Ranks[i]; r.RankMin != w.rank || r.RankMax != w.rank {
				t.Errorf("rank of %v%s: [%d, %d], want %d", r.Value, last, r.RankMin, r.RankMax, w.rank)
			}
			if f := freqs.Items[i]; f.CountMin != w.count || f.CountMax != w.count {
				t.Errorf("frequency of %v%s: [%d, %d], want %d", f.Value, last, f.CountMin, f.CountMax, w.count)
			}
		}
	}
}
