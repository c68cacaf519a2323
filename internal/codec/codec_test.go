package codec

import (
	"bytes"
	"testing"
)

// TestLengthSections checks that a section written in place between
// BeginLength and EndLength is the bytes AppendBytes writes for the same
// payload, for lengths of every uvarint size, after bytes already there.
func TestLengthSections(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 16383, 16384, 70000, 3 << 20} {
		payload := bytes.Repeat([]byte{0xa5, 0x5a, 7}, n/3+1)[:n]
		want := AppendBytes([]byte("head"), payload)
		got, at := BeginLength([]byte("head"))
		got = append(got, payload...)
		got = EndLength(got, at)
		if !bytes.Equal(got, want) {
			t.Errorf("a section of %d bytes: %d bytes, want %d as AppendBytes writes", n, len(got), len(want))
		}
		r := NewReader(got[len("head"):])
		if b := r.Bytes("payload", n); !bytes.Equal(b, payload) || r.Remaining() != 0 {
			t.Errorf("a section of %d bytes reads back as %d bytes, %d left", n, len(b), r.Remaining())
		}
	}
}

// TestNext checks that Next reads the bytes asked for, and fails, reading
// nothing, when fewer are left.
func TestNext(t *testing.T) {
	r := NewReader([]byte{1, 2, 3, 4, 5})
	if b := r.Next("first", 3); !bytes.Equal(b, []byte{1, 2, 3}) {
		t.Fatalf("Next(3) = %v", b)
	}
	if b := r.Next("none", 0); len(b) != 0 || r.Err() != nil {
		t.Fatalf("Next(0) = %v, %v", b, r.Err())
	}
	if b := r.Next("too many", 3); b != nil || r.Err() == nil {
		t.Fatalf("Next(3) with 2 left = %v, %v; want nil and an error", b, r.Err())
	}
	if b := r.Next("after", 1); b != nil {
		t.Fatalf("Next after a failure = %v", b)
	}
}
