package store

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf16"
)

// utf16Compare is the definition: compare UTF-16 code unit sequences.
func utf16Compare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func TestCompareOrdinalMatchesUTF16Order(t *testing.T) {
	alphabet := []rune{'a', 'b', 'z', 0x7F, 0xE9, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF}
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		n := rng.IntN(5)
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	for range 20000 {
		a, b := gen(), gen()
		if got, want := CompareOrdinal(a, b), utf16Compare(a, b); got != want {
			t.Fatalf("CompareOrdinal(%q, %q) = %d, UTF-16 order says %d", a, b, got, want)
		}
	}
}

func TestCompareOrdinalSurrogateCase(t *testing.T) {
	// U+FFFD is after U+1F600 in UTF-16 (0xFFFD > 0xD83D) though before it in code points.
	if CompareOrdinal("\uFFFD", "\U0001F600") != 1 {
		t.Fatal("U+FFFD must sort after U+1F600 in ordinal (UTF-16) order")
	}
	if CompareOrdinal("\U0001F600", "\uFFFD") != -1 {
		t.Fatal("U+1F600 must sort before U+FFFD in ordinal (UTF-16) order")
	}
	if CompareOrdinal("abc", "abc") != 0 || CompareOrdinal("ab", "abc") != -1 {
		t.Fatal("prefix order broken")
	}
}
