package checkpoint

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeDelta writes data as a delta and returns its number.
func writeDelta(t *testing.T, s *Store, data string) uint64 {
	t.Helper()
	seq, err := s.WriteDelta(func(w io.Writer) error {
		_, err := io.WriteString(w, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// restoreChain restores a new store on dir and returns the contents it
// was given, bases as "base:" and deltas as "delta:" followed by the
// content, and the number restored to.
func restoreChain(t *testing.T, s *Store) ([]string, uint64, *Store) {
	t.Helper()
	r := &Store{Dir: s.Dir, Logger: s.Logger}
	var got []string
	seq, err := r.RestoreChain(func(b []byte) error {
		got = []string{"base:" + string(b)}
		return nil
	}, func(b []byte) error {
		if strings.HasPrefix(string(b), "bad") {
			return errors.New("bad delta")
		}
		got = append(got, "delta:"+string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, seq, r
}

// TestChainRestore: a restore applies the newest base and every delta
// after it, in order, and a delta written after a restore follows the
// point restored.
func TestChainRestore(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.WriteDelta(func(io.Writer) error { return nil }); err == nil {
		t.Fatal("a delta with no base to follow was written")
	}
	write(t, s, "b1")
	writeDelta(t, s, "d1")
	write(t, s, "b2")
	writeDelta(t, s, "d2")
	last := writeDelta(t, s, "d3")
	got, seq, r := restoreChain(t, s)
	if want := []string{"base:b2", "delta:d2", "delta:d3"}; !slices.Equal(got, want) || seq != last {
		t.Fatalf("restored %q to %d, want %q to %d", got, seq, want, last)
	}
	writeDelta(t, r, "d4")
	got, _, _ = restoreChain(t, s)
	if want := []string{"base:b2", "delta:d2", "delta:d3", "delta:d4"}; !slices.Equal(got, want) {
		t.Fatalf("restored %q, want %q", got, want)
	}
}

// TestDamagedDeltaStopsTheChain: a damaged delta, or one whose content does
// not restore, is set aside and the restore stops at the checkpoint before
// it: the deltas after it are never applied without it. The next delta
// follows the point restored, and a restore then takes it.
func TestDamagedDeltaStopsTheChain(t *testing.T) {
	for _, bad := range []string{"damaged", "content"} {
		t.Run(bad, func(t *testing.T) {
			s, log := newStore(t)
			write(t, s, "b")
			d1 := writeDelta(t, s, "d1")
			d2 := writeDelta(t, s, "d2")
			writeDelta(t, s, "d3")
			path := filepath.Join(s.Dir, name(d2))
			if bad == "damaged" {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				raw[len(raw)-6] ^= 1
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				s.head = d1
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if _, err := s.write(func(w io.Writer) error { _, err := io.WriteString(w, "bad"); return err }, true); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(filepath.Join(s.Dir, name(5)), path); err != nil {
					t.Fatal(err)
				}
			}
			got, seq, r := restoreChain(t, s)
			if want := []string{"base:b", "delta:d1"}; !slices.Equal(got, want) || seq != d1 {
				t.Fatalf("restored %q to %d, want %q to %d", got, seq, want, d1)
			}
			if _, err := os.Stat(path + invalid); err != nil || !strings.Contains(log.String(), name(d2)) {
				t.Errorf("the bad delta is not set aside and logged: %v\n%s", err, log)
			}
			writeDelta(t, r, "d4")
			got, _, _ = restoreChain(t, s)
			if want := []string{"base:b", "delta:d1", "delta:d4"}; !slices.Equal(got, want) {
				t.Fatalf("restored %q, want %q", got, want)
			}
		})
	}
}

// TestDamagedBaseTakesTheOlderChain: with the newest base damaged, the
// restore takes the previous base and its deltas, not the deltas after the
// damaged base.
func TestDamagedBaseTakesTheOlderChain(t *testing.T) {
	s, _ := newStore(t)
	s.MaxDeltas = 100
	write(t, s, "b1")
	d1 := writeDelta(t, s, "d1")
	b2 := write(t, s, "b2")
	// A delta following b2 written by a store that knows no other valid
	// checkpoint, so that b1 stays.
	w := &Store{Dir: s.Dir, Logger: s.Logger, head: b2}
	writeDelta(t, w, "d2")
	if err := os.WriteFile(filepath.Join(s.Dir, name(b2)), []byte("CKPT\x01junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, seq, _ := restoreChain(t, s)
	if want := []string{"base:b1", "delta:d1"}; !slices.Equal(got, want) || seq != d1 {
		t.Fatalf("restored %q to %d, want %q to %d", got, seq, want, d1)
	}
}

// TestRetentionKeepsTheBase: retention keeps the newest two restore points
// with their chains back to their bases, and the chain before the newest
// point's, which a damaged newest base falls back to; it removes an older
// chain once a newer base follows the one after it.
func TestRetentionKeepsTheBase(t *testing.T) {
	s, _ := newStore(t)
	want := []string{name(write(t, s, "b1"))}
	want = append(want, name(write(t, s, "b2")))
	for i := range 5 {
		want = append(want, name(writeDelta(t, s, "d"+string(rune('0'+i)))))
	}
	if got := files(t, s.Dir); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	chain := want[1:]
	_, _, r := restoreChain(t, s)
	b3 := write(t, r, "b3")
	if got, want := files(t, s.Dir), append(slices.Clone(chain), name(b3)); !slices.Equal(got, want) {
		t.Fatalf("after a new base, files %v, want %v", got, want)
	}
	d := writeDelta(t, r, "d")
	if got, want := files(t, s.Dir), append(slices.Clone(chain), name(b3), name(d)); !slices.Equal(got, want) {
		t.Fatalf("after a delta on the new base, files %v, want %v", got, want)
	}
	b4 := write(t, r, "b4")
	if got, want := files(t, s.Dir), []string{name(b3), name(d), name(b4)}; !slices.Equal(got, want) {
		t.Fatalf("after a third base, files %v, want %v", got, want)
	}
}

// TestDeltaDue: a new base is due after MaxDeltas deltas, or once the
// deltas take more than DeltaFraction of the base.
func TestDeltaDue(t *testing.T) {
	s, _ := newStore(t)
	s.MaxDeltas = 2
	if s.DeltaDue() {
		t.Fatal("a delta is due with no base")
	}
	write(t, s, strings.Repeat("x", 100))
	for i := range 2 {
		if !s.DeltaDue() {
			t.Fatalf("no delta due after %d deltas", i)
		}
		writeDelta(t, s, "d")
	}
	if s.DeltaDue() {
		t.Fatal("a delta is due after MaxDeltas deltas")
	}
	s.MaxDeltas = 100
	if !s.DeltaDue() {
		t.Fatal("no delta due below DeltaFraction")
	}
	writeDelta(t, s, strings.Repeat("x", 60))
	if s.DeltaDue() {
		t.Fatal("a delta is due past DeltaFraction of the base")
	}
	_, _, r := restoreChain(t, s)
	r.MaxDeltas = 100
	if r.DeltaDue() {
		t.Fatal("after a restore, a delta is due past DeltaFraction of the base")
	}
	// The fraction in force, which the daemon's bound by streams takes.
	if f := r.Fraction(); f != DefaultDeltaFraction {
		t.Errorf("Fraction %v with DeltaFraction unset, want %v", f, DefaultDeltaFraction)
	}
	r.DeltaFraction = 10
	if f := r.Fraction(); f != 10 || !r.DeltaDue() {
		t.Errorf("Fraction %v, delta due %v with DeltaFraction 10", f, r.DeltaDue())
	}
}

// TestFailedWriteTakesABase: after a write fails, the next checkpoint is
// a base, so that a file the failed write may have left is never
// preferred to newer state.
func TestFailedWriteTakesABase(t *testing.T) {
	s, _ := newStore(t)
	write(t, s, "b")
	if _, err := s.WriteDelta(func(io.Writer) error { return errors.New("disk full") }); err == nil {
		t.Fatal("a failing content wrote a delta")
	}
	if s.DeltaDue() {
		t.Fatal("a delta is due after a failed write")
	}
	write(t, s, "b2")
	if !s.DeltaDue() {
		t.Fatal("no delta due after a base")
	}
}

// TestNewestDeltaOfTwo: of two deltas following the same checkpoint (the
// older one left by a write that failed after its rename), the restore
// takes the newer.
func TestNewestDeltaOfTwo(t *testing.T) {
	s, _ := newStore(t)
	b := write(t, s, "b")
	writeDelta(t, s, "left behind")
	s.head = b
	d := writeDelta(t, s, "d")
	got, seq, _ := restoreChain(t, s)
	if want := []string{"base:b", "delta:d"}; !slices.Equal(got, want) || seq != d {
		t.Fatalf("restored %q to %d, want %q to %d", got, seq, want, d)
	}
}

// TestDamagedBaseFallsBackAfterRetention: in a directory that retention
// has pruned as a daemon's checkpoints go, base and deltas, a damaged
// newest base falls back to the newest point of the chain before it:
// retention keeps that chain until a newer base has a valid successor.
func TestDamagedBaseFallsBackAfterRetention(t *testing.T) {
	s, _ := newStore(t)
	s.MaxDeltas = 100
	write(t, s, "b1")
	writeDelta(t, s, "d1")
	d2 := writeDelta(t, s, "d2")
	b2 := write(t, s, "b2")
	writeDelta(t, s, "d3")
	writeDelta(t, s, "d4")
	raw, err := os.ReadFile(filepath.Join(s.Dir, name(b2)))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-6] ^= 0xff
	if err := os.WriteFile(filepath.Join(s.Dir, name(b2)), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	got, seq, _ := restoreChain(t, s)
	if want := []string{"base:b1", "delta:d1", "delta:d2"}; !slices.Equal(got, want) || seq != d2 {
		t.Fatalf("restored %q to %d, want %q to %d", got, seq, want, d2)
	}
}
