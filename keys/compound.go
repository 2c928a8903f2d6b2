package keys

import (
	"fmt"
	"unsafe"
)

// Join builds a compound key from its parts: each part is escaped as by
// [Escape] and the parts are separated by the two characters " !" (space,
// exclamation mark). Any string may be a part, including one that
// contains the separator, an escape lead or a forbidden character.
//
// The string order of compound keys equals the order of their tuples:
// parts compare one by one, and a tuple that is a prefix of another sorts
// first, so ("a","b") < ("a","c") < ("ab",""). This holds because the
// separator sorts below every character an escaped part can contain.
//
// Join() with no parts and Join("") both return the empty key, which
// [Split] reads as one empty part. Join fails with [ErrInvalidKey] when a
// part is not valid UTF-8 or the result exceeds [MaxKeyUnits].
func Join(parts ...string) (string, error) {
	if len(parts) == 0 {
		return "", nil
	}
	n := len(sep) * (len(parts) - 1)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n+8)
	var err error
	for i, p := range parts {
		if i > 0 {
			b = append(b, sep...)
		}
		if b, err = appendEscaped(b, p); err != nil {
			return "", fmt.Errorf("part %d: %w", i, err)
		}
	}
	// b is not written again: the key is a view of it, not a copy.
	out := unsafe.String(unsafe.SliceData(b), len(b))
	// A key has at most as many UTF-16 units as UTF-8 bytes.
	if len(out) <= MaxKeyUnits {
		return out, nil
	}
	if u := UTF16Len(out); u > MaxKeyUnits {
		return "", fmt.Errorf("%w: compound key of %d parts is %d UTF-16 code units long, the limit is %d", ErrInvalidKey, len(parts), u, MaxKeyUnits)
	}
	return out, nil
}

// Split reverses [Join]: it returns the unescaped parts of a compound
// key. It fails with [ErrMalformed] for a key Join cannot have produced.
// Split("") returns one empty part.
func Split(key string) ([]string, error) {
	return decode(key, true)
}

// PrefixOf returns the range of every compound key whose leading parts
// equal parts and that has at least one more part: PrefixOf("000123")
// selects Join("000123", "2012"), Join("000123", "2013", "q1") and so on,
// but not Join("000123") itself (fetch that with a point query) nor
// Join("0001234", ...). With no parts it returns the range of all keys.
// It fails like [Join].
func PrefixOf(parts ...string) (Range, error) {
	if len(parts) == 0 {
		return Range{}, nil
	}
	k, err := Join(parts...)
	if err != nil {
		return Range{}, err
	}
	return PrefixRange(k + sep), nil
}
