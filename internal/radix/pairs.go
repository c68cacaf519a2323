package radix

// Pairs64 sorts the pairs (x[i], y[i]) by x in ascending order, moving
// each y with its x: a key–value LSD radix sort on the keys of Key64, in
// six passes of 11 bits (the last of 9), each skipped when every key has
// the same digit. The order of x is that of Float64s (−0 before +0); pairs
// with equal x keep their input order. It uses scratch (grown when it is
// shorter than 4·len(x)) for two buffers of key–value entries and returns
// it for reuse. It runs in O(len(x)) time and allocates only when scratch
// is too short. It panics if len(y) != len(x).
func Pairs64(x, y []float64, scratch []uint64) []uint64 {
	n := len(x)
	if len(y) != n {
		panic("radix: Pairs64 of slices of different lengths")
	}
	k, v := bits64(x), bits64(y)
	for i, u := range k {
		k[i] = key(u)
	}
	if n <= insertionMax {
		insertionPairs(k, v)
	} else {
		if cap(scratch) < 4*n {
			scratch = make([]uint64, 4*n)
		}
		scratch = scratch[:4*n]
		lsdPairs(k, v, scratch[:2*n], scratch[2*n:])
	}
	for i, u := range k {
		k[i] = unkey(u)
	}
	return scratch
}

// lsdPairs sorts the keys k, moving v with them, by 11-bit digits. The
// passes between the first and the last move each key and its value
// together, as one 16-byte entry of a and b (2·len(k) each), which halves
// the scattered writes; the first pass reads k and v, the last writes them.
func lsdPairs(k, v, a, b []uint64) {
	var c [6][2048]uint32
	for _, u := range k {
		c[0][u&0x7ff]++
		c[1][u>>11&0x7ff]++
		c[2][u>>22&0x7ff]++
		c[3][u>>33&0x7ff]++
		c[4][u>>44&0x7ff]++
		c[5][u>>55]++
	}
	u0 := k[0]
	var digits [6]int
	m := 0
	for p := range c {
		if c[p][u0>>(11*p)&0x7ff] != uint32(len(k)) {
			digits[m] = p
			m++
		}
	}
	switch m {
	case 0:
		return
	case 1:
		p := digits[0]
		copy(a, k)
		copy(a[len(k):], v)
		scatterSplit(&c[p], uint(11*p), a[:len(k)], a[len(k):], k, v)
		return
	}
	from, to := a, b
	for j := range m {
		p := digits[j]
		switch j {
		case 0:
			scatterJoin(&c[p], uint(11*p), k, v, to)
		case m - 1:
			scatterPacked(&c[p], uint(11*p), from, k, v)
			return
		default:
			scatterPacked2(&c[p], uint(11*p), from, to)
		}
		from, to = to, from
	}
}

// starts turns the counts of the digits into the positions of the first
// key of each.
func starts(count *[2048]uint32) {
	var start uint32
	for d, c := range count {
		count[d] = start
		start += c
	}
}

// scatterJoin moves the keys fk and values fv into the entries of t,
// ordered by the 11-bit digit (key>>shift)&0x7ff, stably.
func scatterJoin(count *[2048]uint32, shift uint, fk, fv, t []uint64) {
	shift &= 63
	starts(count)
	fv = fv[:len(fk)]
	for i, u := range fk {
		d := (u >> shift) & 0x7ff
		q := count[d]
		t[2*q], t[2*q+1] = u, fv[i]
		count[d] = q + 1
	}
}

// scatterPacked2 moves the entries of f into those of t by digit.
func scatterPacked2(count *[2048]uint32, shift uint, f, t []uint64) {
	shift &= 63
	starts(count)
	for i := 0; i+1 < len(f); i += 2 {
		u := f[i]
		d := (u >> shift) & 0x7ff
		q := count[d]
		t[2*q], t[2*q+1] = u, f[i+1]
		count[d] = q + 1
	}
}

// scatterPacked moves the entries of f into the keys tk and values tv by
// digit.
func scatterPacked(count *[2048]uint32, shift uint, f, tk, tv []uint64) {
	shift &= 63
	starts(count)
	tv = tv[:len(tk)]
	for i := 0; i+1 < len(f); i += 2 {
		u := f[i]
		d := (u >> shift) & 0x7ff
		q := count[d]
		tk[q], tv[q] = u, f[i+1]
		count[d] = q + 1
	}
}

// scatterSplit moves the keys fk and values fv into tk and tv by digit.
func scatterSplit(count *[2048]uint32, shift uint, fk, fv, tk, tv []uint64) {
	shift &= 63
	starts(count)
	fv = fv[:len(fk)]
	for i, u := range fk {
		d := (u >> shift) & 0x7ff
		q := count[d]
		tk[q], tv[q] = u, fv[i]
		count[d] = q + 1
	}
}

// insertionPairs sorts the keys k by insertion, moving v with them.
func insertionPairs(k, v []uint64) {
	for i := 1; i < len(k); i++ {
		a, b := k[i], v[i]
		j := i
		for j > 0 && k[j-1] > a {
			k[j], v[j] = k[j-1], v[j-1]
			j--
		}
		k[j], v[j] = a, b
	}
}
