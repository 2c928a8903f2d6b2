package keys

import (
	"strings"
	"testing"
)

func TestCompareMatchesUTF16Order(t *testing.T) {
	rng := newRand(1)
	for i := 0; i < 20000; i++ {
		a, b := randString(rng, 6), randString(rng, 6)
		if rng.IntN(3) == 0 { // share a prefix so later characters decide
			ra := []rune(a)
			b = string(ra[:rng.IntN(len(ra)+1)]) + b
		}
		if got, want := Compare(a, b), refCompare(a, b); got != want {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order says %d", a, b, got, want)
		}
		if Compare(a, b) != -Compare(b, a) {
			t.Fatalf("Compare(%q, %q) is not antisymmetric", a, b)
		}
	}
}

func TestCompareWhereUTF16AndUTF8Disagree(t *testing.T) {
	// U+E000 is above U+10000 in UTF-16 (E000 > D800) but below it in UTF-8.
	a, b := "x\uE000", "x\U00010000"
	if !(a < b) {
		t.Fatalf("test premise: %q < %q in Go's byte order", a, b)
	}
	if Compare(a, b) != 1 {
		t.Errorf("Compare(%q, %q) = %d, want 1: the service sorts U+E000 after surrogate pairs", a, b, Compare(a, b))
	}
	if Compare("\uFFFF", "\U0010FFFF") != 1 {
		t.Errorf("U+FFFF must sort after U+10FFFF in UTF-16 order")
	}
	if Compare("\uD7FF", "\U00010000") != -1 {
		t.Errorf("U+D7FF must sort before U+10000 in UTF-16 order")
	}
}

func TestCompareEqualAndPrefix(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "a", -1},
		{"abc", "abc", 0},
		{"ab", "abc", -1},
		{"b", "abc", 1},
		{"é", "e", 1},
		{"\xff", "\xfe", 1},   // invalid bytes: tie broken by byte value
		{"\xff", "\uFFFD", 1}, // invalid byte vs the real U+FFFD (EF BF BD): FF > EF
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	// Invalid UTF-8 still gives an antisymmetric order.
	for _, p := range [][2]string{{"\xf3\xac", "\xf3\xac\x80"}, {"a\xc3", "a\xc3\xa9"}, {"\xe8\x9e", "\xe8\x9e\x94"}, {"x\x80", "x\xbf"}} {
		if Compare(p[0], p[1]) != -Compare(p[1], p[0]) || Compare(p[0], p[1]) == 0 {
			t.Errorf("Compare(%q, %q) = %d, reverse %d", p[0], p[1], Compare(p[0], p[1]), Compare(p[1], p[0]))
		}
	}
	long := strings.Repeat("k", 100)
	if Compare(long+"a", long+"b") != -1 {
		t.Errorf("long common prefix: wrong order")
	}
}
