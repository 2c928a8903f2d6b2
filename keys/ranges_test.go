package keys

import (
	"strings"
	"testing"
)

func TestPrefixRangeByHand(t *testing.T) {
	cases := []struct {
		prefix   string
		upper    string
		hasUpper bool
	}{
		{"empid_", "empid`", true},
		{"email_a", "email_b", true},
		{"a.", "a0", true},                   // '/' is skipped
		{"a\"", "a$", true},                  // '#' is skipped
		{"a>", "a@", true},                   // '?' is skipped
		{"a[", "a]", true},                   // '\' is skipped
		{"a~", "a\u00A0", true},              // U+007F-U+009F are skipped
		{"a\U0010FFFF", "a\uE000", true},     // UTF-16: E000 follows the surrogates
		{"a\uFFFF", "b", true},               // largest unit carries
		{"a\uFFFF\uFFFF", "b", true},         // repeatedly
		{"a\uD7FF", "a\U00010000", true},     // surrogate pairs follow U+D7FF
		{"a\U0001F600", "a\U0001F601", true}, // within the supplementary planes
		{"", "", false},
		{"\uFFFF", "", false},
		{"\uFFFF\uFFFF", "", false},
	}
	for _, c := range cases {
		r := PrefixRange(c.prefix)
		if r.Lower != c.prefix || r.Upper != c.upper || r.HasUpper != c.hasUpper || r.UpperIncluded {
			t.Errorf("PrefixRange(%q) = %+v, want upper %q (bounded %v)", c.prefix, r, c.upper, c.hasUpper)
		}
	}
}

func TestPrefixRangeContainsExactlyThePrefixed(t *testing.T) {
	rng := newRand(5)
	for i := 0; i < 50000; i++ {
		p := randKey(rng, 3)
		r := PrefixRange(p)
		if r.HasUpper {
			if err := ValidKey(r.Upper); err != nil {
				t.Fatalf("PrefixRange(%q).Upper = %q is not a legal key: %v", p, r.Upper, err)
			}
		}
		// Keys near the bounds: a piece of p (or of its upper bound)
		// followed by random characters.
		base := p
		if r.HasUpper && rng.IntN(2) == 0 {
			base = r.Upper
		}
		br := []rune(base)
		k := string(br[:rng.IntN(len(br)+1)]) + randKey(rng, 3)
		want := strings.HasPrefix(k, p)
		if got := r.Contains(k); got != want {
			t.Fatalf("PrefixRange(%q) = %v; Contains(%q) = %v, want %v", p, r, k, got, want)
		}
	}
}

func TestPrefixRangeInvalidUTF8(t *testing.T) {
	r := PrefixRange("a\xff")
	if r.HasUpper || r.Lower != "a\xff" {
		t.Errorf("PrefixRange of invalid UTF-8 = %+v, want unbounded from the prefix", r)
	}
}

func TestBetweenAndContains(t *testing.T) {
	r := Between("empid_000100", "empid_000200")
	for k, want := range map[string]bool{
		"empid_000100":  true,
		"empid_000150":  true,
		"empid_000199":  true,
		"empid_000199a": true,
		"empid_000200":  false,
		"empid_000099":  false,
		"empid_0002":    true, // a prefix of "empid_000200", so it sorts inside: why ids are padded
		"email_x":       false,
	} {
		if got := r.Contains(k); got != want {
			t.Errorf("Between(...).Contains(%q) = %v, want %v", k, got, want)
		}
	}
	if !Between("b", "a").Empty() || !Between("a", "a").Empty() || Between("a", "b").Empty() {
		t.Errorf("Empty: Between(b, a) and Between(a, a) must be empty, Between(a, b) must hold a")
	}
	closed := Between("a", "a")
	closed.UpperIncluded = true
	if closed.Empty() || !closed.Contains("a") {
		t.Errorf("[a, a] holds a")
	}
	if (Range{}).Empty() || !(Range{}).Contains("anything") || !(Range{}).Contains("") {
		t.Errorf("the zero Range holds every key")
	}
	if !(Range{Lower: "a", Upper: "a", HasUpper: true}).Empty() {
		t.Errorf("[a, a) is empty")
	}
	// Contains uses UTF-16 order: U+E000 is above U+10FFFF.
	if !Between("\U00010000", "\uE000").Contains("\U0010FFFF") {
		t.Errorf("U+10FFFF lies between U+10000 and U+E000 in UTF-16 order")
	}
}

func TestRangeString(t *testing.T) {
	cases := map[string]Range{
		`ge "a" and lt "b"`: PrefixRange("a"),
		`ge "a" and lt "c"`: Between("a", "c"),
		`ge ""`:             {},
	}
	for want, r := range cases {
		if got := r.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", r, got, want)
		}
	}
}
