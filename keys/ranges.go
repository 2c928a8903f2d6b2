package keys

import (
	"fmt"
	"unicode/utf8"
)

// Range is an interval of keys in the service's order (see [Compare]),
// the bounds of a range query: Lower inclusive ("ge"), Upper exclusive
// ("lt") or, with UpperIncluded, inclusive ("le"). The zero Range holds
// every key.
type Range struct {
	// Lower is the smallest key in the range; "" is the smallest key of all.
	Lower string
	// Upper bounds the range from above when HasUpper is set.
	Upper string
	// HasUpper is false for a range with no upper bound.
	HasUpper bool
	// UpperIncluded makes Upper itself part of the range ("le" rather than "lt").
	UpperIncluded bool
}

// PrefixRange returns the range of every key that starts with prefix:
// ge prefix and lt the smallest string above all of them, found by
// dropping trailing characters that have no successor and replacing the
// last remaining one by the next character a key may contain, in UTF-16
// order. So "empid_" gives ["empid_", "empid`"), a prefix ending in
// U+10FFFF continues with U+E000 (UTF-16 puts U+E000-U+FFFF after all
// supplementary characters), a prefix ending in U+FFFF (the largest
// UTF-16 unit) carries into the character before it, and the empty
// prefix, or one made only of U+FFFF, has no upper bound. Characters a
// key may not contain are skipped ('.' is followed by '0', not '/'), so
// the upper bound of a legal prefix is itself a legal key.
//
// The prefix must be valid UTF-8, as every key is; for an invalid one the
// range has no upper bound (it then holds every key at or above prefix).
func PrefixRange(prefix string) Range {
	if !utf8.ValidString(prefix) {
		return Range{Lower: prefix}
	}
	runes := []rune(prefix)
	for i := len(runes) - 1; i >= 0; i-- {
		if next, ok := nextKeyRune(runes[i]); ok {
			return Range{Lower: prefix, Upper: string(runes[:i]) + string(next), HasUpper: true}
		}
	}
	return Range{Lower: prefix}
}

// nextKeyRune returns the smallest character after r, in UTF-16 order,
// that a key may contain.
func nextKeyRune(r rune) (rune, bool) {
	for {
		switch {
		case r == 0xFFFF:
			return 0, false
		case r == 0xD7FF:
			r = 0x10000 // surrogate pairs come right after U+D7FF
		case r == 0x10FFFF:
			r = 0xE000 // and U+E000-U+FFFF come after them
		default:
			r++
		}
		if !forbidden(r) {
			return r, true
		}
	}
}

// Between returns the half-open range of keys from lo up to, not
// including, hi: (RowKey ge 'empid_000100') and (RowKey lt 'empid_000200').
// Half-open like every range in tablekit (filter.PK.Between,
// mapper.Field.Between, PrefixRange), so adjacent ranges never overlap. For
// the guide's inclusive form (ge ... le ...), set UpperIncluded on the
// result. If hi does not sort after lo the range is empty.
func Between(lo, hi string) Range {
	return Range{Lower: lo, Upper: hi, HasUpper: true}
}

// Contains reports whether key lies in r, comparing in the service's
// UTF-16 order.
func (r Range) Contains(key string) bool {
	if Compare(key, r.Lower) < 0 {
		return false
	}
	if !r.HasUpper {
		return true
	}
	c := Compare(key, r.Upper)
	return c < 0 || (c == 0 && r.UpperIncluded)
}

// Empty reports whether no string at all lies in r.
func (r Range) Empty() bool {
	if !r.HasUpper {
		return false
	}
	c := Compare(r.Lower, r.Upper)
	return c > 0 || (c == 0 && !r.UpperIncluded)
}

// String renders r in the comparison operators of $filter, for logs and
// tests: `ge "a" and lt "b"`. It is not a filter expression: build those
// with the filter package, which escapes literals.
func (r Range) String() string {
	s := fmt.Sprintf("ge %q", r.Lower)
	if r.HasUpper {
		op := "lt"
		if r.UpperIncluded {
			op = "le"
		}
		s += fmt.Sprintf(" and %s %q", op, r.Upper)
	}
	return s
}
