//go:build amd64 || arm64

package prefetch

// lines prefetches the n cache lines from addr, which is a line's first
// byte. It takes an address rather than a pointer since addr may be
// before the start of the object it prefetches.
//
//go:noescape
func lines(addr, n uintptr)
