package ingest

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf8"

	"streamd/feed"
	"streamd/items"
)

// AppendItemsFrame appends to dst a frame of the framed protocol that
// carries list for the item stream stream, and returns the extended
// buffer; see AppendBatchFrame.
func AppendItemsFrame(dst []byte, stream string, list []string) ([]byte, error) {
	var b items.Batch
	for _, x := range list {
		b.AppendString(x)
	}
	return AppendBatchFrame(dst, stream, &b, 0, b.Len())
}

// AppendBatchFrame appends to dst a frame of the framed protocol that
// carries items i to j−1 of b for the item stream stream, and returns the
// extended buffer. It fails, returning dst unchanged, if stream is not a
// valid stream name, if an item is longer than items.MaxLen, or if the
// frame would be longer than MaxFrameLen (an error wrapping
// ErrFrameTooLarge).
func AppendBatchFrame(dst []byte, stream string, b *items.Batch, i, j int) ([]byte, error) {
	if err := feed.ValidName(stream); err != nil {
		return dst, fmt.Errorf("append items frame: %w", err)
	}
	body := 2 + len(stream) + 1
	for k := i; k < j; k++ {
		n := len(b.Item(k))
		if n > items.MaxLen {
			return dst, fmt.Errorf("append items frame: item of %d bytes, limit %d", n, items.MaxLen)
		}
		body += 2 + n
	}
	if body > MaxFrameLen {
		return dst, fmt.Errorf("append items frame of %d items for stream %q: %w", j-i, stream, ErrFrameTooLarge)
	}
	dst = appendFrameHead(dst, body, stream, typeItems)
	for k := i; k < j; k++ {
		x := b.Item(k)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(x)))
		dst = append(dst, x...)
	}
	return dst, nil
}

// itemTokens splits the rest of a line of an item stream, from offset i,
// into items and appends the valid ones to b. A token is either bare — the
// bytes up to the next blank — or quoted: a double-quoted string in Go
// syntax (strconv.Unquote), which may hold blanks and escapes such as \"
// and \t, and must be followed by a blank or the end of the line. It
// returns the number of tokens, and counts the refused ones with reject: a
// quoted token that does not end, does not unquote, or is followed by more
// than a blank is "malformed", one that holds invalid UTF-8, raw or
// escaped, is "bad_utf8", and items.Check refuses the others. A refused
// token is refused alone: the tokens after it are read as usual (see
// quotedEnd for where a malformed one ends).
func itemTokens(line []byte, i int, b *items.Batch, reject func(feed.Reason)) (tokens int) {
	for i = skipBlanks(line, i); i < len(line); i = skipBlanks(line, i) {
		tokens++
		if line[i] != '"' {
			j := fieldEnd(line, i)
			addItem(line[i:j], b, reject)
			i = j
			continue
		}
		j, ok := quotedEnd(line, i)
		tok := line[i:j]
		if !ok {
			reject(feed.ReasonMalformed)
			i = j
			continue
		}
		// Unquote would turn invalid UTF-8 into U+FFFD and keep it.
		s, err := strconv.Unquote(string(tok))
		switch {
		case err != nil:
			reject(feed.ReasonMalformed)
		case !utf8.Valid(tok) || !utf8.ValidString(s):
			reject(feed.ReasonBadUTF8)
		default:
			addItem([]byte(s), b, reject)
		}
		i = j
	}
	return tokens
}

// quotedEnd returns the end of the quoted token at line[i]: the offset just
// past its closing quote, with ok true, when a blank or the end of the line
// follows it. Otherwise the token is malformed and ok is false; it ends at
// the first blank after its closing quote, or after its opening quote when
// it has no closing quote.
func quotedEnd(line []byte, i int) (end int, ok bool) {
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			if j+1 < len(line) && !isBlank(line[j+1]) {
				return fieldEnd(line, j+1), false
			}
			return j + 1, true
		}
	}
	return fieldEnd(line, i), false
}

func addItem(item []byte, b *items.Batch, reject func(feed.Reason)) {
	if r := feed.ItemReason(item); r != "" {
		reject(r)
		return
	}
	b.Append(item)
}
