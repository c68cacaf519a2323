package hhh

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"streamd/lossy"
)

// node is a prefix at a level.
type node struct {
	level int
	name  string
}

// truth holds the exact counts of a stream's items and of every prefix.
type truth struct {
	h      Hierarchy
	n      int64
	items  map[string]int64    // canonical item → count
	chains map[string][]string // canonical item → its prefixes
	counts map[node]int64
}

func exactCounts(t testing.TB, h Hierarchy, items []string) *truth {
	t.Helper()
	tr := &truth{h: h, n: int64(len(items)), items: map[string]int64{}, chains: map[string][]string{}, counts: map[node]int64{}}
	for _, it := range items {
		ps, err := h.Prefixes(it)
		if err != nil {
			t.Fatal(err)
		}
		tr.items[ps[0]]++
		tr.chains[ps[0]] = ps
		for l, p := range ps {
			tr.counts[node{l, p}]++
		}
	}
	return tr
}

// summarize feeds each level's prefixes of items, in windows of w, to a
// lossy summary of error eps through the windowed histogram path the
// pipeline uses, and returns what the summaries know.
func summarize(t testing.TB, h Hierarchy, items []string, eps float64, w int) []Level {
	t.Helper()
	ids := map[string]float64{}
	var names []string
	sums := make([]*lossy.Summary, h.Levels())
	for l := range sums {
		s, err := lossy.New(eps)
		if err != nil {
			t.Fatal(err)
		}
		sums[l] = s
	}
	bufs := make([][]float64, h.Levels())
	var ps []string
	flush := func() {
		for l, s := range sums {
			buf := bufs[l]
			if len(buf) == 0 {
				continue
			}
			slices.Sort(buf)
			known := s.AppendValues(nil)
			th := s.Threshold(int64(len(buf)))
			var runs []lossy.Run
			for _, r := range lossy.AppendRuns(nil, buf) {
				if _, ok := slices.BinarySearch(known, r.Value); ok || r.Count > th {
					runs = append(runs, r)
				}
			}
			if err := s.AddWindow(int64(len(buf)), runs); err != nil {
				t.Fatal(err)
			}
			bufs[l] = buf[:0]
		}
	}
	for i, it := range items {
		var err error
		ps, err = h.AppendPrefixes(ps[:0], it)
		if err != nil {
			t.Fatal(err)
		}
		for l, p := range ps {
			id, ok := ids[p]
			if !ok {
				id = float64(len(names))
				ids[p] = id
				names = append(names, p)
			}
			bufs[l] = append(bufs[l], id)
		}
		if (i+1)%w == 0 {
			flush()
		}
	}
	flush()
	levels := make([]Level, h.Levels())
	for l, s := range sums {
		levels[l].Absent = s.Absent()
		for _, e := range s.Entries() {
			levels[l].Candidates = append(levels[l].Candidates,
				Candidate{Prefix: names[int(e.Value)], Count: Bounds{Lo: e.Count, Hi: e.Count + e.Delta}})
		}
	}
	return levels
}

// checkHeavy checks Heavy's answer against the exact counts.
func checkHeavy(t testing.TB, tr *truth, got []Hitter, support, eps float64) {
	t.Helper()
	cut := support * float64(tr.n)
	in := map[node]bool{}
	for i, p := range got {
		nd := node{p.Level, p.Prefix}
		c := tr.counts[nd]
		if in[nd] {
			t.Fatalf("s=%v: %v reported twice", support, nd)
		}
		in[nd] = true
		if p.Count.Hi > tr.n {
			t.Fatalf("s=%v: %v bounds %v above N", support, nd, p.Count)
		}
		if c < p.Count.Lo || c > p.Count.Hi {
			t.Fatalf("s=%v: %v count %d outside %v", support, nd, c, p.Count)
		}
		if float64(c) < cut-eps*float64(tr.n) {
			t.Fatalf("s=%v: %v count %d below (s−ε)N", support, nd, c)
		}
		if tr.h.leafCopy(p.Prefix, p.Level) {
			t.Fatalf("s=%v: %v is a copy of an item below", support, nd)
		}
		if i > 0 && cmp.Or(cmp.Compare(got[i-1].Level, p.Level), cmp.Compare(p.Count.Hi, got[i-1].Count.Hi)) > 0 {
			t.Fatalf("s=%v: answer not sorted at %d", support, i)
		}
	}
	for nd, c := range tr.counts {
		if float64(c) >= cut && !in[nd] && !tr.h.leafCopy(nd.name, nd.level) {
			t.Fatalf("s=%v: %v with count %d ≥ sN = %v missing", support, nd, c, cut)
		}
	}
}

// checkDiscounted checks Discounted's answer against exact discounted
// counts with respect to the answer itself: every guarantee of the package
// doc.
func checkDiscounted(t testing.TB, tr *truth, got []Hitter, support, eps float64) {
	t.Helper()
	n := float64(tr.n)
	cut := support * n
	in := map[node]int{}
	perLevel := map[int]int{}
	for i, p := range got {
		nd := node{p.Level, p.Prefix}
		if _, ok := in[nd]; ok {
			t.Fatalf("s=%v: %v reported twice", support, nd)
		}
		in[nd] = i
		perLevel[p.Level]++
		if tr.h.leafCopy(p.Prefix, p.Level) {
			t.Fatalf("s=%v: %v is a copy of an item below", support, nd)
		}
		if p.Count.Hi > tr.n || p.Discounted.Hi > p.Count.Hi {
			t.Fatalf("s=%v: %v bounds %v, %v above N or the count", support, nd, p.Count, p.Discounted)
		}
		if i > 0 && cmp.Or(cmp.Compare(got[i-1].Level, p.Level), cmp.Compare(p.Discounted.Hi, got[i-1].Discounted.Hi)) > 0 {
			t.Fatalf("s=%v: answer not sorted at %d", support, i)
		}
	}
	maxK := int(math.Floor(1 / (support - eps)))
	for l, k := range perLevel {
		if k > maxK {
			t.Fatalf("s=%v: %d answers at level %d, more than ⌊1/(s−ε)⌋ = %d", support, k, l, maxK)
		}
	}
	// Exact discounted counts and closest descendants.
	disc := map[node]int64{}
	closest := map[node]map[node]bool{}
	for item, m := range tr.items {
		chain := tr.chains[item]
		var below *node
		for l, p := range chain {
			nd := node{l, p}
			if below == nil {
				disc[nd] += m
			}
			if _, ok := in[nd]; ok {
				if below != nil {
					if closest[nd] == nil {
						closest[nd] = map[node]bool{}
					}
					closest[nd][*below] = true
				}
				below = &nd
			}
		}
	}
	for nd, d := range disc {
		if _, ok := in[nd]; !ok && float64(d) >= cut {
			t.Fatalf("s=%v: %v with discounted count %d ≥ sN = %v missing", support, nd, d, cut)
		}
	}
	for nd, i := range in {
		p := got[i]
		c, d, k := tr.counts[nd], disc[nd], len(closest[nd])
		if c < p.Count.Lo || c > p.Count.Hi {
			t.Fatalf("s=%v: %v count %d outside %v", support, nd, c, p.Count)
		}
		if d < p.Discounted.Lo || d > p.Discounted.Hi {
			t.Fatalf("s=%v: %v discounted count %d outside %v", support, nd, d, p.Discounted)
		}
		if p.Discounts != k {
			t.Fatalf("s=%v: %v has %d discounts, want %d", support, nd, p.Discounts, k)
		}
		if k > maxK {
			t.Fatalf("s=%v: %v has %d closest descendants, more than %d", support, nd, k, maxK)
		}
		if float64(d) < float64(p.Discounted.Hi)-float64(1+k)*eps*n || float64(d) < cut-float64(1+k)*eps*n {
			t.Fatalf("s=%v: %v discounted count %d below its precision bound (k=%d, %v)", support, nd, d, k, p.Discounted)
		}
		if float64(p.Discounted.Hi) < cut {
			t.Fatalf("s=%v: %v reported with discounted bound %v below sN", support, nd, p.Discounted)
		}
	}
}

// checkAll runs Heavy and Discounted over levels for several supports and
// checks both.
func checkAll(t *testing.T, tr *truth, levels []Level, eps float64) (answers int) {
	t.Helper()
	for _, s := range []float64{1.5 * eps, 0.02, 0.05, 0.1, 0.3, 0.9} {
		if s <= eps {
			continue
		}
		heavy, err := Heavy(tr.h, levels, tr.n, s, eps)
		if err != nil {
			t.Fatal(err)
		}
		checkHeavy(t, tr, heavy, s, eps)
		got, err := Discounted(tr.h, levels, tr.n, s, eps)
		if err != nil {
			t.Fatal(err)
		}
		checkDiscounted(t, tr, got, s, eps)
		answers += len(got)
		// Candidates that cannot reach sN change nothing.
		cut := make([]Level, len(levels))
		for l, lv := range levels {
			cut[l].Absent = lv.Absent
			for _, c := range lv.Candidates {
				if float64(c.Count.Hi) >= s*float64(tr.n) {
					cut[l].Candidates = append(cut[l].Candidates, c)
				}
			}
		}
		again, err := Discounted(tr.h, cut, tr.n, s, eps)
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("s=%v: only candidates over sN: %v, %v; want %v", s, again, err, got)
		}
	}
	return answers
}

// Stream generators.

func ipv4(a, b, c, d int) string { return fmt.Sprintf("%d.%d.%d.%d", a, b, c, d) }

// zipf draws from 0..n−1 with P(i) ∝ 1/(i+1)^1.2.
func zipf(r *rand.Rand, n int) int {
	return int(rand.NewZipf(r, 1.2, 1, uint64(n-1)).Uint64())
}

func randomIPv4(r *rand.Rand, n int) []string {
	x := make([]string, n)
	for i := range x {
		x[i] = ipv4(10, r.IntN(4), r.IntN(16), r.IntN(256))
	}
	return x
}

func zipfIPv4(r *rand.Rand, n int) []string {
	x := make([]string, n)
	for i := range x {
		x[i] = ipv4(zipf(r, 20), zipf(r, 20), zipf(r, 20), zipf(r, 50))
	}
	return x
}

func duplicateIPv4(r *rand.Rand, n int) []string {
	x := make([]string, n)
	for i := range x {
		x[i] = ipv4(192, 168, r.IntN(2), r.IntN(3))
	}
	return x
}

// lateFlood is uniform background traffic with, in its last 30%, a flood
// from one /24 spread over its hosts: no host is heavy, the /24 is.
func lateFlood(r *rand.Rand, n int) []string {
	x := make([]string, n)
	for i := range x {
		if i < n*7/10 {
			x[i] = ipv4(r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256))
		} else {
			x[i] = ipv4(203, 0, 113, r.IntN(256))
		}
	}
	return x
}

// underHosts has hosts of one /24 each just under 5%, their /24 far over,
// plus noise, shuffled.
func underHosts(r *rand.Rand, n int) []string {
	x := make([]string, 0, n)
	for h := range 8 {
		for range n * 49 / 1000 {
			x = append(x, ipv4(198, 51, 100, h))
		}
	}
	for len(x) < n {
		x = append(x, ipv4(r.IntN(256), r.IntN(256), r.IntN(256), r.IntN(256)))
	}
	r.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
	return x
}

func deepPaths(r *rand.Rand, n int) []string {
	x := make([]string, n)
	var b strings.Builder
	for i := range x {
		b.Reset()
		depth := r.IntN(12)
		for range depth {
			fmt.Fprintf(&b, "/s%d", zipf(r, 4))
		}
		if depth == 0 || r.IntN(10) == 0 {
			b.WriteString("/")
		}
		if r.IntN(5) == 0 {
			b.WriteString("?q=1")
		}
		x[i] = b.String()
	}
	return x
}

func randomIPv6(r *rand.Rand, n int) []string {
	x := make([]string, n)
	for i := range x {
		x[i] = fmt.Sprintf("2001:db8:%x:%x::%x", zipf(r, 8), r.IntN(4), zipf(r, 30))
	}
	return x
}

func dnsNames(r *rand.Rand, n int) []string {
	tlds := []string{"com", "org", "NET"}
	x := make([]string, n)
	for i := range x {
		name := fmt.Sprintf("d%d.%s", zipf(r, 10), tlds[zipf(r, 3)])
		for range r.IntN(4) {
			name = fmt.Sprintf("h%d.%s", zipf(r, 5), name)
		}
		if r.IntN(3) == 0 {
			name += "."
		}
		x[i] = name
	}
	return x
}

func TestDiscountedLossy(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 3000
	}
	type gen struct {
		name string
		h    string
		make func(*rand.Rand, int) []string
	}
	gens := []gen{
		{"random", "ipv4", randomIPv4},
		{"zipf", "ipv4", zipfIPv4},
		{"duplicates", "ipv4", duplicateIPv4},
		{"late-flood", "ipv4", lateFlood},
		{"hosts-under-support", "ipv4", underHosts},
		{"zipf-bits", "ipv4/2", zipfIPv4},
		{"deep-paths", "path/6", deepPaths},
		{"ipv6", "ipv6", randomIPv6},
		{"dns", "dns/3", dnsNames},
		{"delimited", "rdelim/3:.", dnsNames},
	}
	for _, g := range gens {
		for _, order := range []string{"arrival", "sorted", "reversed"} {
			for _, eps := range []float64{0.01, 0.002} {
				t.Run(fmt.Sprintf("%s/%s/%v", g.name, order, eps), func(t *testing.T) {
					r := rand.New(rand.NewPCG(1, uint64(len(g.name))))
					h := mustParse(t, g.h)
					items := g.make(r, n)
					switch order {
					case "sorted":
						slices.Sort(items)
					case "reversed":
						slices.Sort(items)
						slices.Reverse(items)
					}
					tr := exactCounts(t, h, items)
					levels := summarize(t, h, items, eps, 500)
					if checkAll(t, tr, levels, eps) == 0 {
						t.Fatal("no answers at all: the case tests nothing")
					}
				})
			}
		}
	}
}

// TestLateFloodFound checks the point of discounting on the late flood: the
// /24 is reported, and its /16, /8 and the root, which hold nothing else
// heavy, are not.
func TestLateFloodFound(t *testing.T) {
	h := mustParse(t, "ipv4")
	items := lateFlood(rand.New(rand.NewPCG(2, 3)), 20000)
	got, err := Discounted(h, summarize(t, h, items, 0.01, 500), int64(len(items)), 0.1, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Prefix != "203.0.113.0/24" || got[1].Prefix != "0.0.0.0/0" || got[1].Discounts != 1 {
		t.Fatalf("answer %+v, want 203.0.113.0/24 and the rest under the root", got)
	}
}

// boundsFrom makes a Level per level of tr from exact counts, with bounds
// of width up to ⌊εN⌋ placed by pick: every prefix with count above the
// absent bound is listed, and some below it.
func boundsFrom(tr *truth, eps float64, r *rand.Rand) []Level {
	e := int64(eps * float64(tr.n))
	levels := make([]Level, tr.h.Levels())
	for l := range levels {
		levels[l].Absent = r.Int64N(e + 1)
	}
	nodes := make([]node, 0, len(tr.counts))
	for nd := range tr.counts {
		nodes = append(nodes, nd)
	}
	slices.SortFunc(nodes, func(a, b node) int { return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.name, b.name)) })
	for _, nd := range nodes {
		c := tr.counts[nd]
		if c <= levels[nd.level].Absent && r.IntN(2) == 0 {
			continue
		}
		var lo, hi int64
		switch r.IntN(4) {
		case 0: // undercounted by all of εN, as lossy counting can
			lo, hi = max(0, c-e), c
		case 1: // exact low, upper bound εN over
			lo, hi = c, c+e
		case 2:
			lo, hi = c, c
		default:
			lo = max(0, c-r.Int64N(e+1))
			hi = min(lo+e, c+r.Int64N(e+1))
			hi = max(hi, c)
		}
		levels[nd.level].Candidates = append(levels[nd.level].Candidates, Candidate{Prefix: nd.name, Count: Bounds{lo, hi}})
	}
	return levels
}

func TestDiscountedWorstBounds(t *testing.T) {
	for _, g := range []struct {
		h    string
		make func(*rand.Rand, int) []string
	}{
		{"ipv4", zipfIPv4}, {"ipv4", underHosts}, {"path/6", deepPaths}, {"dns/3", dnsNames}, {"ipv6/16", randomIPv6},
	} {
		for seed := range uint64(10) {
			r := rand.New(rand.NewPCG(seed, 7))
			h := mustParse(t, g.h)
			tr := exactCounts(t, h, g.make(r, 3000))
			for _, eps := range []float64{0.01, 0.03} {
				checkAll(t, tr, boundsFrom(tr, eps, r), eps)
			}
		}
	}
}

// TestDiscountedPrecisionTight builds the worst case of the precision bound:
// a /24 whose k reported hosts are each undercounted by εN and whose own
// count is overcounted by εN is reported with a discounted count of exactly
// (s − (1+k)ε)N.
func TestDiscountedPrecisionTight(t *testing.T) {
	h := mustParse(t, "ipv4")
	const n, e, k = 2000, 20, 3 // ε = 0.01, s = 0.2: sN = 400
	var items []string
	for i := range k {
		for range 450 - e*i { // hosts of 450, 430, 410: each reported
			items = append(items, ipv4(10, 0, 0, i))
		}
	}
	// The /24 then holds sN − (1+k)·εN = 400 − 80 = 320 more on other hosts.
	for i := range 320 {
		items = append(items, ipv4(10, 0, 0, 100+i%100))
	}
	for len(items) < n {
		items = append(items, ipv4(10, 9, 9, len(items)%200))
	}
	tr := exactCounts(t, h, items)
	levels := make([]Level, h.Levels())
	for nd, c := range tr.counts {
		lo, hi := c, c+e // exact lower bounds, upper bounds εN over
		if nd.level == 0 {
			lo, hi = max(0, c-e), c // hosts undercounted by εN
		}
		levels[nd.level].Candidates = append(levels[nd.level].Candidates, Candidate{Prefix: nd.name, Count: Bounds{lo, hi}})
	}
	got, err := Discounted(h, levels, n, 0.2, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	checkDiscounted(t, tr, got, 0.2, 0.01)
	i := slices.IndexFunc(got, func(p Hitter) bool { return p.Prefix == "10.0.0.0/24" })
	if i < 0 {
		t.Fatalf("answer %+v lacks 10.0.0.0/24", got)
	}
	// The discounted count is 320 = (s − (1+k)ε)N, and Hi_D = sN.
	if p := got[i]; p.Discounts != k || p.Discounted != (Bounds{320, 400}) {
		t.Fatalf("10.0.0.0/24: %+v, want 3 discounts and [320, 400]", p)
	}
}

// TestLevelEpsilon checks that summaries kept at LevelEpsilon(ε, s_min) give
// discounted answers as precise as the heavy prefixes: (s − ε)N.
func TestLevelEpsilon(t *testing.T) {
	const eps, smin = 0.05, 0.1
	el := LevelEpsilon(eps, smin)
	if want := eps / 21; math.Abs(el-want) > 1e-15 {
		t.Fatalf("LevelEpsilon = %v, want %v", el, want)
	}
	for _, bad := range [][2]float64{{0, 0.1}, {0.1, 0.1}, {0.2, 0.1}, {0.01, 1.5}} {
		if !math.IsNaN(LevelEpsilon(bad[0], bad[1])) {
			t.Fatalf("LevelEpsilon%v is a number", bad)
		}
	}
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 11))
		h := mustParse(t, "ipv4")
		tr := exactCounts(t, h, underHosts(r, 4000))
		levels := boundsFrom(tr, el, r)
		for _, s := range []float64{smin, 0.15, 0.3} {
			got, err := Discounted(h, levels, tr.n, s, el)
			if err != nil {
				t.Fatal(err)
			}
			checkDiscounted(t, tr, got, s, el)
			for _, p := range got {
				if float64(p.Discounted.Hi)-float64(1+p.Discounts)*el*float64(tr.n) < s*float64(tr.n)-eps*float64(tr.n) {
					t.Fatalf("s=%v: %+v: precision bound below (s−ε)N", s, p)
				}
			}
		}
	}
}

func TestQueryErrors(t *testing.T) {
	h := mustParse(t, "ipv4/16")
	ok := func() []Level {
		return []Level{
			{Candidates: []Candidate{{"10.0.0.1", Bounds{50, 55}}}, Absent: 10},
			{Candidates: []Candidate{{"10.0.0.0/16", Bounds{60, 60}}}},
			{Candidates: []Candidate{{"0.0.0.0/0", Bounds{100, 100}}}},
		}
	}
	if _, err := Discounted(h, ok(), 100, 0.5, 0.1); err != nil {
		t.Fatal(err)
	}
	empty := []Level{{}, {Candidates: []Candidate{{"0.0.0.0/16", Bounds{0, 0}}}}, {}}
	if got, err := Discounted(h, empty, 0, 0.5, 0.1); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: %v, %v", got, err)
	}
	if got, err := Heavy(h, empty, 0, 0.5, 0.1); err != nil || len(got) != 0 {
		t.Fatalf("empty stream: heavy %v, %v", got, err)
	}
	for _, tc := range []struct {
		name     string
		change   func([]Level) []Level
		n        int64
		s, eps   float64
		sentinel error
	}{
		{"support at ε", nil, 100, 0.1, 0.1, ErrBounds},
		{"ε zero", nil, 100, 0.5, 0, ErrBounds},
		{"support over 1", nil, 100, 1.5, 0.1, ErrBounds},
		{"negative N", nil, -1, 0.5, 0.1, ErrBounds},
		{"levels", func(l []Level) []Level { return l[:2] }, 100, 0.5, 0.1, ErrBounds},
		{"absent", func(l []Level) []Level { l[1].Absent = 11; return l }, 100, 0.5, 0.1, ErrBounds},
		{"wide", func(l []Level) []Level { l[0].Candidates[0].Count.Hi = 61; return l }, 100, 0.5, 0.1, ErrBounds},
		{"inverted", func(l []Level) []Level { l[0].Candidates[0].Count.Lo = 56; return l }, 100, 0.5, 0.1, ErrBounds},
		{"twice", func(l []Level) []Level { l[1].Candidates = append(l[1].Candidates, l[1].Candidates[0]); return l }, 100, 0.5, 0.1, ErrBounds},
		{"bad name", func(l []Level) []Level { l[0].Candidates[0].Prefix = "10.0.0.1/32"; return l }, 100, 0.5, 0.1, ErrItem},
		{"bad root", func(l []Level) []Level { l[2].Candidates[0].Prefix = "/"; return l }, 100, 0.5, 0.1, ErrItem},
	} {
		levels := ok()
		if tc.change != nil {
			levels = tc.change(levels)
		}
		if _, err := Discounted(h, levels, tc.n, tc.s, tc.eps); !errors.Is(err, tc.sentinel) {
			t.Fatalf("%s: error %v, want %v", tc.name, err, tc.sentinel)
		}
		if tc.sentinel == ErrBounds {
			if _, err := Heavy(h, levels, tc.n, tc.s, tc.eps); !errors.Is(err, ErrBounds) {
				t.Fatalf("%s: Heavy error %v, want ErrBounds", tc.name, err)
			}
		}
	}
}
