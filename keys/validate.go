package keys

import (
	"fmt"
	"unicode/utf8"
)

// MaxKeyUnits is the longest legal PartitionKey or RowKey, in UTF-16 code
// units (the service's 1 KiB key limit).
const MaxKeyUnits = 1024

// ValidKey reports whether s is a legal PartitionKey or RowKey: valid
// UTF-8, at most [MaxKeyUnits] UTF-16 code units, and free of '/', '\',
// '#', '?' and the control characters U+0000-U+001F and U+007F-U+009F.
// The empty string is a legal key. The error wraps [ErrInvalidKey] and
// names the offending character, its byte offset and the rule.
func ValidKey(s string) error {
	if n := UTF16Len(s); n > MaxKeyUnits {
		return fmt.Errorf("%w: %s is %d UTF-16 code units long, the limit is %d", ErrInvalidKey, quote(s), n, MaxKeyUnits)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%w: %s has an invalid UTF-8 byte 0x%02X at offset %d", ErrInvalidKey, quote(s), s[i], i)
		}
		if forbidden(r) {
			return fmt.Errorf("%w: %s contains %s at offset %d: keys may not contain '/', '\\', '#', '?' or control characters U+0000-U+001F, U+007F-U+009F",
				ErrInvalidKey, quote(s), describeRune(r), i)
		}
		i += size
	}
	return nil
}

// forbidden reports whether the service rejects r anywhere in a key.
func forbidden(r rune) bool {
	switch {
	case r == '/' || r == '\\' || r == '#' || r == '?':
		return true
	case r <= 0x1F || (r >= 0x7F && r <= 0x9F):
		return true
	}
	return false
}

// describeRune names a character for an error message: printable ones
// quoted, control characters by their code point.
func describeRune(r rune) string {
	if r <= 0x1F || (r >= 0x7F && r <= 0x9F) {
		return fmt.Sprintf("control character U+%04X", r)
	}
	return fmt.Sprintf("%q (U+%04X)", r, r)
}

// quote quotes s for an error message, cutting long values so that errors
// stay readable.
func quote(s string) string {
	const limit = 64
	if len(s) <= limit {
		return fmt.Sprintf("%q", s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}
