package keys

import (
	"unicode/utf8"
)

// Compare compares a and b the way the Table service orders keys: by
// ordinal comparison of their UTF-16 code units. It returns -1 if a sorts
// first, +1 if b sorts first and 0 if they are equal.
//
// This differs from Go's a < b (byte-wise UTF-8, i.e. code point order)
// only when the first differing characters are one in U+E000-U+FFFF and
// one at or above U+10000: UTF-16 puts the latter first, as surrogate
// pairs (U+D800-U+DFFF) sort below U+E000. Use Compare when a test or an
// in-memory engine must agree with the service. Invalid UTF-8 bytes
// compare as U+FFFD, ties broken by their byte values.
func Compare(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	// Back up to the start of the character that differs; the bytes before
	// i are shared, so the character boundary is the same in both. Testing
	// both strings keeps the result antisymmetric for invalid UTF-8.
	for i > 0 && (!utf8.RuneStart(a[i]) || !utf8.RuneStart(b[i])) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra != rb {
		if utf16Rank(ra) < utf16Rank(rb) {
			return -1
		}
		return 1
	}
	// Equal runes at a differing byte: invalid UTF-8 decoded to U+FFFD.
	if a[i:] < b[i:] {
		return -1
	}
	return 1
}

// utf16Rank maps a code point to a number whose order is the order of
// its UTF-16 encoding: BMP characters below the surrogates keep their
// value, supplementary characters (encoded as surrogate pairs D800-DFFF)
// come next, and U+E000-U+FFFF sort last.
func utf16Rank(r rune) int32 {
	if r >= 0xE000 && r <= 0xFFFF {
		return r + 0x110000
	}
	return r
}

// UTF16Len counts the UTF-16 code units of s: a character beyond the
// Basic Multilingual Plane counts twice. Invalid bytes count as one unit
// each (they would become U+FFFD).
//
// UTF16Len is the unit the service measures keys, property names and
// strings in: a key may hold MaxKeyUnits of them.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
