package hhh_test

import (
	"fmt"
	"slices"

	"streamd/hhh"
	"streamd/lossy"
)

// Example feeds 10,000 client addresses to one lossy-counting summary per
// level, as the daemon does, and asks for the hierarchical heavy hitters
// with support 10%: a busy host, a /24 spread over many hosts that arrives
// late, a /16 spread over many /24s, and the rest of the traffic under the
// root.
func Example() {
	var items []string
	for i := range 10000 {
		switch {
		case i%10 < 3: // 30%: one host
			items = append(items, "10.1.2.3")
		case i%10 == 3: // 10%: 200 hosts of 10.1.2.0/24 besides it
			items = append(items, fmt.Sprintf("10.1.2.%d", 10+i/10%200))
		case i%10 < 8 && i >= 5000: // 20%, late: 10.1.9.0/24, no host over 1%
			items = append(items, fmt.Sprintf("10.1.9.%d", i/10%250))
		case i%10 < 8: // 20%, early: 10.7.0.0/16 over 50 /24s
			items = append(items, fmt.Sprintf("10.7.%d.%d", i/10%50, i/500%250))
		default: // 20%: everywhere
			items = append(items, fmt.Sprintf("%d.%d.%d.%d", 11+i%200, i/7%256, i/11%256, i/13%256))
		}
	}
	h, err := hhh.Parse("ipv4/8")
	if err != nil {
		panic(err)
	}
	const eps = 0.005
	// One summary per level, fed with that level's prefixes in windows of
	// 1,000 items; prefixes are named by their index in names.
	ids := map[string]float64{}
	var names []string
	sums := make([]*lossy.Summary, h.Levels())
	for l := range sums {
		sums[l], _ = lossy.New(eps)
	}
	for w := 0; w < len(items); w += 1000 {
		window := make([][]float64, h.Levels())
		for _, item := range items[w : w+1000] {
			prefixes, err := h.Prefixes(item)
			if err != nil {
				panic(err)
			}
			for l, p := range prefixes {
				if _, ok := ids[p]; !ok {
					ids[p] = float64(len(names))
					names = append(names, p)
				}
				window[l] = append(window[l], ids[p])
			}
		}
		for l, x := range window {
			slices.Sort(x)
			if err := sums[l].AddWindow(int64(len(x)), lossy.AppendRuns(nil, x)); err != nil {
				panic(err)
			}
		}
	}
	levels := make([]hhh.Level, h.Levels())
	for l, s := range sums {
		levels[l].Absent = s.Absent()
		for _, e := range s.Entries() {
			levels[l].Candidates = append(levels[l].Candidates, hhh.Candidate{
				Prefix: names[int(e.Value)], Count: hhh.Bounds{Lo: e.Count, Hi: e.Count + e.Delta}})
		}
	}
	answer, err := hhh.Discounted(h, levels, int64(len(items)), 0.1, eps)
	if err != nil {
		panic(err)
	}
	for _, a := range answer {
		fmt.Printf("level %d %-14s count [%d, %d] discounted [%d, %d] less %d\n", a.Level, a.Prefix,
			a.Count.Lo, a.Count.Hi, a.Discounted.Lo, a.Discounted.Hi, a.Discounts)
	}
	// Output:
	// level 0 10.1.2.3       count [3000, 3000] discounted [3000, 3000] less 0
	// level 1 10.1.9.0/24    count [2000, 2025] discounted [2000, 2025] less 0
	// level 1 10.1.2.0/24    count [4000, 4000] discounted [1000, 1000] less 1
	// level 2 10.7.0.0/16    count [2000, 2000] discounted [2000, 2000] less 0
	// level 4 0.0.0.0/0      count [10000, 10000] discounted [1975, 2000] less 3
}

// ExampleHierarchy_Prefixes shows the prefixes of an item in each kind of
// hierarchy.
func ExampleHierarchy_Prefixes() {
	for _, c := range []struct{ h, item string }{
		{"ipv4", "10.1.2.3"},
		{"ipv6/16", "2001:db8::1"},
		{"path/3", "/api/v1//users/?id=7"},
		{"dns/3", "WWW.Example.COM."},
		{"rdelim/2:.", "a.b.c"},
	} {
		h, err := hhh.Parse(c.h)
		if err != nil {
			panic(err)
		}
		p, err := h.Prefixes(c.item)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s %q\n", h, p)
	}
	h, err := hhh.IPv4(8)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Check("300.1.2.3"))
	// Output:
	// ipv4/8 ["10.1.2.3" "10.1.2.0/24" "10.1.0.0/16" "10.0.0.0/8" "0.0.0.0/0"]
	// ipv6/16 ["2001:db8::1" "2001:db8::/112" "2001:db8::/96" "2001:db8::/80" "2001:db8::/64" "2001:db8::/48" "2001:db8::/32" "2001::/16" "::/0"]
	// path/3 ["/api/v1/users" "/api/v1" "/api" "/"]
	// dns/3 ["www.example.com" "example.com" "com" "."]
	// rdelim/2:. ["b.c" "c" "."]
	// item "300.1.2.3" is not an IPv4 address (ParseAddr("300.1.2.3"): IPv4 field has value >255): not in the hierarchy
}
