package slidingwindow

import (
	"testing"

	"streamd/internal/codec"
)

// FuzzUnmarshalPayload fuzzes the decoder behind its checksum: each input
// is a version byte and a payload, sealed in a valid envelope, so that the
// fuzzer reaches the fields rather than stopping at the CRC-32C as
// FuzzUnmarshal's mutations mostly do. A window that decodes answers its
// queries and takes more values without panicking, and encodes to what
// decodes to the same window.
func FuzzUnmarshalPayload(f *testing.F) {
	for _, data := range fuzzSeeds() {
		f.Add(data[len(magic) : len(data)-4])
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return
		}
		checkDecoded(t, codec.End(append(codec.Begin(nil, magic, raw[0]), raw[1:]...), 0))
	})
}
