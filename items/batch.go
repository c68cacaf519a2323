package items

import "slices"

// Batch is a list of items packed into one buffer: no allocation per item.
// The zero Batch is empty and ready to use.
type Batch struct {
	data []byte
	ends []int // ends[i] is the end of item i in data
}

// Len reports the number of items.
func (b *Batch) Len() int { return len(b.ends) }

// Size reports the total length of the items in bytes.
func (b *Batch) Size() int { return len(b.data) }

// Item returns item i. It is valid until b changes; the caller must not
// modify it.
func (b *Batch) Item(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.data[start:b.ends[i]]
}

// Append adds item.
func (b *Batch) Append(item []byte) {
	b.data = append(b.data, item...)
	b.ends = append(b.ends, len(b.data))
}

// AppendString adds item.
func (b *Batch) AppendString(item string) {
	b.data = append(b.data, item...)
	b.ends = append(b.ends, len(b.data))
}

// AppendBatch adds items i to j−1 of o.
func (b *Batch) AppendBatch(o *Batch, i, j int) {
	if i == j {
		return
	}
	start := 0
	if i > 0 {
		start = o.ends[i-1]
	}
	off := len(b.data) - start
	b.data = append(b.data, o.data[start:o.ends[j-1]]...)
	for _, e := range o.ends[i:j] {
		b.ends = append(b.ends, e+off)
	}
}

// AppendFingerprints appends the fingerprints of b's items under h to dst,
// in order.
func (b *Batch) AppendFingerprints(dst []uint64, h Hash) []uint64 {
	start := 0
	for _, end := range b.ends {
		dst = append(dst, Fingerprint(h(b.data[start:end])))
		start = end
	}
	return dst
}

// PutFingerprints sets dst[k] to the fingerprint under h of item i+k,
// for every k < len(dst): AppendFingerprints for a part of b, into place,
// so that parts of a batch can be hashed at once.
func (b *Batch) PutFingerprints(dst []uint64, h Hash, i int) {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	for k, end := range b.ends[i : i+len(dst)] {
		dst[k] = Fingerprint(h(b.data[start:end]))
		start = end
	}
}

// Grow makes room for n more items of size bytes in all.
func (b *Batch) Grow(n, size int) {
	b.data = slices.Grow(b.data, size)
	b.ends = slices.Grow(b.ends, n)
}

// Reset empties b, keeping its memory.
func (b *Batch) Reset() {
	b.data = b.data[:0]
	b.ends = b.ends[:0]
}

// Bytes reports the memory b holds.
func (b *Batch) Bytes() int { return cap(b.data) + 8*cap(b.ends) }
