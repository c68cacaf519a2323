package pipeline

import (
	"net/netip"
	"testing"

	"streamd/hhh"
	"streamd/items"
	"streamd/summary"
	"streamd/synth"
)

// BenchmarkAcceptHierarchy measures the item path of hierarchy streams
// beside a plain item stream of the same addresses: splitting each item
// into its prefixes, then for each level but the root hashing, keeping
// the strings, filling windows, sorting and summarising (on the CPU, with
// every core). The items are 2^20 IPv4 addresses with a /24 flood
// (synth.AddrSource), or IPv6 addresses made from them, in batches of
// 65536; every level counts with ε = 0.001, and "ipv4/8@0.05" with the ε
// of a precision of 0.001 at supports ≥ 0.05 (hhh.LevelEpsilon). ns/item
// is per item of the stream, all levels together.
func BenchmarkAcceptHierarchy(b *testing.B) {
	v4, err := synth.Addresses(synth.AddrSpec{Seed: 1, FloodShare: 0.2, FloodAfter: 1 << 19}, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	v6 := make([]string, len(v4))
	for i, a := range v4 {
		x := netip.MustParseAddr(a).As4()
		v6[i] = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, x[0], x[1], 0, x[2], 12: x[3], 15: x[3] ^ x[0]}).String()
	}
	batchesOf := func(list []string) []*items.Batch {
		var out []*items.Batch
		for i := 0; i < len(list); i += 1 << 16 {
			var bt items.Batch
			for _, x := range list[i:min(i+1<<16, len(list))] {
				bt.AppendString(x)
			}
			out = append(out, &bt)
		}
		return out
	}
	for _, bc := range []struct {
		name string
		cfg  summary.Config
		list []string
	}{
		{"items", summary.Config{Items: true}, v4},
		{"ipv4/8", summary.Config{Hierarchy: "ipv4/8"}, v4},
		{"ipv4/8@0.05", summary.Config{Hierarchy: "ipv4/8", Epsilon: hhh.LevelEpsilon(0.001, 0.05)}, v4},
		{"ipv4/4", summary.Config{Hierarchy: "ipv4/4"}, v4},
		{"ipv6/4", summary.Config{Hierarchy: "ipv6/4"}, v6},
	} {
		b.Run(bc.name, func(b *testing.B) {
			batches := batchesOf(bc.list)
			s := benchAcceptItems(b, "addrs", bc.cfg, batches)
			st := s.Stats()
			b.ReportMetric(float64(st.Bytes), "summary-bytes")
			b.ReportMetric(float64(st.Reserved), "reserved-bytes")
		})
	}
}
