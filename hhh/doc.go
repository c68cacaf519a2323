// Package hhh finds hierarchical heavy hitters (HHH): the prefixes of a
// hierarchy — IP subnets, URL path prefixes, DNS domains — that carry a
// share s of a stream, after Cormode, Korn, Muthukrishnan and Srivastava,
// "Finding hierarchical heavy hitters in data streams" (VLDB 2003), with the
// output definitions of Mitzenmacher, Steinke and Thaler, "Hierarchical heavy
// hitters with the Space Saving algorithm" (ALENEX 2012). As Govindaraju,
// Raghuvanshi and Manocha suggest (SIGMOD 2005, §5.4), the counts come from
// one ε-approximate frequency summary per level of the hierarchy, each fed
// with that level's prefix of every item (Hierarchy.Prefixes); this package
// turns their answers into the HHHs. It is a library: no goroutines, no I/O.
//
// # Input
//
// For each level l, a Level: candidate prefixes p with bounds
// Lo_p ≤ c_p ≤ Hi_p on their counts, Hi_p − Lo_p ≤ εN, and a bound
// Absent_l ≤ εN on the count of every prefix not listed. A lossy-counting
// summary (streamd/lossy) gives its entries (Count, Count+Delta) and Absent;
// a sliding-window summary gives the same over the last n items, with n for
// N. Support s and ε must satisfy 0 < ε < s ≤ 1, so sN > Absent_l.
//
// # Heavy prefixes
//
// Heavy reports, at every level, the prefixes with Hi_p ≥ sN: every prefix
// with c_p ≥ sN (a prefix not listed has c_p ≤ Absent_l < sN) and none with
// c_p < (s−ε)N (c_p ≥ Lo_p ≥ Hi_p − εN). This is the HHH query of the SIGMOD
// 2005 paper. A heavy /24 makes its /16, /8 and /0 heavy too; the discounted
// answer says which of them carry traffic of their own.
//
// # Discounted heavy hitters
//
// For a set P of prefixes, the discounted count of a prefix p with respect
// to P is D_P(p) = c_p − Σ_{q ∈ C(p)} c_q, where C(p) are p's closest
// descendants in P (those in P below p with no other member of P between);
// they are disjoint subtrees, so D_P(p) counts the items under p that are
// under no member of P below p, and D_P(p) ≥ 0. Discounted computes P level
// by level from the items up: at level l, where the members of P below are
// known, it bounds D_P(p) for every listed p with
//
//	Lo_D(p) = max(0, Lo_p − Σ_{q∈C(p)} Hi_q),  Hi_D(p) = Hi_p − Σ_{q∈C(p)} Lo_q
//
// and puts p in P when Hi_D(p) ≥ sN. Then, with k_p = |C(p)| (Discounts):
//
//  1. Bounds: Lo_p ≤ c_p ≤ Hi_p and Lo_D(p) ≤ D_P(p) ≤ Hi_D(p) for every
//     p in P.
//  2. Coverage: every prefix p not in P has D_P(p) < sN. If p is listed,
//     Hi_D(p) < sN and D_P(p) ≤ Hi_D(p). If not, D_P(p) ≤ c_p ≤ Absent < sN.
//     (An item shallower than a level is that level's prefix too, with the
//     same items as one level down: such a copy is never reported, as its
//     D_P is 0 if the copy below is in P and the D_P of that copy otherwise.)
//  3. Precision: every p in P has
//     D_P(p) ≥ Hi_D(p) − (1+k_p)εN ≥ (s − (1+k_p)ε)N, because
//     c_p ≥ Hi_p − εN and c_q ≤ Lo_q + εN for each of the k_p terms.
//  4. k_p ≤ ⌊c_p/((s−ε)N)⌋ ≤ ⌊1/(s−ε)⌋: each q in C(p) is in P, so
//     Hi_q ≥ Hi_D(q) ≥ sN and c_q ≥ Lo_q ≥ (s−ε)N, and the k_p disjoint
//     subtrees hold at most the c_p items under p. By the same argument a
//     level holds at most ⌊1/(s−ε)⌋ members of P, so |P| ≤ L·⌊1/(s−ε)⌋.
//
// The precision bound is tight for bounds that meet their worst case:
// nothing in per-level summaries ties the undercounts of p's descendants
// together, and lossy counting can undercount each of ⌊1/(s−ε)⌋ disjoint
// heavy prefixes by nearly εN at once. So with per-level error ε the
// discounted answer is only as precise as (s − (1 + ⌊1/(s−ε)⌋)ε)N; each
// answer's own figure is Hi_D − (1+k_p)εN, with k_p usually 0 to 2. For
// the precision (s − ε)N of Heavy at every support s ≥ s_min, the daemon
// must keep each level at error LevelEpsilon(ε, s_min) =
// ε/(1 + ⌊1/(s_min−ε)⌋): then (1+k_p)·ε_l ≤ (1 + ⌊1/(s_min−ε)⌋)·ε_l = ε,
// since s − ε_l ≥ s_min − ε.
//
// # Two dimensions
//
// A 2-D hierarchy (source × destination) would keep one summary per pair of
// levels, L² in all, and a prefix pair would have two parents. The
// discounted count then needs inclusion–exclusion over the closest
// descendants' pairwise greatest lower bounds (Mitzenmacher et al. §4), and
// its error grows with their number as in point 3. This package does not do
// it.
package hhh
