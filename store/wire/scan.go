package wire

import (
	"encoding/binary"
	"fmt"
)

// SyntaxError reports malformed JSON at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

// Error formats the offset and the problem.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("wire: invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// scanner walks JSON tokens over a byte slice. Every method bounds-checks,
// so malformed input yields a *SyntaxError, never a panic.
type scanner struct {
	data []byte
	pos  int
}

func (s *scanner) errf(msg string) error { return &SyntaxError{Offset: s.pos, Msg: msg} }

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

// expect consumes byte c after optional space.
func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		if s.pos >= len(s.data) {
			return s.errf(fmt.Sprintf("unexpected end of input, want %q", c))
		}
		return s.errf(fmt.Sprintf("found %q, want %q", s.data[s.pos], c))
	}
	s.pos++
	return nil
}

// stringToken consumes a string and returns it with its quotes, and
// whether it contains escapes.
func (s *scanner) stringToken() ([]byte, bool, error) {
	if s.peek() != '"' {
		return nil, false, s.errf("want a string")
	}
	start := s.pos
	escaped := false
	d := s.data
	i := s.pos + 1
	for i < len(d) {
		// Eight bytes at a time while none of them is a quote, a
		// backslash or a control character; then byte by byte through
		// the word that holds one.
		if i+8 <= len(d) && !specialIn(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
			continue
		}
		for end := min(i+8, len(d)); i < end; i++ {
			switch c := d[i]; {
			case c == '"':
				s.pos = i + 1
				return d[start:s.pos], escaped, nil
			case c == '\\':
				escaped = true
				i++ // the escaped byte
			case c < 0x20:
				s.pos = i
				return nil, false, s.errf("control character in string")
			}
		}
	}
	s.pos = len(d)
	return nil, false, s.errf("unterminated string")
}

// Byte-wise tests on a word of eight bytes (each exact about whether
// some byte matches, which is all specialIn asks).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialIn reports whether one of the eight bytes of w is a quote, a
// backslash or below 0x20: a byte a JSON string scan must stop at.
func specialIn(w uint64) bool {
	quote := w ^ (ones * '"')
	slash := w ^ (ones * '\\')
	return ((quote-ones)&^quote|(slash-ones)&^slash|(w-ones*0x20)&^w)&highs != 0
}

// numberToken consumes a JSON number with the standard grammar.
func (s *scanner) numberToken() ([]byte, error) {
	d := s.data
	start := s.pos
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, s.errf("malformed number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errf("malformed number: no digits after '.'")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			return nil, s.errf("malformed number: no digits in exponent")
		}
	}
	s.pos = i
	return d[start:i], nil
}

// literal consumes true, false or null.
func (s *scanner) literal(word string) ([]byte, error) {
	end := s.pos + len(word)
	if end > len(s.data) || string(s.data[s.pos:end]) != word {
		return nil, s.errf("invalid literal")
	}
	tok := s.data[s.pos:end]
	s.pos = end
	return tok, nil
}

// valueToken consumes one value and returns its raw bytes; objects and
// arrays are skipped whole (their raw bytes are returned too).
func (s *scanner) valueToken() ([]byte, error) {
	switch c := s.peek(); c {
	case '"':
		tok, _, err := s.stringToken()
		return tok, err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '{', '[':
		return s.compound()
	case 0:
		return nil, s.errf("unexpected end of input, want a value")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return s.numberToken()
		}
		return nil, s.errf(fmt.Sprintf("unexpected %q, want a value", c))
	}
}

// compound consumes an object or array, checking its structure.
func (s *scanner) compound() ([]byte, error) {
	start := s.pos
	if s.data[s.pos] == '[' {
		s.pos++
		if s.peek() == ']' {
			s.pos++
			return s.data[start:s.pos], nil
		}
		for {
			if _, err := s.valueToken(); err != nil {
				return nil, err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return s.data[start:s.pos], nil
			default:
				return nil, s.errf("want ',' or ']' in array")
			}
		}
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		return s.data[start:s.pos], nil
	}
	for {
		if _, _, err := s.stringToken(); err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		if _, err := s.valueToken(); err != nil {
			return nil, err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return s.data[start:s.pos], nil
		default:
			return nil, s.errf("want ',' or '}' in object")
		}
	}
}

// end checks that only space follows.
func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.errf("unexpected data after the top-level value")
	}
	return nil
}
