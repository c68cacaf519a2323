package hhh

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxLevels is the most levels a hierarchy may have: the 129 of IPv6 with a
// granularity of one bit. Path, DNS and delimited hierarchies have at most
// MaxLevels−1 = 128 levels below the root.
const MaxLevels = 129

// Defaults of the hierarchies whose string form leaves them out.
const (
	// DefaultIPv4Bits is the granularity of "ipv4": a byte, levels /32,
	// /24, /16, /8 and /0.
	DefaultIPv4Bits = 8
	// DefaultIPv6Bits is the granularity of "ipv6": a nibble, 33 levels
	// from /128 to /0, which include /32, /48, /56 and /64.
	DefaultIPv6Bits = 4
	// DefaultDepth is the depth of "path", "dns" and "delim": eight
	// segments or labels below the root.
	DefaultDepth = 8
)

// Errors of the hierarchies, checked with errors.Is.
var (
	// ErrItem is wrapped by the errors for an item or a prefix that is not
	// in the hierarchy.
	ErrItem = errors.New("not in the hierarchy")
	// ErrHierarchy is wrapped by the errors for a hierarchy that cannot be
	// made: a bad granularity, depth, separator or string form.
	ErrHierarchy = errors.New("bad hierarchy")
)

type kind uint8

const (
	kindIPv4 kind = iota + 1
	kindIPv6
	kindPath
	kindDNS
	kindDelim
)

// Hierarchy is a prefix hierarchy over items: level 0 holds the items
// themselves, each higher level a coarser generalisation, and the last level,
// Levels()−1, the root, which covers every item. Each prefix at level l < L−1
// has one parent at level l+1, so the prefixes of a level partition the items
// and a prefix's count is the sum of its children's counts.
//
// The hierarchies and the names of their prefixes:
//
//   - IPv4(b), IPv6(b): addresses; level l is the /(W−l·b) prefix, W the
//     address width. Level 0 is the address as netip writes it ("10.1.2.3",
//     "2001:db8::1"), the others are prefixes with their low bits cleared
//     ("10.1.2.0/24", "2001:db8::/32", "0.0.0.0/0").
//   - Path(d): URL paths, as "/a/b/c": the query ("?…") and fragment
//     ("#…") are dropped, empty segments (a doubled or trailing slash) are
//     dropped, and segments are otherwise kept as written (no %-decoding,
//     "." and ".." not resolved). Level l keeps the first d−l segments:
//     "/a/b", "/a", and "/" at the root.
//   - DNS(d): domain names, labels counted from the right: ASCII letters
//     are lowered and a trailing dot is ignored. Level l keeps the last d−l
//     labels: "www.example.com", "example.com", "com", and "." at the root.
//   - Delimited(sep, fromRight, d): fields split by sep, kept from the left
//     (or from the right), empty fields kept as fields. Level l keeps d−l
//     fields joined by sep; the root is named sep.
//
// An item deeper than d segments, labels or fields is generalised by
// truncation: at level 0 it counts as its prefix of depth d. An item
// shallower than a level's depth is its own prefix there: "/a" is "/a" at
// levels 0 to d−1 and names the same items at each (the single item "/a")
// up to level d−2; at level d−1, "/a" is every item under /a. The pair
// (level, name) always identifies a prefix.
//
// The zero Hierarchy is not valid; make one with a constructor or Parse.
// Hierarchies are comparable values.
type Hierarchy struct {
	kind      kind
	bits      int // IP granularity
	depth     int // levels below the root
	sep       string
	fromRight bool
}

// IPv4 returns the hierarchy of IPv4 addresses with a granularity of bits,
// which must divide 32 (1, 2, 4, 8, 16 or 32): 32/bits+1 levels.
func IPv4(bits int) (Hierarchy, error) {
	if bits < 1 || bits > 32 || 32%bits != 0 {
		return Hierarchy{}, fmt.Errorf("ipv4 granularity %d bits does not divide 32: %w", bits, ErrHierarchy)
	}
	return Hierarchy{kind: kindIPv4, bits: bits, depth: 32 / bits}, nil
}

// IPv6 returns the hierarchy of IPv6 addresses with a granularity of bits,
// which must divide 128 (1, 2, 4, …, 128): 128/bits+1 levels.
func IPv6(bits int) (Hierarchy, error) {
	if bits < 1 || bits > 128 || 128%bits != 0 {
		return Hierarchy{}, fmt.Errorf("ipv6 granularity %d bits does not divide 128: %w", bits, ErrHierarchy)
	}
	return Hierarchy{kind: kindIPv6, bits: bits, depth: 128 / bits}, nil
}

// Path returns the hierarchy of URL paths down to depth segments, 1 to
// MaxLevels−1: depth+1 levels.
func Path(depth int) (Hierarchy, error) {
	if err := checkDepth(depth); err != nil {
		return Hierarchy{}, err
	}
	return Hierarchy{kind: kindPath, depth: depth, sep: "/"}, nil
}

// DNS returns the hierarchy of domain names down to depth labels, 1 to
// MaxLevels−1: depth+1 levels.
func DNS(depth int) (Hierarchy, error) {
	if err := checkDepth(depth); err != nil {
		return Hierarchy{}, err
	}
	return Hierarchy{kind: kindDNS, depth: depth, sep: ".", fromRight: true}, nil
}

// Delimited returns the hierarchy of items made of fields split by sep, a
// non-empty string of valid UTF-8, down to depth fields, 1 to MaxLevels−1:
// depth+1 levels. Fields are kept from the left, or from the right if
// fromRight is set.
func Delimited(sep string, fromRight bool, depth int) (Hierarchy, error) {
	if sep == "" || !utf8.ValidString(sep) {
		return Hierarchy{}, fmt.Errorf("delimiter %q is empty or not UTF-8: %w", sep, ErrHierarchy)
	}
	if err := checkDepth(depth); err != nil {
		return Hierarchy{}, err
	}
	return Hierarchy{kind: kindDelim, depth: depth, sep: sep, fromRight: fromRight}, nil
}

func checkDepth(depth int) error {
	if depth < 1 || depth > MaxLevels-1 {
		return fmt.Errorf("depth %d outside 1 to %d: %w", depth, MaxLevels-1, ErrHierarchy)
	}
	return nil
}

// Parse returns the hierarchy of a string form, as String writes it or with
// its defaults left out:
//
//	ipv4[/bits]        IPv4(bits), bits DefaultIPv4Bits if left out
//	ipv6[/bits]        IPv6(bits), bits DefaultIPv6Bits if left out
//	path[/depth]       Path(depth), depth DefaultDepth if left out
//	dns[/depth]        DNS(depth)
//	delim[/depth]:sep  Delimited(sep, false, depth), sep all that follows ':'
//	rdelim[/depth]:sep Delimited(sep, true, depth)
func Parse(s string) (Hierarchy, error) {
	name, sep, isDelim := strings.Cut(s, ":")
	name, num, hasNum := strings.Cut(name, "/")
	n := 0
	if hasNum {
		var err error
		n, err = strconv.Atoi(num)
		if err != nil || strconv.Itoa(n) != num {
			return Hierarchy{}, fmt.Errorf("hierarchy %q: bad number %q: %w", s, num, ErrHierarchy)
		}
	}
	or := func(def int) int {
		if hasNum {
			return n
		}
		return def
	}
	var h Hierarchy
	var err error
	switch {
	case name == "ipv4" && !isDelim:
		h, err = IPv4(or(DefaultIPv4Bits))
	case name == "ipv6" && !isDelim:
		h, err = IPv6(or(DefaultIPv6Bits))
	case name == "path" && !isDelim:
		h, err = Path(or(DefaultDepth))
	case name == "dns" && !isDelim:
		h, err = DNS(or(DefaultDepth))
	case (name == "delim" || name == "rdelim") && isDelim:
		h, err = Delimited(sep, name == "rdelim", or(DefaultDepth))
	default:
		return Hierarchy{}, fmt.Errorf("hierarchy %q: want ipv4, ipv6, path, dns, delim:SEP or rdelim:SEP: %w", s, ErrHierarchy)
	}
	if err != nil {
		return Hierarchy{}, fmt.Errorf("hierarchy %q: %w", s, err)
	}
	return h, nil
}

// String returns h's string form with every parameter: "ipv4/8", "ipv6/4",
// "path/8", "dns/8", "delim/8:," or "rdelim/8:.". Parse(h.String()) is h.
func (h Hierarchy) String() string {
	switch h.kind {
	case kindIPv4:
		return "ipv4/" + strconv.Itoa(h.bits)
	case kindIPv6:
		return "ipv6/" + strconv.Itoa(h.bits)
	case kindPath:
		return "path/" + strconv.Itoa(h.depth)
	case kindDNS:
		return "dns/" + strconv.Itoa(h.depth)
	case kindDelim:
		name := "delim/"
		if h.fromRight {
			name = "rdelim/"
		}
		return name + strconv.Itoa(h.depth) + ":" + h.sep
	}
	return "invalid"
}

// MarshalText returns h.String(), for configurations and checkpoints.
func (h Hierarchy) MarshalText() ([]byte, error) {
	if h.kind == 0 {
		return nil, fmt.Errorf("marshal zero hierarchy: %w", ErrHierarchy)
	}
	return []byte(h.String()), nil
}

// UnmarshalText sets h to Parse(text).
func (h *Hierarchy) UnmarshalText(text []byte) error {
	p, err := Parse(string(text))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// Levels returns the number of levels, root included: 0 for the zero
// Hierarchy.
func (h Hierarchy) Levels() int {
	if h.kind == 0 {
		return 0
	}
	return h.depth + 1
}

// Check reports whether item is in the hierarchy: nil, or an error wrapping
// ErrItem that says why ("300.1.2.3" is not an IPv4 address, a path must
// start with "/", a DNS label must not be empty or longer than 63 bytes).
func (h Hierarchy) Check(item string) error {
	_, err := h.AppendPrefixes(nil, item)
	return err
}

// Prefixes returns the Levels() prefixes of item, from level 0 (the item,
// in its canonical form) to the root. See AppendPrefixes.
func (h Hierarchy) Prefixes(item string) ([]string, error) {
	return h.AppendPrefixes(make([]string, 0, h.Levels()), item)
}

// AppendPrefixes appends the Levels() prefixes of item to dst, from level 0
// to the root, and returns the extended slice; on error it returns dst
// unchanged and an error wrapping ErrItem (ErrHierarchy for the zero Hierarchy). The prefixes share one string:
// for a path, DNS name or delimited item already in canonical form they are
// substrings of item and nothing is allocated but dst's growth; an address
// costs one allocation.
func (h Hierarchy) AppendPrefixes(dst []string, item string) ([]string, error) {
	switch h.kind {
	case kindIPv4, kindIPv6:
		a, err := h.parseAddr(item)
		if err != nil {
			return dst, err
		}
		return h.appendIP(dst, a), nil
	case kindPath, kindDNS, kindDelim:
		canon, err := h.canon(item)
		if err != nil {
			return dst, err
		}
		return h.appendFields(dst, canon), nil
	}
	return dst, fmt.Errorf("item %q: zero hierarchy: %w", item, ErrHierarchy)
}

// Parent returns the parent of prefix, a canonical prefix name at level, one
// level up: Prefixes(item)[level+1] for every item with
// Prefixes(item)[level] = prefix. An item shallower than the level above is
// its own parent. It fails with an error wrapping ErrItem if prefix is not a
// name of that level, and for the root.
func (h Hierarchy) Parent(prefix string, level int) (string, error) {
	if level < 0 || level >= h.Levels()-1 {
		return "", fmt.Errorf("parent of %q at level %d of %s: no such level or root: %w", prefix, level, h, ErrItem)
	}
	switch h.kind {
	case kindIPv4, kindIPv6:
		p, err := h.parsePrefix(prefix, level)
		if err != nil {
			return "", err
		}
		q, _ := p.Addr().Prefix(p.Bits() - h.bits)
		return q.String(), nil
	}
	d, err := h.checkName(prefix, level)
	if err != nil {
		return "", err
	}
	if d > h.depth-level-1 {
		return h.dropField(prefix, d), nil
	}
	return prefix, nil
}

// checkPrefix checks that prefix is a canonical name at level.
func (h Hierarchy) checkPrefix(prefix string, level int) error {
	if level < 0 || level >= h.Levels() {
		return fmt.Errorf("prefix %q: no level %d in %s: %w", prefix, level, h, ErrItem)
	}
	var err error
	switch h.kind {
	case kindIPv4, kindIPv6:
		_, err = h.parsePrefix(prefix, level)
	default:
		_, err = h.checkName(prefix, level)
	}
	return err
}

// leafCopy reports whether the prefix (name, level), level > 0, holds the
// same items as (name, level−1): an item shallower than the level's depth,
// carried up unchanged. Its caller has checked name.
func (h Hierarchy) leafCopy(name string, level int) bool {
	if level == 0 || h.kind == kindIPv4 || h.kind == kindIPv6 {
		return false
	}
	return h.fields(name) < h.depth-level
}

// parseAddr parses an address item of h's family.
func (h Hierarchy) parseAddr(item string) (netip.Addr, error) {
	family := "IPv4"
	if h.kind == kindIPv6 {
		family = "IPv6"
	}
	a, err := netip.ParseAddr(item)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("item %q is not an %s address (%v): %w", item, family, err, ErrItem)
	}
	if h.kind == kindIPv4 && !a.Is4() || h.kind == kindIPv6 && (!a.Is6() || a.Zone() != "") {
		return netip.Addr{}, fmt.Errorf("item %q is not an %s address without a zone: %w", item, family, ErrItem)
	}
	return a, nil
}

// parsePrefix parses the canonical name of an address prefix at level.
func (h Hierarchy) parsePrefix(name string, level int) (netip.Prefix, error) {
	bits := h.depth*h.bits - level*h.bits
	if level == 0 {
		a, err := h.parseAddr(name)
		if err != nil || a.String() != name {
			return netip.Prefix{}, fmt.Errorf("prefix %q is not a canonical address of %s: %w", name, h, ErrItem)
		}
		return netip.PrefixFrom(a, bits), nil
	}
	p, err := netip.ParsePrefix(name)
	if err != nil || p.Bits() != bits || p.Masked() != p || p.String() != name ||
		p.Addr().Is4() != (h.kind == kindIPv4) {
		return netip.Prefix{}, fmt.Errorf("prefix %q is not a canonical /%d prefix of %s: %w", name, bits, h, ErrItem)
	}
	return p, nil
}

// appendIP appends the prefixes of address a, written into one string.
func (h Hierarchy) appendIP(dst []string, a netip.Addr) []string {
	var buf [1024]byte
	b := a.AppendTo(buf[:0])
	end := len(b)
	for l := 1; l <= h.depth; l++ {
		p, _ := a.Prefix((h.depth - l) * h.bits)
		b = p.AppendTo(b)
	}
	s := string(b)
	dst = append(dst, s[:end])
	for l := 1; l <= h.depth; l++ {
		// A prefix ends after the digits of its length, which follow the
		// only slash in it.
		start := end
		end += strings.IndexByte(s[end:], '/') + 1 + decimalLen((h.depth-l)*h.bits)
		dst = append(dst, s[start:end])
	}
	return dst
}

// decimalLen returns the number of decimal digits of n, 0 ≤ n ≤ 128.
func decimalLen(n int) int {
	switch {
	case n < 10:
		return 1
	case n < 100:
		return 2
	}
	return 3
}

// canon returns item in canonical form: a path with its query, fragment
// and empty segments dropped; a DNS name lowered, without a trailing dot.
func (h Hierarchy) canon(item string) (string, error) {
	if item == "" || !utf8.ValidString(item) {
		return "", fmt.Errorf("item %q is empty or not UTF-8: %w", item, ErrItem)
	}
	switch h.kind {
	case kindPath:
		if i := strings.IndexAny(item, "?#"); i >= 0 {
			item = item[:i]
		}
		if !strings.HasPrefix(item, "/") {
			return "", fmt.Errorf("item %q does not start with /: %w", item, ErrItem)
		}
		if !strings.Contains(item, "//") && (item == "/" || !strings.HasSuffix(item, "/")) {
			return item, nil
		}
		var b strings.Builder
		for seg := range strings.SplitSeq(item, "/") {
			if seg != "" {
				b.WriteByte('/')
				b.WriteString(seg)
			}
		}
		if b.Len() == 0 {
			return "/", nil
		}
		return b.String(), nil
	case kindDNS:
		if item == "." {
			return item, nil
		}
		item = strings.TrimSuffix(item, ".")
		if item == "" || strings.HasSuffix(item, ".") {
			return "", fmt.Errorf("item %q has a DNS label not of 1 to 63 bytes: %w", item, ErrItem)
		}
		upper := false
		for rest := item; rest != ""; {
			label, after, _ := strings.Cut(rest, ".")
			if label == "" || len(label) > 63 {
				return "", fmt.Errorf("item %q has a DNS label not of 1 to 63 bytes: %w", item, ErrItem)
			}
			for i := 0; i < len(label); i++ {
				upper = upper || ('A' <= label[i] && label[i] <= 'Z')
			}
			rest = after
		}
		if upper {
			item = strings.Map(func(r rune) rune {
				if 'A' <= r && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, item)
		}
		return item, nil
	}
	return item, nil
}

// root returns the name of the root of a path, DNS or delimited hierarchy.
func (h Hierarchy) root() string {
	return h.sep
}

// fields returns the number of segments, labels or fields of a canonical
// name below the root.
func (h Hierarchy) fields(name string) int {
	switch h.kind {
	case kindPath:
		if name == "/" {
			return 0
		}
		return strings.Count(name, "/")
	case kindDNS:
		if name == "." {
			return 0
		}
		return strings.Count(name, ".") + 1
	}
	return strings.Count(name, h.sep) + 1
}

// truncate returns the prefix of canonical name made of its first (or
// last, from the right) k fields, or the root for k = 0.
func (h Hierarchy) truncate(name string, k int) string {
	if k == 0 {
		return h.root()
	}
	if h.kind == kindPath {
		// "/a/b/c": the (k+1)-th slash ends the prefix of k segments.
		i := 0
		for range k {
			j := strings.IndexByte(name[i+1:], '/')
			if j < 0 {
				return name
			}
			i += 1 + j
		}
		return name[:i]
	}
	if h.fromRight {
		i := len(name)
		for n := 0; n < k; n++ {
			j := strings.LastIndex(name[:i], h.sep)
			if j < 0 {
				return name
			}
			i = j
			if n == k-1 {
				return name[j+len(h.sep):]
			}
		}
		return name
	}
	i := 0
	for n := 0; n < k; n++ {
		j := strings.Index(name[i:], h.sep)
		if j < 0 {
			return name
		}
		if n == k-1 {
			return name[:i+j]
		}
		i += j + len(h.sep)
	}
	return name
}

// appendFields appends the prefixes of a canonical path, DNS name or
// delimited item: going up a level drops at most one field, so each level
// costs one scan of a field.
func (h Hierarchy) appendFields(dst []string, canon string) []string {
	d := h.fields(canon)
	k := min(d, h.depth)
	name := h.truncate(canon, k)
	for l := 0; l <= h.depth; l++ {
		if want := min(d, h.depth-l); want < k {
			name, k = h.dropField(name, k), want
		}
		dst = append(dst, name)
	}
	return dst
}

// dropField returns the prefix of canonical name, of k ≥ 1 fields, with one
// field fewer.
func (h Hierarchy) dropField(name string, k int) string {
	switch {
	case k == 1:
		return h.root()
	case h.kind == kindPath:
		return name[:strings.LastIndexByte(name, '/')]
	case h.fromRight:
		return name[strings.Index(name, h.sep)+len(h.sep):]
	}
	return name[:strings.LastIndex(name, h.sep)]
}

// checkName checks that name is a canonical name at level of a path, DNS or
// delimited hierarchy and returns its number of fields.
func (h Hierarchy) checkName(name string, level int) (int, error) {
	if level == h.depth {
		if name != h.root() {
			return 0, fmt.Errorf("prefix %q at the root of %s: %w", name, h, ErrItem)
		}
		return 0, nil
	}
	if h.kind == kindDelim && name == "" && level > 0 {
		return 1, nil // the empty first (or last) field of an item
	}
	canon, err := h.canon(name)
	if err != nil {
		return 0, err
	}
	d := h.fields(canon)
	if canon != name || d > h.depth-level {
		return 0, fmt.Errorf("prefix %q is not a canonical name at level %d of %s: %w", name, level, h, ErrItem)
	}
	return d, nil
}
