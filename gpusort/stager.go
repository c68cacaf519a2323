package gpusort

// Stager is implemented by back-ends that can lend window buffers inside
// the memory they upload batches from (compute.Sorter's persistently mapped
// staging memory), so that a window filled there in place costs no host
// copy when its batch is digested. A window in ordinary memory works the
// same, one copy slower; so does any window when a Stager returns nil.
//
// Ownership: a buffer that StageF32 or StageF64 lends is the caller's
// until it hands it back with UnstageF32 or UnstageF64. In between the
// caller fills it (ingest), queues it and puts it in batches; once the
// Digest (or Sort) of its batch has returned, the back-end no longer reads
// it, and it may be handed back or filled again for another window. It
// must not be handed back while a Digest of its batch runs, nor used after
// it is handed back or after the back-end is closed.
//
// The staging memory is bounded: when it is used up, StageF32 and StageF64
// return nil and the caller uses ordinary memory (make) instead.
type Stager interface {
	// StageF32 lends a buffer of n float32 values, or returns nil.
	StageF32(n int) []float32
	// StageF64 lends a buffer of n float64 values, or returns nil.
	StageF64(n int) []float64
	// UnstageF32 hands back a buffer that StageF32 lent, given as the
	// slice it returned or any slice of it that starts at its first
	// element. Slices it did not lend (ordinary memory, nil) are ignored.
	UnstageF32(w []float32)
	// UnstageF64 is UnstageF32 for StageF64's buffers.
	UnstageF64(w []float64)
}

// StageF32 lends a staging buffer from the GPU side, if it is a Stager,
// or returns nil.
func (a *Auto) StageF32(n int) []float32 {
	if s, ok := a.gpu.(Stager); ok {
		return s.StageF32(n)
	}
	return nil
}

// StageF64 lends a staging buffer from the GPU side, if it is a Stager,
// or returns nil.
func (a *Auto) StageF64(n int) []float64 {
	if s, ok := a.gpu.(Stager); ok {
		return s.StageF64(n)
	}
	return nil
}

// UnstageF32 hands a buffer back to the GPU side. Batches of staged
// windows that Auto sends to the CPU are read from the staging memory.
func (a *Auto) UnstageF32(w []float32) {
	if s, ok := a.gpu.(Stager); ok {
		s.UnstageF32(w)
	}
}

// UnstageF64 hands a buffer back to the GPU side.
func (a *Auto) UnstageF64(w []float64) {
	if s, ok := a.gpu.(Stager); ok {
		s.UnstageF64(w)
	}
}
