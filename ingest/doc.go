// Package ingest turns bytes from producers into batches of values (or
// items, for item streams, or pairs, for pair streams) for named streams
// and hands them to a [Sink]. It defines the two wire protocols that a
// [TCPServer] speaks: a line protocol for people and scripts, and a binary
// framed protocol for throughput. The first bytes of a connection choose the
// protocol; a connection speaks one protocol until it ends.
//
// Bad input is counted through [Sink.Reject] with a [feed.Reason], never silently
// dropped, and never stops the server: a bad value, line or frame is skipped
// and the connection goes on, except where this document says the connection
// is closed. The rejects of a stream's input are counted after the good
// values or items that came with them are accepted (in the same line,
// frame, batch of lines or frames, or Kafka delivery), so that a stream
// this input creates counts them; a Sink that creates streams on data (the
// pipeline) thus never needs to create one for a reject.
//
// # Stream names
//
// A stream name is 1 to 200 bytes ([feed.MaxNameLen]) of ASCII letters,
// digits and the punctuation ". _ - : /". [feed.ValidName] checks a name.
//
// # Values
//
// Values are float64. NaN is rejected (reason "nan"), and so are +Inf and
// -Inf (reason "inf"), including decimal numbers too large for a float64.
// Negative zero becomes positive zero: the pipeline never sees -0. Every
// other value is passed on unchanged. These rules are applied once to
// every value, in every source: by [feed.CleanValues], or as the values
// are decoded ([DecodeFloat32], [DecodeFloat64]) or parsed (the line
// protocol). A stream that stores float32 also
// rejects, as "inf", a value too large for a float32: the pipeline, which
// knows each stream's precision, counts those (the Sink's Accept).
//
// # Items
//
// An item stream takes items — strings such as URLs or user IDs — instead
// of values, in the Items of a [feed.Batch]. An item is 1 to 1024
// bytes (items.MaxLen) of valid UTF-8: an empty item is rejected as
// "empty_item", a longer one as "item_too_long", one that is not UTF-8 as
// "bad_utf8", each on its own (one per item). Items sent to a value stream,
// and values sent to an item stream, are rejected as "wrong_kind", one per
// item or value. [feed.ItemReason] applies these rules.
//
// # Pairs
//
// A pair stream takes pairs (x, y) of float64 — a request's latency and
// its response's size, say — in the Pairs of a [feed.Batch], and answers
// correlated sums: the count and the sum of y of the pairs whose x is
// below or above a threshold. A pair with a NaN in x or y is rejected as
// "nan", one with a ±Inf (and no NaN) as "inf", one per pair; −0 becomes
// +0 in both. [feed.CleanPairs] applies these rules. Pairs sent to a value
// or item stream, and values or items sent to a pair stream, are rejected
// as "wrong_kind". The first pairs a new stream keeps create it as a pair
// stream.
//
// # Line protocol
//
// The line protocol is the default. Each line names a stream and carries one
// or more values:
//
//	<stream> <value> [<value> ...]\n
//
// Fields are separated by one or more spaces or tabs; blanks at the start and
// end of a line are ignored. A line ends with "\n" or "\r\n"; the last line of
// a connection may end at the end of the input instead. Values are decimal
// numbers as [strconv.ParseFloat] reads them with bitSize 64, such as
// "12.5", "-3" or "1e-9", but without its hexadecimal form ("0x1p-2") and
// digit separators ("1_000"), which are malformed. Empty lines, lines of blanks
// and lines whose first non-blank byte is "#" are ignored. So
//
//	echo "latency 12.5 13.1" | nc host port
//
// adds two values to the stream "latency". A line is rejected or trimmed as
// follows:
//
//   - A value that is not a number is rejected on its own (reason
//     "malformed", one per value); the other values of the line are
//     accepted.
//   - A line whose stream name is not valid is rejected whole: its values
//     are counted under the stream "" with reason "bad_stream_name", one per
//     value (one for a line without values).
//   - A line with a valid name and no values is counted as one "malformed".
//   - A line longer than the limit (1 MiB by default, [DefaultMaxLineBytes],
//     not counting its "\n" or "\r\n") is skipped up to the next newline
//     and counted as one "line_too_long", whatever it holds. It is counted
//     under its stream name when the first MaxLineBytes+1 bytes of the line
//     hold a whole valid name followed by a blank, under "" otherwise. The
//     server never buffers more than about the limit of one line.
//   - A line cut short by a read error (not by the end of the input) is
//     counted as one "malformed" under "".
//
// A line whose stream is an item stream ([Sink.IsItemStream], asked
// when the connection's stream changes) carries items instead of values:
//
//	<stream> <item> [<item> ...]\n
//
// An item is a bare token — the bytes up to the next blank — or a quoted
// one: a double-quoted string in Go syntax ([strconv.Unquote]), which may
// hold blanks and escapes such as \" \\ \t \n \u00e9, and must be
// followed by a blank or the end of the line. A quoted token that does not
// end, or does not unquote, is rejected as "malformed", and the rest of its
// line is skipped; a line without items counts one "malformed". A line to
// a stream that does not exist yet is read as values, so create item
// streams before sending them lines.
//
// A line whose first token after the stream name holds a ":" carries
// pairs instead of values (a number never holds a ":"), unless its stream
// is an item stream:
//
//	<stream> <x>:<y> [<x>:<y> ...]\n
//
// with x and y decimal numbers as values are, and no blank around the
// ":". So
//
//	echo "api 12.5:3400 80.1:51200" | nc host port
//
// adds two pairs to the pair stream "api", creating it if needed. A token
// of a pair line that is not a pair (no ":", more than one, or a side that
// is not a number) is rejected on its own as "malformed"; a token holding
// a ":" in a line of values is malformed too.
//
// Values (or pairs) of consecutive lines of one stream are handed to the
// sink together, in batches of up to 65536, while more input is already
// buffered. No
// value waits for input that has not arrived: whatever has been decoded is
// handed over before the server waits for more bytes.
//
// # Framed protocol
//
// A connection that starts with the four magic bytes "\x00SDB" ([Magic])
// speaks the framed protocol; since a NUL byte cannot start a line, the two
// protocols cannot be confused. After the magic comes a sequence of frames,
// all integers little-endian:
//
//	frame  := length:uint32 body           length = len(body) ≤ 16 MiB
//	body   := nameLen:uint16 name:[nameLen]byte type:uint8 values
//	type   := 1 (float32) | 2 (float64) | 3 (items) | 4 (float64 pairs)
//	values := the rest of the body: IEEE 754 binary32 or binary64
//	          numbers, little-endian; its length is a multiple of 4 or 8
//	        | for type 3, items: (itemLen:uint16 item:[itemLen]byte)*
//	        | for type 4, pairs: (x:binary64 y:binary64)*, little-endian;
//	          its length is a multiple of 16
//
// A frame without values is valid and does nothing. [AppendFrame] encodes a
// frame of values, [AppendItemsFrame] and [AppendBatchFrame] one of items,
// [AppendPairsFrame] one of pairs.
// The items of a frame are checked one by one (see Items); an item whose
// length runs past the end of its frame counts one "malformed" and ends the
// frame.
//
// A bad frame is skipped whole (its length is known) and the connection goes
// on. Each bad frame is counted once, for the first of these checks that it
// fails:
//
//  1. A body too short for its nameLen and type is counted as "malformed"
//     under the stream "".
//  2. A name that is not a valid stream name is counted as
//     "bad_stream_name" under the stream "".
//  3. A type that is not 1, 2, 3 or 4 is counted as "bad_value_type".
//  4. Values that are not a whole number of values (or pairs) are counted
//     as "malformed".
//
// A frame whose length is over the limit (16 MiB, [MaxFrameLen], or less when
// the server is so configured) is counted as "frame_too_large" under "" and
// the connection is closed, since the stream cannot be resynchronised. A
// frame cut short by the end of the connection or by a read error is counted
// as one "malformed", under its stream name if its header arrived whole; the
// whole values that arrived before the cut are accepted. Frame-level rejects
// count frames, not values; the rejects of single values ("nan", "inf"),
// "stream_limit" and "memory_budget" count values.
//
// # Token preamble
//
// A server with a token ([TCPServer.Token]) requires every connection to
// start with it, within the handshake timeout (3 s by default):
//
//   - in the line protocol, as the first line: "@auth <token>\n" (blanks
//     as in other lines; "\r\n" too). No stream line can start with "@".
//   - in the framed protocol, with the magic [MagicToken] "\x00SDT" instead
//     of [Magic] "\x00SDB", followed by tokenLen:uint16 and the token, then
//     frames as after Magic. The magic's fourth byte is the preamble's
//     version: 'B' has no token, 'T' one.
//
// A token is 1 to 1024 bytes ([MaxTokenLen]) of printable ASCII without
// blanks ([ValidToken]); [AppendPreamble] writes either preamble. A
// connection without the token, with a wrong one, or with a malformed
// preamble is sent one line "error: unauthenticated: <why>\n", counted as
// one "unauthenticated" under the stream "", and closed. A server without
// a token accepts both preambles and ignores their token, so a client may
// always send one.
//
// # Other input
//
// A connection whose first byte is NUL but whose first four bytes are not the
// magic, or whose first byte cannot start a line (it is neither a stream name
// byte, a blank, "\r", "\n" nor "#"; for example the first byte of a TLS
// handshake), is counted as one "unknown_format" under "" and closed.
//
// # TLS and connection limits
//
// A server with [TCPServer.TLSConfig] speaks TLS: the handshake comes
// first, within the handshake timeout, and both protocols run inside it. A
// connection over [TCPServer.MaxConnections] is sent
// "error: too many connections (the limit is N)\n" (in plaintext) and
// closed; one that sends nothing for [TCPServer.IdleTimeout] while the
// server waits for input is closed. Connections that have not yet finished
// the TLS handshake or sent the token are limited apart
// ([TCPServer.MaxUnauthenticated]): a new connection displaces the oldest
// of them, which is closed without a word. [TCPServer.Stats] counts each.
//
// # Back-pressure
//
// Each connection is served by one goroutine that reads, decodes and calls
// [Sink.Accept]. Accept may block while the pipeline catches up; the
// connection is not read meanwhile, so TCP flow control slows the producer
// down; the pipeline also waits there while its memory budget is full. If
// Accept reports [feed.ErrStreamLimit] or [feed.ErrMemoryBudget] (the values would
// create a stream that the daemon cannot hold), the values are counted as
// "stream_limit" or "memory_budget" and the connection goes on.
package ingest
