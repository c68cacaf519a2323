package hhh

import (
	"errors"
	"slices"
	"testing"
)

func mustParse(t testing.TB, s string) Hierarchy {
	t.Helper()
	h, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPrefixes(t *testing.T) {
	for _, tc := range []struct {
		h, item string
		want    []string
	}{
		{"ipv4", "10.1.2.3", []string{"10.1.2.3", "10.1.2.0/24", "10.1.0.0/16", "10.0.0.0/8", "0.0.0.0/0"}},
		{"ipv4/16", "192.168.7.9", []string{"192.168.7.9", "192.168.0.0/16", "0.0.0.0/0"}},
		{"ipv4/32", "1.2.3.4", []string{"1.2.3.4", "0.0.0.0/0"}},
		{"ipv4/4", "255.255.255.255", []string{"255.255.255.255", "255.255.255.240/28", "255.255.255.0/24",
			"255.255.240.0/20", "255.255.0.0/16", "255.240.0.0/12", "255.0.0.0/8", "240.0.0.0/4", "0.0.0.0/0"}},
		{"ipv6/16", "2001:DB8::1", []string{"2001:db8::1", "2001:db8::/112", "2001:db8::/96", "2001:db8::/80",
			"2001:db8::/64", "2001:db8::/48", "2001:db8::/32", "2001::/16", "::/0"}},
		{"ipv6/64", "2001:db8:1:2:3:4:5:6", []string{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64", "::/0"}},
		{"path/3", "/a/b/c", []string{"/a/b/c", "/a/b", "/a", "/"}},
		{"path/3", "/a/b/c/d/e?x=1", []string{"/a/b/c", "/a/b", "/a", "/"}},
		{"path/3", "/a//b/#frag", []string{"/a/b", "/a/b", "/a", "/"}},
		{"path/3", "/a?q", []string{"/a", "/a", "/a", "/"}},
		{"path/2", "/", []string{"/", "/", "/"}},
		{"path/2", "//?", []string{"/", "/", "/"}},
		{"dns/3", "WWW.Example.COM.", []string{"www.example.com", "example.com", "com", "."}},
		{"dns/2", "a.b.example.com", []string{"example.com", "com", "."}},
		{"dns/3", "localhost", []string{"localhost", "localhost", "localhost", "."}},
		{"dns/1", ".", []string{".", "."}},
		{"delim/3:,", "a,b,c,d", []string{"a,b,c", "a,b", "a", ","}},
		{"delim/3:,", ",,x", []string{",,x", ",", "", ","}},
		{"rdelim/2:::", "x::y::z", []string{"y::z", "z", "::"}},
		{"delim/2:→", "a→b", []string{"a→b", "a", "→"}},
	} {
		h := mustParse(t, tc.h)
		got, err := h.Prefixes(tc.item)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.h, tc.item, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%s %q: got %q, want %q", tc.h, tc.item, got, tc.want)
		}
		checkChain(t, h, got)
	}
}

// checkChain checks that prefixes, of one item, are each a canonical name of
// their level whose Parent is the next.
func checkChain(t testing.TB, h Hierarchy, prefixes []string) {
	t.Helper()
	if len(prefixes) != h.Levels() {
		t.Fatalf("%s: %d prefixes, want %d", h, len(prefixes), h.Levels())
	}
	for l, p := range prefixes {
		if err := h.checkPrefix(p, l); err != nil {
			t.Fatalf("%s: level %d: %v", h, l, err)
		}
		if l == len(prefixes)-1 {
			if _, err := h.Parent(p, l); !errors.Is(err, ErrItem) {
				t.Fatalf("%s: parent of root %q: %v", h, p, err)
			}
			continue
		}
		parent, err := h.Parent(p, l)
		if err != nil {
			t.Fatalf("%s: parent of %q at %d: %v", h, p, l, err)
		}
		if parent != prefixes[l+1] {
			t.Fatalf("%s: parent of %q at %d is %q, want %q", h, p, l, parent, prefixes[l+1])
		}
		if l > 0 && h.leafCopy(p, l) && p != prefixes[l-1] {
			t.Fatalf("%s: %q at %d is a leaf copy of a different name", h, p, l)
		}
	}
}

func TestBadItems(t *testing.T) {
	for _, tc := range []struct{ h, item string }{
		{"ipv4", "300.1.2.3"},
		{"ipv4", "10.1.2"},
		{"ipv4", "::1"},
		{"ipv4", "10.1.2.0/24"},
		{"ipv4", ""},
		{"ipv6", "1.2.3.4"},
		{"ipv6", "fe80::1%eth0"},
		{"ipv6", "2001:db8::g"},
		{"path", "a/b"},
		{"path", ""},
		{"path", "?/a"},
		{"path", "/a\xff"},
		{"dns", "a..b"},
		{"dns", ".com"},
		{"dns", "a.b.."},
		{"dns", string(make([]byte, 64)) + ".com"},
		{"delim:,", ""},
	} {
		if _, err := mustParse(t, tc.h).Prefixes(tc.item); !errors.Is(err, ErrItem) {
			t.Fatalf("%s %q: error %v, want ErrItem", tc.h, tc.item, err)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		levels   int
	}{
		{"ipv4", "ipv4/8", 5},
		{"ipv4/1", "ipv4/1", 33},
		{"ipv6", "ipv6/4", 33},
		{"ipv6/1", "ipv6/1", 129},
		{"ipv6/128", "ipv6/128", 2},
		{"path", "path/8", 9},
		{"path/128", "path/128", 129},
		{"dns/3", "dns/3", 4},
		{"delim:,", "delim/8:,", 9},
		{"rdelim/2::/", "rdelim/2::/", 3},
	} {
		h, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if h.String() != tc.want || h.Levels() != tc.levels {
			t.Fatalf("%q: %s with %d levels, want %s with %d", tc.in, h, h.Levels(), tc.want, tc.levels)
		}
		if h2 := mustParse(t, h.String()); h2 != h {
			t.Fatalf("%q: round trip gives %v", tc.in, h2)
		}
		text, err := h.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var h3 Hierarchy
		if err := h3.UnmarshalText(text); err != nil || h3 != h {
			t.Fatalf("%q: text round trip gives %v, %v", tc.in, h3, err)
		}
	}
	for _, bad := range []string{"", "ipv4/3", "ipv4/0", "ipv4/64", "ipv6/3", "ipv6/256", "path/0", "path/129",
		"path/08", "path/+8", "dns/x", "delim", "delim:", "rdelim/2:", "ipv4:x", "url", "delim/1:\xff"} {
		if _, err := Parse(bad); !errors.Is(err, ErrHierarchy) {
			t.Fatalf("%q: error %v, want ErrHierarchy", bad, err)
		}
	}
	if _, err := (Hierarchy{}).MarshalText(); err == nil {
		t.Fatal("zero hierarchy marshalled")
	}
}

func TestBadPrefixes(t *testing.T) {
	for _, tc := range []struct {
		h, prefix string
		level     int
	}{
		{"ipv4", "10.1.2.0/24", 0},
		{"ipv4", "10.1.2.3/24", 1},
		{"ipv4", "10.1.0.0/16", 1},
		{"ipv4", "0.0.0.0/0", 4},
		{"ipv6", "2001:db8::/32", 23},
		{"ipv6", "2001:DB8::/32", 24},
		{"path/3", "/a/b/c", 1},
		{"path/3", "/a/", 1},
		{"path/3", "x", 0},
		{"path/3", "/", 3},
		{"dns/3", "Example.com", 1},
		{"dns/3", "a.b.c", 1},
		{"delim/2:,", "a,b", 1},
	} {
		if _, err := mustParse(t, tc.h).Parent(tc.prefix, tc.level); !errors.Is(err, ErrItem) {
			t.Fatalf("%s: parent of %q at %d: error %v, want ErrItem", tc.h, tc.prefix, tc.level, err)
		}
	}
}

func FuzzPrefixes(f *testing.F) {
	for _, s := range []string{"10.1.2.3", "::ffff:1.2.3.4", "2001:db8::1", "/a//b/?c", "WWW.Example.COM.",
		",,x", "a::b::c", "/", ".", "a.b."} {
		f.Add(s)
	}
	var hs []Hierarchy
	for _, s := range []string{"ipv4", "ipv4/1", "ipv6", "ipv6/1", "path/3", "dns/3", "delim/3:,", "rdelim/2:::",
		"delim/2:/", "rdelim/3:."} {
		hs = append(hs, mustParse(f, s))
	}
	f.Fuzz(func(t *testing.T, item string) {
		for _, h := range hs {
			got, err := h.Prefixes(item)
			if err != nil {
				if !errors.Is(err, ErrItem) {
					t.Fatalf("%s %q: error %v does not wrap ErrItem", h, item, err)
				}
				continue
			}
			checkChain(t, h, got)
			// The canonical item is an item with the same prefixes.
			again, err := h.Prefixes(got[0])
			if err != nil || !slices.Equal(again, got) {
				t.Fatalf("%s %q: prefixes %q, of %q: %q, %v", h, item, got, got[0], again, err)
			}
		}
		if h, err := Parse(item); err == nil {
			if h2, err := Parse(h.String()); err != nil || h2 != h {
				t.Fatalf("hierarchy %q: %s round trips to %v, %v", item, h, h2, err)
			}
		}
	})
}
