package keys

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The escaping replaces a character c by a lead character followed by
// the two upper-case hex digits of c. Each forbidden character shares its
// lead with a legal neighbour, and the neighbour is escaped too, so that
// the escape sequences sort exactly where the characters they replace
// would sort:
//
//	lead ' '  escapes U+0000-U+0020 (controls and the space itself)
//	lead '"'  escapes '"' and '#'
//	lead '.'  escapes '.' and '/'
//	lead '>'  escapes '>' and '?'
//	lead '['  escapes '[' and '\'
//	lead '~'  escapes '~' and U+007F-U+009F
//
// Every sequence begins with a character adjacent to the run it covers,
// and a lead never stands alone, so the code is prefix-free and monotone:
// Compare(Escape(a), Escape(b)) == Compare(a, b) for all a and b.
var leadOf = func() (t [0xA0]byte) {
	runs := []struct {
		lead   byte
		lo, hi rune
	}{
		{' ', 0x00, 0x20},
		{'"', '"', '#'},
		{'.', '.', '/'},
		{'>', '>', '?'},
		{'[', '[', '\\'},
		{'~', '~', 0x9F},
	}
	for _, run := range runs {
		for c := run.lo; c <= run.hi; c++ {
			t[c] = run.lead
		}
	}
	return t
}()

// sep separates the parts of a compound key. A space followed by '!'
// sorts below every escape sequence (" 00" and up) and every literal
// character ('!' and up), which is what makes tuple order hold.
const sep = " !"

const hexDigits = "0123456789ABCDEF"

// Escape turns any valid UTF-8 string into a legal key that [Unescape]
// turns back into s. It preserves order: for all valid a and b,
// Compare(Escape(a), Escape(b)) == Compare(a, b), and the same holds for
// Go's byte-wise order.
//
// The characters the service forbids and, to keep the order, their
// neighbours ' ', '"', '.', '>', '[' and '~' become three characters each
// (a lead and two hex digits: "a/b" becomes "a.2Fb", "x y" becomes
// "x 20y"); every other character is kept. Escape is therefore not the
// identity on strings that are already legal keys: do not mix escaped and
// unescaped keys in one range.
//
// Escape fails with [ErrInvalidKey] for a string that is not valid UTF-8
// (no UTF-16 key can represent it) and for one whose escaped form exceeds
// [MaxKeyUnits]: there the order cannot be kept within the length limit.
func Escape(s string) (string, error) {
	b, err := appendEscaped(make([]byte, 0, len(s)+8), s)
	if err != nil {
		return "", err
	}
	out := string(b)
	if n := UTF16Len(out); n > MaxKeyUnits {
		return "", fmt.Errorf("%w: escaped form of %s is %d UTF-16 code units long, the limit is %d", ErrInvalidKey, quote(s), n, MaxKeyUnits)
	}
	return out, nil
}

// appendEscaped appends the escaped form of s to dst.
func appendEscaped(dst []byte, s string) ([]byte, error) {
	// The run of ASCII that needs no escape goes in at once.
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && leadOf[s[i]] == 0 {
		i++
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if lead := leadOf[c]; lead != 0 {
				dst = append(dst, lead, hexDigits[c>>4], hexDigits[c&0xF])
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return nil, fmt.Errorf("%w: %s has an invalid UTF-8 byte 0x%02X at offset %d", ErrInvalidKey, quote(s), c, i)
		}
		if r < 0xA0 {
			dst = append(dst, leadOf[r], hexDigits[r>>4], hexDigits[r&0xF])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst, nil
}

// Unescape reverses [Escape]. It fails with [ErrMalformed] for a string
// Escape cannot have produced: a forbidden or unescaped lead character, a
// lead not followed by two upper-case hex digits of a character that lead
// covers, or a compound-key separator.
func Unescape(key string) (string, error) {
	parts, err := decode(key, false)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

// decode splits an escaped key into its unescaped parts. With allowSep
// false the separator is an error and there is exactly one part. A part
// without escapes is a substring of key; only parts with escapes are
// copied.
func decode(key string, allowSep bool) ([]string, error) {
	n := 1
	if allowSep {
		n += strings.Count(key, sep)
	}
	parts := make([]string, 0, n)
	var buf []byte // the current part unescaped, once it has an escape
	start := 0     // where the current part starts in key
	for i := 0; i < len(key); {
		c := key[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(key[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				return nil, fmt.Errorf("%w: %s has an invalid UTF-8 byte 0x%02X at offset %d", ErrMalformed, quote(key), c, i)
			case r < 0xA0:
				return nil, fmt.Errorf("%w: %s contains %s at offset %d, which an escaped key never contains", ErrMalformed, quote(key), describeRune(r), i)
			}
			if buf != nil {
				buf = append(buf, key[i:i+size]...)
			}
			i += size
			continue
		}
		if forbidden(rune(c)) {
			return nil, fmt.Errorf("%w: %s contains %s at offset %d, which an escaped key never contains", ErrMalformed, quote(key), describeRune(rune(c)), i)
		}
		if leadOf[c] != c { // a literal character
			if buf != nil {
				buf = append(buf, c)
			}
			i++
			continue
		}
		if allowSep && strings.HasPrefix(key[i:], sep) {
			if buf != nil {
				parts = append(parts, string(buf))
				buf = nil
			} else {
				parts = append(parts, key[start:i])
			}
			i += len(sep)
			start = i
			continue
		}
		if i+3 > len(key) || unhex(key[i+1]) < 0 || unhex(key[i+2]) < 0 {
			what := "an escape sequence"
			if allowSep && c == ' ' {
				what = "an escape sequence or the separator \" !\""
			}
			return nil, fmt.Errorf("%w: %s has %q at offset %d that does not start %s (lead and two upper-case hex digits)", ErrMalformed, quote(key), c, i, what)
		}
		v := unhex(key[i+1])<<4 | unhex(key[i+2])
		if v >= 0xA0 || leadOf[v] != c {
			return nil, fmt.Errorf("%w: %s has escape %q at offset %d, but lead %q does not cover U+%04X", ErrMalformed, quote(key), key[i:i+3], i, c, v)
		}
		if buf == nil {
			buf = append(make([]byte, 0, len(key)-start), key[start:i]...)
		}
		buf = utf8.AppendRune(buf, rune(v))
		i += 3
	}
	if buf != nil {
		return append(parts, string(buf)), nil
	}
	return append(parts, key[start:]), nil
}

// unhex returns the value of an upper-case hex digit, or -1.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
