// Package naming holds what the pattern packages that take names from
// their callers share: the rule the name of an index, a list or a
// relation follows, and the shortening of a caller's value quoted in an
// error.
package naming

// MaxLen is the longest name Valid accepts, in bytes.
const MaxLen = 32

// Valid reports whether s can name an index, a list or a relation: 1 to
// MaxLen ASCII letters, digits and underscores, so that it stands in a
// key, a blob name or a property name as it is.
func Valid(s string) bool {
	if len(s) < 1 || len(s) > MaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// cutAt is how many bytes of a value Cut keeps.
const cutAt = 64

// Cut shortens a value for an error message: its first 64 bytes and
// "...", or the value itself when it is no longer.
func Cut(v string) string {
	if len(v) > cutAt {
		return v[:cutAt] + "..."
	}
	return v
}
