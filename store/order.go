package store

// CompareOrdinal compares two strings the way the service orders keys and
// string values: by UTF-16 code units (ordinal order). It returns -1, 0 or
// +1.
//
// Go compares strings by UTF-8 bytes, which is code point order. The two
// orders differ in one case only: a character in U+E000..U+FFFF sorts after
// a supplementary character (U+10000 and up) in UTF-16, because the
// supplementary one is written with a surrogate in U+D800..U+DBFF, but
// before it in code point order. CompareOrdinal costs a byte comparison plus
// one check at the first differing byte.
func CompareOrdinal(a, b string) int {
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
	ca, cb := a[i], b[i]
	// The prefixes are equal, so i is a rune boundary in both strings or
	// inside runes with the same leading byte (same length class). Only a
	// 3-byte lead of U+E000..U+FFFF (0xEE, 0xEF) against a 4-byte lead
	// (0xF0..0xF4) compares differently in UTF-16.
	if (ca == 0xEE || ca == 0xEF) && cb >= 0xF0 {
		return 1
	}
	if (cb == 0xEE || cb == 0xEF) && ca >= 0xF0 {
		return -1
	}
	if ca < cb {
		return -1
	}
	return 1
}
