package feed

import (
	"cmp"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for _, name := range []string{"a", "latency", "A.b_c-d:e/f0123456789", strings.Repeat("x", MaxNameLen), "..", "/", "0"} {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v", name, err)
		}
		if !IsValidName(name) || !IsValidName([]byte(name)) {
			t.Errorf("IsValidName(%q) = false", name)
		}
	}
	for _, name := range []string{"", strings.Repeat("x", MaxNameLen+1), "a b", "a\tb", "a\n", "é", "a!", "a#", "a,b", "a\x00", "a\\b", "a\x7f"} {
		if err := ValidName(name); err == nil {
			t.Errorf("ValidName(%q) = nil", name)
		}
		if IsValidName(name) || IsValidName([]byte(name)) {
			t.Errorf("IsValidName(%q) = true", name)
		}
	}
}

// TestSourceCompare: topic first, then partition.
func TestSourceCompare(t *testing.T) {
	sorted := []Source{{Topic: "a", Partition: 2}, {Topic: "a", Partition: 10}, {Topic: "b", Partition: 0}, {Topic: "b", Partition: 1}}
	for i, a := range sorted {
		for j, b := range sorted {
			if got, want := a.Compare(b), cmp.Compare(i, j); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestReasonsListed: every reason is listed once, the hierarchy's too.
func TestReasonsListed(t *testing.T) {
	seen := map[Reason]bool{}
	for _, r := range Reasons() {
		if seen[r] {
			t.Errorf("reason %q listed twice", r)
		}
		seen[r] = true
	}
	if !seen[ReasonNotInHierarchy] {
		t.Errorf("Reasons() = %v, without %q", Reasons(), ReasonNotInHierarchy)
	}
}

func TestItemReason(t *testing.T) {
	for _, tc := range []struct {
		item string
		want Reason
	}{
		{"ok", ""},
		{"/a b/c", ""},
		{"", ReasonEmptyItem},
		{strings.Repeat("x", 1024), ""},
		{strings.Repeat("x", 1025), ReasonItemTooLong},
		{"a\xffb", ReasonBadUTF8},
	} {
		if got := ItemReason([]byte(tc.item)); got != tc.want {
			t.Errorf("ItemReason(%.20q) = %q, want %q", tc.item, got, tc.want)
		}
	}
}
