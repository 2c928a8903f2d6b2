package wire

import (
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

var errBadEscape = errors.New("wire: invalid escape in JSON string")

// unquote returns the content of a string token (quotes included in tok).
// escaped says whether tok contains a backslash; without one the content is
// copied as is.
func unquote(tok []byte, escaped bool) (string, error) {
	if len(tok) < 2 {
		return "", errBadEscape
	}
	body := tok[1 : len(tok)-1]
	if !escaped {
		if !validUTF8(body) {
			return string(appendValid(nil, body)), nil
		}
		return string(body), nil
	}
	b, err := appendUnescaped(make([]byte, 0, len(body)), body)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// appendUnescaped appends the unescaped content of a JSON string body.
// Lone surrogates become U+FFFD, as encoding/json does.
func appendUnescaped(dst, body []byte) ([]byte, error) {
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			j := i + 1
			for j < len(body) && body[j] != '\\' {
				j++
			}
			dst = appendValid(dst, body[i:j])
			i = j
			continue
		}
		if i+1 >= len(body) {
			return nil, errBadEscape
		}
		switch body[i+1] {
		case '"', '\\', '/':
			dst = append(dst, body[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(body[i+2:])
			if !ok {
				return nil, errBadEscape
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+1 < len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if r2, ok := hex4(body[i+2:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return nil, errBadEscape
		}
		i += 2
	}
	return dst, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// validUTF8 reports whether b is valid UTF-8, fast for ASCII.
func validUTF8(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}

// appendValid appends b with each byte of invalid UTF-8 replaced by
// U+FFFD, as encoding/json reads strings.
func appendValid(dst, b []byte) []byte {
	if validUTF8(b) {
		return append(dst, b...)
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[i:i+size]...)
		}
		i += size
	}
	return dst
}
