package keys

import (
	"math/rand/v2"
	"slices"
	"unicode/utf16"
)

// interesting are characters at the edges the package cares about:
// forbidden characters, escape leads and their neighbours, the separator,
// and the places where UTF-16 order departs from code point order.
var interesting = []rune{
	0x00, 0x01, 0x1F, ' ', '!', '"', '#', '$', '.', '/', '0', '9', ':',
	'>', '?', '@', 'A', 'F', 'G', 'Z', '[', '\\', ']', '_', '`', 'a', 'b', 'z',
	'~', 0x7F, 0x80, 0x9F, 0xA0, 0xFF, 0x100, 0xD7FF, 0xE000, 0xFFFD,
	0xFFFF, 0x10000, 0x1F600, 0x10FFFF,
}

// randRune returns an interesting character most of the time, otherwise
// any valid code point.
func randRune(rng *rand.Rand) rune {
	switch rng.IntN(4) {
	case 0:
		if rng.IntN(2) == 0 {
			return rune(rng.IntN(0xD800))
		}
		return rune(0xE000 + rng.IntN(0x110000-0xE000))
	default:
		return interesting[rng.IntN(len(interesting))]
	}
}

// randString returns a valid UTF-8 string of up to maxLen characters.
func randString(rng *rand.Rand, maxLen int) string {
	n := rng.IntN(maxLen + 1)
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = randRune(rng)
	}
	return string(rs)
}

// randKey returns a legal key of up to maxLen characters.
func randKey(rng *rand.Rand, maxLen int) string {
	n := rng.IntN(maxLen + 1)
	rs := make([]rune, 0, n)
	for len(rs) < n {
		if r := randRune(rng); !forbidden(r) {
			rs = append(rs, r)
		}
	}
	return string(rs)
}

// newRand returns a seeded generator, so failures reproduce.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15)) }

// refCompare is the service's order computed the obvious way, independent
// of Compare: encode both strings as UTF-16 and compare the units.
func refCompare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// sign folds a comparison result to -1, 0 or +1.
func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// byteCompare is Go's own string order, folded to -1, 0, +1.
func byteCompare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
