package synth

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
)

// AddrSpec describes a synthetic trace of IPv4 addresses for hierarchical
// heavy hitters: each of the first three bytes is drawn from a Zipf
// distribution over 256 values (so a few /8s carry much of the trace, a
// few /16s much of each /8, a few /24s much of each /16), the last byte
// uniformly; and from item FloodAfter on, a share FloodShare of the items
// come from one /24, FloodNet, each from a uniform host of it: a flood
// that no single address of it makes heavy.
type AddrSpec struct {
	Seed uint64
	// S is the Zipf exponent of each byte (> 1; default 1.2).
	S float64
	// FloodShare is the share of the items from FloodNet once the flood
	// has started, in [0, 1); 0 means no flood.
	FloodShare float64
	// FloodAfter is the number of items before the flood starts.
	FloodAfter int64
	// FloodNet is the /24 of the flood (default 203.0.113.0/24).
	FloodNet netip.Prefix
}

// DefaultFloodNet is the default /24 of a flood: TEST-NET-3 (RFC 5737).
var DefaultFloodNet = netip.MustParsePrefix("203.0.113.0/24")

// AddrSource draws the addresses of an AddrSpec, one at a time.
type AddrSource struct {
	spec  AddrSpec
	rng   *rand.Rand
	zipf  [3]*rand.Zipf
	perm  [3][256]byte // the byte of each Zipf rank, per position
	drawn int64
}

// NewAddrSource returns an AddrSource for spec.
func NewAddrSource(spec AddrSpec) (*AddrSource, error) {
	if spec.S == 0 {
		spec.S = 1.2
	}
	if !(spec.S > 1) {
		return nil, fmt.Errorf("synth: zipf exponent %v must be above 1", spec.S)
	}
	if !(spec.FloodShare >= 0 && spec.FloodShare < 1) {
		return nil, fmt.Errorf("synth: flood share %v outside [0, 1)", spec.FloodShare)
	}
	if spec.FloodAfter < 0 {
		return nil, fmt.Errorf("synth: flood after %d items: must not be negative", spec.FloodAfter)
	}
	if !spec.FloodNet.IsValid() {
		spec.FloodNet = DefaultFloodNet
	}
	if !spec.FloodNet.Addr().Is4() || spec.FloodNet.Bits() != 24 {
		return nil, fmt.Errorf("synth: flood network %v is not an IPv4 /24", spec.FloodNet)
	}
	spec.FloodNet = spec.FloodNet.Masked()
	s := &AddrSource{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))}
	for i := range s.zipf {
		s.zipf[i] = rand.NewZipf(s.rng, spec.S, 1, 255)
		for j := range s.perm[i] {
			s.perm[i][j] = byte(j)
		}
		s.rng.Shuffle(256, func(a, b int) { s.perm[i][a], s.perm[i][b] = s.perm[i][b], s.perm[i][a] })
	}
	return s, nil
}

// Next returns the next address, as netip writes it.
func (s *AddrSource) Next() string {
	s.drawn++
	if s.spec.FloodShare > 0 && s.drawn > s.spec.FloodAfter && s.rng.Float64() < s.spec.FloodShare {
		a := s.spec.FloodNet.Addr().As4()
		a[3] = byte(s.rng.IntN(256))
		return netip.AddrFrom4(a).String()
	}
	var a [4]byte
	for i := range 3 {
		a[i] = s.perm[i][s.zipf[i].Uint64()]
	}
	a[3] = byte(s.rng.IntN(256))
	return netip.AddrFrom4(a).String()
}

// Addresses returns the first n addresses of spec.
func Addresses(spec AddrSpec, n int) ([]string, error) {
	src, err := NewAddrSource(spec)
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		out[i] = src.Next()
	}
	return out, nil
}
