package keys

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzCompare(f *testing.F) {
	for _, s := range []string{"", "a", "\uE000", "\U00010000", "\uFFFF", "\xff", "\xf3\xac", "ab\x80"} {
		f.Add(s, "a"+s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c := Compare(a, b)
		if c != -Compare(b, a) || (c == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d, reverse %d", a, b, c, Compare(b, a))
		}
		if utf8.ValidString(a) && utf8.ValidString(b) && c != refCompare(a, b) {
			t.Fatalf("Compare(%q, %q) = %d, UTF-16 order %d", a, b, c, refCompare(a, b))
		}
	})
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a/b", " !", "~\x7f", "\U0010FFFF", "x\xffy", "[5C"} {
		f.Add(s, s+"\x00")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, errA := Escape(a)
		eb, errB := Escape(b)
		if !utf8.ValidString(a) {
			if errA == nil {
				t.Fatalf("Escape(%q) accepted invalid UTF-8", a)
			}
			return
		}
		if errA != nil {
			if UTF16Len(a) <= MaxKeyUnits/3 {
				t.Fatalf("Escape(%q): %v", a, errA)
			}
			return
		}
		if err := ValidKey(ea); err != nil {
			t.Fatalf("Escape(%q) = %q: %v", a, ea, err)
		}
		if back, err := Unescape(ea); err != nil || back != a {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", a, back, err)
		}
		if errB == nil && Compare(ea, eb) != refCompare(a, b) {
			t.Fatalf("order of %q and %q not kept", a, b)
		}
		// Unescape never panics and accepts only canonical input.
		if s, err := Unescape(a); err == nil {
			if e, _ := Escape(s); e != a {
				t.Fatalf("Unescape accepted non-canonical %q (re-escapes to %q)", a, e)
			}
		}
	})
}

func FuzzJoinSplit(f *testing.F) {
	f.Add("a", "b", " !")
	f.Add("", "", "")
	f.Add("x y", "/", "\U0010FFFF")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		parts := []string{a, b, c}
		k, err := Join(parts...)
		if err != nil {
			return // invalid UTF-8 or too long: covered by unit tests
		}
		got, err := Split(k)
		if err != nil || !slices.Equal(got, parts) {
			t.Fatalf("Split(Join(%q)) = %q, %v", parts, got, err)
		}
		if err := ValidKey(k); err != nil {
			t.Fatalf("Join(%q) = %q: %v", parts, k, err)
		}
		// Split of arbitrary input: if accepted, it must be canonical.
		if ps, err := Split(a); err == nil {
			if j, _ := Join(ps...); j != a {
				t.Fatalf("Split accepted non-canonical %q", a)
			}
		}
	})
}

func FuzzPrefixRange(f *testing.F) {
	for _, s := range []string{"", "a", "a\uFFFF", "a\U0010FFFF", "\uD7FF", "a.", "~"} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, p, k string) {
		if ValidKey(p) != nil || ValidKey(k) != nil {
			return
		}
		r := PrefixRange(p)
		if got, want := r.Contains(k), strings.HasPrefix(k, p); got != want {
			t.Fatalf("PrefixRange(%q) = %v: Contains(%q) = %v, want %v", p, r, k, got, want)
		}
		if r.HasUpper && ValidKey(r.Upper) != nil {
			t.Fatalf("upper bound %q of legal prefix %q is not legal", r.Upper, p)
		}
	})
}
