// Package quote holds the quoting of a caller's value in an error message
// that store and store/driver share, so that both name a long key or name
// the same way.
package quote

import (
	"fmt"
	"unicode/utf8"
)

// limit is how many bytes of a value Trunc keeps.
const limit = 64

// Trunc quotes s for an error message, cutting a value longer than 64
// bytes at a character boundary and saying how long it was, so that
// errors stay readable.
func Trunc(s string) string {
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}
