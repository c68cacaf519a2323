package ingest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MagicToken starts a framed connection that carries a token: it is
// followed by tokenLen:uint16le and the token, then by frames as after
// Magic. The fourth byte of the magic is the preamble's version: 'B' for
// none, 'T' for a token.
const MagicToken = "\x00SDT"

// AuthLinePrefix starts the line that carries a token as the first line of
// a line-protocol connection: "@auth <token>\n". No stream line can start
// with "@".
const AuthLinePrefix = "@auth"

// MaxTokenLen is the length in bytes of the longest token.
const MaxTokenLen = 1024

// preambleBufferSize is the read buffer of a connection until its preamble
// is read: enough for the longest auth line, and small, so that idle
// connections cost little.
const preambleBufferSize = 2048

// Errors of the preamble.
var (
	// ErrUnauthenticated is returned when a connection does not present
	// the token the server requires.
	ErrUnauthenticated = errors.New("unauthenticated")

	// errBadPreamble is wrapped by readPreamble's errors for preambles
	// that are not well formed.
	errBadPreamble = errors.New("malformed preamble")
)

// ValidToken reports whether token can be carried by a preamble: 1 to
// MaxTokenLen bytes of printable ASCII other than the space (0x21 to 0x7e),
// as bearer tokens are. The error says what is wrong.
func ValidToken(token string) error {
	switch {
	case token == "":
		return errors.New("token is empty")
	case len(token) > MaxTokenLen:
		return fmt.Errorf("token is %d bytes, longer than %d", len(token), MaxTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("token has byte %#02x at offset %d, not printable ASCII without blanks", c, i)
		}
	}
	return nil
}

// AppendPreamble appends to dst what a connection starts with: for the
// framed protocol (framed set), Magic without a token and MagicToken with
// it; for the line protocol, nothing without a token and the line
// "@auth <token>\n" with it. It fails, returning dst unchanged, if token
// is not empty and not valid (see ValidToken).
func AppendPreamble(dst []byte, framed bool, token string) ([]byte, error) {
	if token == "" {
		if framed {
			dst = append(dst, Magic...)
		}
		return dst, nil
	}
	if err := ValidToken(token); err != nil {
		return dst, fmt.Errorf("append preamble: %w", err)
	}
	if framed {
		dst = append(dst, MagicToken...)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(token)))
		return append(dst, token...), nil
	}
	dst = append(dst, AuthLinePrefix...)
	dst = append(dst, ' ')
	dst = append(dst, token...)
	return append(dst, '\n'), nil
}

// A preamble is what readPreamble found at the start of a connection.
type preamble struct {
	token  []byte // the token, nil if none
	framed bool   // MagicToken was read: frames follow
}

// readPreamble reads the token preamble of a connection from br, whose
// buffer holds at least preambleBufferSize bytes: MagicToken with its
// token, or an auth line. Anything else is left unread, and the preamble
// has no token. It returns io.EOF if the input ends before its first byte,
// an error wrapping errBadPreamble for a malformed preamble, and the error
// of a read that fails.
func readPreamble(br *bufio.Reader) (preamble, error) {
	first, err := br.Peek(1)
	if len(first) == 0 {
		return preamble{}, err
	}
	switch first[0] {
	case MagicToken[0]:
		magic, err := br.Peek(len(MagicToken))
		if string(magic) != MagicToken {
			if len(magic) < len(MagicToken) && err != io.EOF {
				return preamble{}, err
			}
			return preamble{}, nil // another magic: Decode's to judge
		}
		hdr, err := br.Peek(len(MagicToken) + 2)
		if err != nil {
			return preamble{}, cutPreamble(err)
		}
		n := int(binary.LittleEndian.Uint16(hdr[len(MagicToken):]))
		if n == 0 || n > MaxTokenLen {
			return preamble{}, fmt.Errorf("%w: token of %d bytes", errBadPreamble, n)
		}
		all, err := br.Peek(len(hdr) + n)
		if err != nil {
			return preamble{}, cutPreamble(err)
		}
		tok := bytes.Clone(all[len(hdr):])
		br.Discard(len(all))
		return preamble{token: tok, framed: true}, nil
	case AuthLinePrefix[0]:
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return preamble{}, fmt.Errorf("%w: auth line longer than %d bytes", errBadPreamble, len(line))
		case err != nil && (err != io.EOF || len(line) == 0):
			return preamble{}, cutPreamble(err)
		}
		tok, ok := parseAuthLine(line)
		if !ok {
			return preamble{}, fmt.Errorf("%w: first line is not %q", errBadPreamble, AuthLinePrefix+" <token>")
		}
		return preamble{token: tok}, nil
	}
	return preamble{}, nil
}

// cutPreamble returns the error for a preamble cut short by err.
func cutPreamble(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: cut short", errBadPreamble)
	}
	return err
}

// parseAuthLine returns the token of an auth line: "@auth", blanks, the
// token, optional blanks, and an optional "\r\n" or "\n".
func parseAuthLine(line []byte) ([]byte, bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	rest, ok := bytes.CutPrefix(line, []byte(AuthLinePrefix))
	if !ok || len(rest) == 0 || !isBlank(rest[0]) {
		return nil, false
	}
	i := skipBlanks(rest, 0)
	j := fieldEnd(rest, i)
	tok := rest[i:j]
	if skipBlanks(rest, j) != len(rest) || ValidToken(string(tok)) != nil {
		return nil, false
	}
	return bytes.Clone(tok), true
}
