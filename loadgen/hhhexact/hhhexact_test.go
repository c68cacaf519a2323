package hhhexact

import (
	"errors"
	"testing"

	"streamd/hhh"
	"streamd/synth"
)

// exactLevels returns levels whose candidates are every prefix with its
// exact count.
func exactLevels(c *Counts) []hhh.Level {
	levels := make([]hhh.Level, c.h.Levels())
	for nd, n := range c.counts {
		levels[nd.level].Candidates = append(levels[nd.level].Candidates, hhh.Candidate{Prefix: nd.prefix, Count: hhh.Bounds{Lo: n, Hi: n}})
	}
	return levels
}

// TestChecksExactAnswers: answers from exact counts pass, and answers
// with a hitter left out or a bound moved fail.
func TestChecksExactAnswers(t *testing.T) {
	h, _ := hhh.Parse("ipv4")
	list, err := synth.Addresses(synth.AddrSpec{Seed: 3, FloodShare: 0.3, FloodAfter: 5000}, 10000)
	if err != nil {
		t.Fatal(err)
	}
	c := New(h)
	for _, x := range list {
		if err := c.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Add("10.0.0"); !errors.Is(err, hhh.ErrItem) {
		t.Fatalf("Add of a bad address = %v, want hhh.ErrItem", err)
	}
	if c.N() != int64(len(list)) || c.Count(1, "203.0.113.0/24") < 1000 {
		t.Fatalf("N = %d, flood /24 counts %d", c.N(), c.Count(1, "203.0.113.0/24"))
	}
	const s, eps = 0.05, 0.001
	levels := exactLevels(c)
	heavy, err := hhh.Heavy(h, levels, c.N(), s, eps)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckHeavy(heavy, s, eps); err != nil {
		t.Fatal(err)
	}
	disc, err := hhh.Discounted(h, levels, c.N(), s, eps)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckDiscounted(disc, s, eps, eps); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range disc {
		found = found || x.Prefix == "203.0.113.0/24"
	}
	if !found {
		t.Fatalf("the flood's /24 is not among the discounted answer %v", disc)
	}
	if err := c.CheckHeavy(heavy[1:], s, eps); err == nil {
		t.Errorf("CheckHeavy of an answer without %v passed", heavy[0])
	}
	if err := c.CheckDiscounted(disc[:len(disc)-1], s, eps, eps); err == nil {
		t.Errorf("CheckDiscounted of an answer without %v passed", disc[len(disc)-1])
	}
	disc[0].Discounted.Hi = disc[0].Discounted.Lo - 1
	if err := c.CheckDiscounted(disc, s, eps, eps); err == nil {
		t.Errorf("CheckDiscounted of a wrong bound passed")
	}
}
