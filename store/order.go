package store

import "github.com/tablekit/tablekit/keys"

// CompareOrdinal compares two strings the way the service orders keys and
// string values: by UTF-16 code units (ordinal order). It returns -1, 0 or
// +1.
//
// Go compares strings by UTF-8 bytes, which is code point order. The two
// orders differ in one case only: a character in U+E000..U+FFFF sorts after
// a supplementary character (U+10000 and up) in UTF-16, because the
// supplementary one is written with a surrogate in U+D800..U+DBFF, but
// before it in code point order. The rule lives in keys.Compare, which the
// key-design helpers share.
func CompareOrdinal(a, b string) int { return keys.Compare(a, b) }
