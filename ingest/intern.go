package ingest

import "hash/maphash"

// internSlots is how many stream names an interner keeps.
const internSlots = 1024

// An interner turns stream names read as bytes into strings, allocating a
// string only for a name it has not kept. It keeps up to internSlots
// names, each in one of two slots chosen by a hash of the name: a name
// that misses takes its first slot, whose name moves to its own other
// slot, displacing the name there. A miss costs one allocation however
// many distinct names go by. (A map of the names seen grew,
// rehashed and was thrown away every internSlots names, which with a
// million streams cost more than the strings.) The zero interner is ready
// to use.
type interner struct {
	seed  maphash.Seed
	slots *[internSlots]string
}

// intern returns name as a string, the one kept if there is one.
func (in *interner) intern(name []byte) string {
	if in.slots == nil {
		in.seed = maphash.MakeSeed()
		in.slots = new([internSlots]string)
	}
	h := maphash.Bytes(in.seed, name)
	a, b := &in.slots[h%internSlots], &in.slots[(h>>32)%internSlots]
	switch {
	case *a == string(name): // no allocation: the compiler compares bytes
		return *a
	case *b == string(name):
		return *b
	}
	// The name in a moves to its other slot, displacing what is there.
	if old := *a; old != "" {
		ho := maphash.String(in.seed, old)
		other := &in.slots[ho%internSlots]
		if other == a {
			other = &in.slots[(ho>>32)%internSlots]
		}
		*other = old
	}
	*a = string(name)
	return *a
}
