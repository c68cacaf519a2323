package ingest

import (
	"bytes"
	"strconv"
	"strings"

	"streamd/feed"
	"streamd/items"

	"github.com/segmentio/kafka-go"
)

// Format is the encoding of the value of a Kafka message. The zero value is
// FormatText.
type Format uint8

// The formats of a Kafka message's value; see [KafkaConsumer].
const (
	// FormatText is one or more decimal numbers separated by blanks,
	// commas or newlines, as on the TCP line protocol.
	FormatText Format = iota

	// FormatBinary64 is an array of IEEE 754 binary64 numbers,
	// little-endian: 8 bytes a value.
	FormatBinary64

	// FormatBinary32 is an array of IEEE 754 binary32 numbers,
	// little-endian: 4 bytes a value.
	FormatBinary32

	// FormatItems is items for an item stream, one a line: the message
	// is split at "\n" (a "\r" before it is dropped), and a final "\n"
	// ends the last item.
	FormatItems

	// FormatPairsText is pairs for a pair stream, as in the TCP line
	// protocol: tokens x:y of two decimal numbers, separated by blanks,
	// commas or newlines.
	FormatPairsText

	// FormatPairs64 is pairs for a pair stream: x and y as IEEE 754
	// binary64 numbers, little-endian, pair after pair (16 bytes a pair).
	FormatPairs64
)

// ContentTypeHeader is the Kafka message header whose value, one of the
// ContentType constants, names the format of the message. Its name is
// matched without regard to case.
const ContentTypeHeader = "content-type"

// The values of the ContentTypeHeader of the formats. They are matched
// without regard to case, and parameters such as "; charset=utf-8" are
// ignored.
const (
	ContentTypeText     = "text/plain"                        // FormatText
	ContentTypeBinary64 = "application/x-streamd-f64le"       // FormatBinary64
	ContentTypeBinary32 = "application/x-streamd-f32le"       // FormatBinary32
	ContentTypeItems    = "text/x-streamd-items"              // FormatItems
	ContentTypePairs    = "text/x-streamd-pairs"              // FormatPairsText
	ContentTypePairs64  = "application/x-streamd-pairs-f64le" // FormatPairs64
)

// String returns the name of f: "text", "f64", "f32", "items", "pairs" or
// "pairs-f64".
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatBinary64:
		return "f64"
	case FormatBinary32:
		return "f32"
	case FormatItems:
		return "items"
	case FormatPairsText:
		return "pairs"
	case FormatPairs64:
		return "pairs-f64"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ContentType returns the ContentTypeHeader value of f, or "" if f is not a
// known format.
func (f Format) ContentType() string {
	switch f {
	case FormatText:
		return ContentTypeText
	case FormatBinary64:
		return ContentTypeBinary64
	case FormatBinary32:
		return ContentTypeBinary32
	case FormatItems:
		return ContentTypeItems
	case FormatPairsText:
		return ContentTypePairs
	case FormatPairs64:
		return ContentTypePairs64
	}
	return ""
}

// valid reports whether f is a known format.
func (f Format) valid() bool { return f <= FormatPairs64 }

// isPairs reports whether f is a format of pairs.
func (f Format) isPairs() bool { return f == FormatPairsText || f == FormatPairs64 }

// Formats lists every format.
func Formats() []Format {
	return []Format{FormatText, FormatBinary64, FormatBinary32, FormatItems, FormatPairsText, FormatPairs64}
}

// messageFormat returns the format of m: the one its content-type header
// names if it has one, else def. ok is false if the header names no known
// format.
func messageFormat(m *kafka.Message, def Format) (f Format, ok bool) {
	for i := range m.Headers {
		h := &m.Headers[i]
		if !strings.EqualFold(h.Key, ContentTypeHeader) {
			continue
		}
		ct := string(h.Value)
		if i := strings.IndexByte(ct, ';'); i >= 0 {
			ct = ct[:i]
		}
		ct = strings.TrimSpace(ct)
		for _, f := range Formats() {
			if strings.EqualFold(ct, f.ContentType()) {
				return f, true
			}
		}
		return 0, false
	}
	return def, true
}

// maxValues returns an upper bound on the number of values that a message
// value of n bytes holds in format f.
func maxValues(f Format, n int) int {
	switch f {
	case FormatBinary64:
		return n / 8
	case FormatBinary32:
		return n / 4
	case FormatItems:
		return n/2 + 1 // one byte an item and a newline
	case FormatPairs64:
		return n / pairSize
	case FormatPairsText:
		return (n + 1) / 4 // x:y and a separator
	}
	return (n + 1) / 2 // one byte a value and one separator
}

// isTextSep reports whether c separates values in FormatText.
func isTextSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', ',':
		return true
	}
	return false
}

// appendText appends the values of b, in FormatText, to dst. It returns
// the number of tokens of b and of those that are not numbers, which are
// skipped. A number too large for a float64 is appended as ±Inf.
func appendText(dst []float64, b []byte) (vals []float64, tokens, bad int) {
	i := 0
	for {
		for i < len(b) && isTextSep(b[i]) {
			i++
		}
		if i == len(b) {
			return dst, tokens, bad
		}
		j := i
		for j < len(b) && !isTextSep(b[j]) {
			j++
		}
		tokens++
		if v, ok := parseFloat(b[i:j]); ok {
			dst = append(dst, v)
		} else {
			bad++
		}
		i = j
	}
}

// appendItemLines appends the valid items of b, in FormatItems, to list,
// and counts the others with reject. It returns the number of lines.
func appendItemLines(list *items.Batch, b []byte, reject func(feed.Reason)) (lines int) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		lines++
		addItem(line, list, reject)
	}
	return lines
}
