package hhh

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

var (
	sinkPrefixes []string
	sinkAnswer   []Hitter
)

// BenchmarkPrefixes measures AppendPrefixes per item, for hierarchies of 5
// to 33 levels.
func BenchmarkPrefixes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	path := func(depth int) []string {
		x := make([]string, 1024)
		for i := range x {
			var sb strings.Builder
			for range depth {
				fmt.Fprintf(&sb, "/seg%d", r.IntN(100))
			}
			x[i] = sb.String()
		}
		return x
	}
	ipv4s, ipv6s, names := make([]string, 1024), make([]string, 1024), make([]string, 1024)
	for i := range ipv4s {
		ipv4s[i] = ipv4(r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256))
		ipv6s[i] = fmt.Sprintf("2001:db8:%x:%x::%x", r.IntN(65536), r.IntN(65536), r.IntN(65536))
		names[i] = fmt.Sprintf("h%d.d%d.example.com", r.IntN(100), r.IntN(100))
	}
	for _, bc := range []struct {
		h     string
		items []string
	}{
		{"ipv4/8", ipv4s}, {"ipv4/4", ipv4s}, {"ipv4/1", ipv4s}, {"ipv6/4", ipv6s},
		{"path/4", path(4)}, {"path/8", path(8)}, {"path/32", path(32)}, {"dns/4", names},
	} {
		h := mustParse(b, bc.h)
		b.Run(fmt.Sprintf("%s/levels=%d", bc.h, h.Levels()), func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]string, 0, h.Levels())
			i := 0
			for b.Loop() {
				var err error
				dst, err = h.AppendPrefixes(dst[:0], bc.items[i%len(bc.items)])
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			sinkPrefixes = dst
		})
	}
}

// BenchmarkDiscounted measures the query on the summaries of a Zipf stream:
// the time per query and per candidate.
func BenchmarkDiscounted(b *testing.B) {
	for _, bc := range []struct {
		h   string
		eps float64
	}{{"ipv4", 0.001}, {"ipv4/4", 0.001}, {"ipv6", 0.001}} {
		h := mustParse(b, bc.h)
		r := rand.New(rand.NewPCG(3, 4))
		var items []string
		if strings.HasPrefix(bc.h, "ipv6") {
			items = randomIPv6(r, 100000)
		} else {
			items = zipfIPv4(r, 100000)
		}
		levels := summarize(b, h, items, bc.eps, 10000)
		candidates := 0
		for _, lv := range levels {
			candidates += len(lv.Candidates)
		}
		for _, s := range []float64{0.002, 0.01, 0.1} {
			b.Run(fmt.Sprintf("%s/candidates=%d/s=%v", bc.h, candidates, s), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var err error
					sinkAnswer, err = Discounted(h, levels, int64(len(items)), s, bc.eps)
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(candidates), "ns/candidate")
				b.ReportMetric(float64(len(sinkAnswer)), "answers")
			})
		}
	}
}
