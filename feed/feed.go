// Package feed holds the words that every input, the pipeline and the query
// side share about the values that feed streamd's streams: where a batch
// comes from (Source), why input is rejected (Reason), the errors that
// refuse it (ErrStreamLimit, ErrWrongKind, ErrMemoryBudget), the rule for
// stream names (ValidName) and the rule for values (CleanValues, and
// CleanPairs for pairs).
//
// It also holds what one accept carries from an input to a stream (Batch)
// and the moments of values (Moments, Measure).
//
// It sits below every other package of the daemon and imports none of
// them but items and internal/membudget, so that the inputs (package ingest) and the
// streams (package pipeline) can both speak it without one importing the
// other.
package feed

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"streamd/internal/membudget"
	"streamd/items"
)

// A Source says where values come from: a partition of a Kafka topic, or,
// as the zero Source (Local), the daemon's own inputs (TCP, gRPC Push).
// A stream keeps each source's values apart, so that a partition's state
// can move to another daemon whole.
type Source struct {
	Topic     string
	Partition int
}

// Local is the Source of values that came through the daemon's own
// inputs rather than from a Kafka partition.
var Local = Source{}

// Compare orders sources by topic, then partition: it returns -1, 0 or +1
// as s sorts before, with or after other. Local sorts first.
func (s Source) Compare(other Source) int {
	if c := strings.Compare(s.Topic, other.Topic); c != 0 {
		return c
	}
	return cmp.Compare(s.Partition, other.Partition)
}

// String returns s as "topic/partition".
func (s Source) String() string {
	return fmt.Sprintf("%s/%d", s.Topic, s.Partition)
}

// Reason says why input was rejected. It is meant as a metric label.
type Reason string

// The reasons input is rejected for. Package ingest's documentation says
// which input each one counts, and whether it counts values, lines or
// frames.
const (
	ReasonMalformed       Reason = "malformed"       // a token that is not a number, a malformed frame
	ReasonNaN             Reason = "nan"             // a NaN value
	ReasonInf             Reason = "inf"             // a +Inf or -Inf value, or one beyond a float32 stream's range
	ReasonBadStreamName   Reason = "bad_stream_name" // a stream name that ValidName rejects
	ReasonLineTooLong     Reason = "line_too_long"   // a line longer than the limit
	ReasonUnknownFormat   Reason = "unknown_format"  // a connection in neither protocol
	ReasonFrameTooLarge   Reason = "frame_too_large" // a frame longer than the limit
	ReasonStreamLimit     Reason = "stream_limit"    // refused with ErrStreamLimit
	ReasonBadValueType    Reason = "bad_value_type"  // a frame whose value type is unknown
	ReasonWrongKind       Reason = "wrong_kind"      // values, items or pairs for a stream of another kind
	ReasonEmptyItem       Reason = "empty_item"      // an empty item
	ReasonItemTooLong     Reason = "item_too_long"   // an item longer than items.MaxLen
	ReasonBadUTF8         Reason = "bad_utf8"        // an item that is not valid UTF-8
	ReasonMemoryBudget    Reason = "memory_budget"   // refused with ErrMemoryBudget
	ReasonUnauthenticated Reason = "unauthenticated" // a connection without the right token
)

// ReasonNotInHierarchy counts the items of a hierarchy stream (a stream
// created with a prefix hierarchy, package hhh) that are not in its
// hierarchy: not an IPv4 address in an "ipv4" stream, say.
const ReasonNotInHierarchy Reason = "not_in_hierarchy"

// Reasons returns every Reason, for example to create metrics up front.
func Reasons() []Reason {
	return []Reason{
		ReasonMalformed, ReasonNaN, ReasonInf, ReasonBadStreamName,
		ReasonLineTooLong, ReasonUnknownFormat, ReasonFrameTooLarge,
		ReasonStreamLimit, ReasonBadValueType, ReasonWrongKind,
		ReasonEmptyItem, ReasonItemTooLong, ReasonBadUTF8,
		ReasonMemoryBudget, ReasonUnauthenticated, ReasonNotInHierarchy,
	}
}

// Errors that refuse input because of its stream, to be checked with
// errors.Is. The inputs count values refused with them (RefusalReason) and
// go on.
var (
	// ErrStreamLimit refuses values that would create a stream when no
	// more streams may be created.
	ErrStreamLimit = errors.New("stream limit reached")
	// ErrWrongKind refuses values, items or pairs sent to a stream of
	// another kind: values to an item or pair stream, items to a value or
	// pair stream, pairs to a value or item stream.
	ErrWrongKind = errors.New("wrong kind of stream")
	// ErrMemoryBudget refuses values that the daemon's memory budget
	// cannot hold.
	ErrMemoryBudget = membudget.ErrExhausted
)

// RefusalReason returns the Reason that counts values refused with err
// because of their stream — ReasonStreamLimit for ErrStreamLimit,
// ReasonMemoryBudget for ErrMemoryBudget, ReasonWrongKind for
// ErrWrongKind — and false for any other error.
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

// MaxNameLen is the length in bytes of the longest stream name.
const MaxNameLen = 200

// ValidName reports whether name is a valid stream name: 1 to MaxNameLen
// bytes of ASCII letters, digits and "._-:/". The error says what is
// wrong.
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("stream name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("stream name is %d bytes, longer than %d", len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !IsNameByte(name[i]) {
			return fmt.Errorf("stream name %q has invalid byte %q at offset %d", name, name[i], i)
		}
	}
	return nil
}

// IsValidName is ValidName without the error, for decoders that read names
// as bytes.
func IsValidName[T string | []byte](name T) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !IsNameByte(name[i]) {
			return false
		}
	}
	return true
}

// IsNameByte reports whether c may be part of a stream name.
func IsNameByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '.', c == '_', c == '-', c == ':', c == '/':
		return true
	}
	return false
}

// ItemReason returns the Reason an item is rejected for — ReasonEmptyItem,
// ReasonItemTooLong or ReasonBadUTF8 (see items.Check) — or "" for a valid
// item.
func ItemReason(item []byte) Reason {
	switch err := items.Check(item); {
	case err == nil:
		return ""
	case errors.Is(err, items.ErrEmpty):
		return ReasonEmptyItem
	case errors.Is(err, items.ErrTooLong):
		return ReasonItemTooLong
	default:
		return ReasonBadUTF8
	}
}
