package ingest

import (
	"context"
	"errors"
	"fmt"

	"streamd/internal/membudget"
)

// Sink receives decoded values. Accept may block: that is the back-pressure that stops TCP reads when sorting falls behind.
type Sink interface {
	// Accept hands values for a stream to the pipeline and returns once they are accepted (counted by the next query), or an error (e.g. the stream limit is reached, or ctx ended). The slice may be reused by the caller after Accept returns.
	Accept(ctx context.Context, stream string, values []float64) error
	// Reject counts n values or messages of stream rejected for reason (one of the Reason constants). stream may be "" when the stream name itself was unreadable.
	Reject(stream string, reason Reason, n int)
}

// An EncodedSink is a Sink that also takes values still in the framed
// protocol's encoding, so that it can decode them straight into where it
// keeps them, without a []float64 in between. The framed decoder uses
// AcceptEncoded when its sink has it.
type EncodedSink interface {
	Sink
	// AcceptEncoded is Accept for the values in data: little-endian IEEE
	// 754 float32 values if size is 4, float64 values if size is 8;
	// len(data) is a multiple of size. It applies the value rules of
	// CleanValues itself: NaN and ±Inf are rejected and counted (with the
	// reasons ReasonNaN and ReasonInf), −0 becomes +0. It returns how many
	// values it accepted. When it fails with ErrStreamLimit or
	// ErrMemoryBudget it has accepted and counted none of them: the caller
	// counts them all (RefusalReason). data may be reused by the caller
	// after AcceptEncoded returns.
	AcceptEncoded(ctx context.Context, stream string, size int, data []byte) (accepted int, err error)
}

// Reason says why input was rejected. It is meant as a metric label.
type Reason string

// The reasons input is rejected for. The package documentation says which
// input each one counts, and whether it counts values, lines or frames.
const (
	ReasonMalformed       Reason = "malformed"       // a token that is not a number, a malformed frame
	ReasonNaN             Reason = "nan"             // a NaN value
	ReasonInf             Reason = "inf"             // a +Inf or -Inf value
	ReasonBadStreamName   Reason = "bad_stream_name" // a stream name that ValidStreamName rejects
	ReasonLineTooLong     Reason = "line_too_long"   // a line longer than the limit
	ReasonUnknownFormat   Reason = "unknown_format"  // a connection in neither protocol
	ReasonFrameTooLarge   Reason = "frame_too_large" // a frame longer than the limit
	ReasonStreamLimit     Reason = "stream_limit"    // Accept returned ErrStreamLimit
	ReasonBadValueType    Reason = "bad_value_type"  // a frame whose value type is unknown
	ReasonWrongKind       Reason = "wrong_kind"      // values for an item stream, or items for a value stream
	ReasonEmptyItem       Reason = "empty_item"      // an empty item
	ReasonItemTooLong     Reason = "item_too_long"   // an item longer than items.MaxLen
	ReasonBadUTF8         Reason = "bad_utf8"        // an item that is not valid UTF-8
	ReasonMemoryBudget    Reason = "memory_budget"   // Accept returned ErrMemoryBudget
	ReasonUnauthenticated Reason = "unauthenticated" // a connection without the right token
)

// Reasons returns every Reason, for example to create metrics up front.
func Reasons() []Reason {
	return []Reason{
		ReasonMalformed, ReasonNaN, ReasonInf, ReasonBadStreamName,
		ReasonLineTooLong, ReasonUnknownFormat, ReasonFrameTooLarge,
		ReasonStreamLimit, ReasonBadValueType, ReasonWrongKind,
		ReasonEmptyItem, ReasonItemTooLong, ReasonBadUTF8,
		ReasonMemoryBudget, ReasonUnauthenticated,
	}
}

// RefusalReason returns the Reason that counts values Accept refused with
// err because of their stream — ReasonStreamLimit for ErrStreamLimit,
// ReasonMemoryBudget for ErrMemoryBudget (the stream could not be
// created), ReasonWrongKind for ErrWrongKind — and false for any other
// error. Such values are counted and the input goes on.
func RefusalReason(err error) (Reason, bool) {
	switch {
	case errors.Is(err, ErrMemoryBudget):
		return ReasonMemoryBudget, true
	case errors.Is(err, ErrStreamLimit):
		return ReasonStreamLimit, true
	case errors.Is(err, ErrWrongKind):
		return ReasonWrongKind, true
	}
	return "", false
}

// Errors of this package, to be checked with errors.Is.
var (
	// ErrStreamLimit is returned, possibly wrapped, by a Sink's Accept when
	// the values would create a stream and no more streams may be created.
	// The decoders count such values as ReasonStreamLimit and go on.
	ErrStreamLimit = errors.New("stream limit reached")

	// ErrWrongKind is returned, possibly wrapped, by a Sink's Accept for
	// values sent to an item stream, and by an ItemSink's AcceptItems for
	// items sent to a value stream. The decoders count them as
	// ReasonWrongKind and go on.
	ErrWrongKind = errors.New("wrong kind of stream")
	// ErrMemoryBudget is returned, possibly wrapped, by a Sink's Accept
	// when the values would create a stream whose worst case the daemon's
	// memory budget cannot hold. The decoders count such values as
	// ReasonMemoryBudget and go on.
	ErrMemoryBudget = membudget.ErrExhausted

	// ErrUnknownFormat is returned by Decode when the input speaks neither
	// the line protocol nor the framed protocol.
	ErrUnknownFormat = errors.New("unknown input format")

	// ErrFrameTooLarge is returned by Decode when a frame is longer than the
	// limit, and by AppendFrame when the frame would be longer than
	// MaxFrameLen.
	ErrFrameTooLarge = errors.New("frame too large")
)

// MaxStreamNameLen is the length in bytes of the longest stream name.
const MaxStreamNameLen = 200

// ValidStreamName reports whether name is a valid stream name: 1 to
// MaxStreamNameLen bytes of ASCII letters, digits and "._-:/". The error
// says what is wrong.
func ValidStreamName(name string) error {
	switch {
	case name == "":
		return errors.New("stream name is empty")
	case len(name) > MaxStreamNameLen:
		return fmt.Errorf("stream name is %d bytes, longer than %d", len(name), MaxStreamNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("stream name %q has invalid byte %q at offset %d", name, name[i], i)
		}
	}
	return nil
}

// validName is ValidStreamName without the error, for the decoders.
func validName[T string | []byte](name T) bool {
	if len(name) == 0 || len(name) > MaxStreamNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.', c == '_', c == '-', c == ':', c == '/':
		return true
	}
	return false
}

// CleanValues applies the value rules of the package to vals, the values of
// stream, in place: it removes NaN and ±Inf, counting them with sink.Reject
// as ReasonNaN and ReasonInf, and turns -0 into +0, so that the pipeline
// never sees -0. It returns the remaining values, a prefix of vals in their
// original order. It makes one pass over vals and allocates nothing.
func CleanValues(stream string, vals []float64, sink Sink) []float64 {
	vals, nan, inf := cleanValues(vals)
	if nan > 0 {
		sink.Reject(stream, ReasonNaN, nan)
	}
	if inf > 0 {
		sink.Reject(stream, ReasonInf, inf)
	}
	return vals
}

// cleanValues is CleanValues without the counting: it returns the values
// kept and how many NaN and ±Inf it left out.
func cleanValues(vals []float64) (_ []float64, nan, inf int) {
	j := 0
	for _, v := range vals {
		if v-v != 0 { // true for NaN and ±Inf only
			if v != v {
				nan++
			} else {
				inf++
			}
			continue
		}
		if v == 0 {
			v = 0 // -0 becomes +0
		}
		vals[j] = v
		j++
	}
	return vals[:j], nan, inf
}
