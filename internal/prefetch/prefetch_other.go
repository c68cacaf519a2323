//go:build !amd64 && !arm64

package prefetch

// lines does nothing where the package knows no prefetch instruction.
func lines(addr, n uintptr) {}
