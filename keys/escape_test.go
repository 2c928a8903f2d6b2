package keys

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestEscapeByHand(t *testing.T) {
	// Expected values written from the escaping table in escape.go.
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a/b", "a.2Fb"},
		{"a.b", "a.2Eb"},
		{"x y", "x 20y"},
		{"tab\t", "tab 09"},
		{"#1", "\"23" + "1"},
		{`say "hi"`, "say 20\"22hi\"22"},
		{"why?", "why>3F"},
		{"a>b", "a>3Eb"},
		{`c:\dir`, "c:[5Cdir"},
		{"[x]", "[5Bx]"},
		{"~", "~7E"},
		{"\x7f\u0080\u009f", "~7F~80~9F"},
		{"\u00A0é日\U0001F600", "\u00A0é日\U0001F600"},
		{" !", " 20!"},
	}
	for _, c := range cases {
		got, err := Escape(c.in)
		if err != nil || got != c.want {
			t.Errorf("Escape(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestEscapeProperties(t *testing.T) {
	rng := newRand(2)
	for i := 0; i < 20000; i++ {
		a, b := randString(rng, 8), randString(rng, 8)
		ea, err := Escape(a)
		if err != nil {
			t.Fatalf("Escape(%q): %v", a, err)
		}
		eb, err := Escape(b)
		if err != nil {
			t.Fatalf("Escape(%q): %v", b, err)
		}
		if err := ValidKey(ea); err != nil {
			t.Fatalf("Escape(%q) = %q is not a legal key: %v", a, ea, err)
		}
		back, err := Unescape(ea)
		if err != nil || back != a {
			t.Fatalf("Unescape(Escape(%q)) = %q, %v", a, back, err)
		}
		if got, want := Compare(ea, eb), refCompare(a, b); got != want {
			t.Fatalf("UTF-16 order: Compare(Escape(%q), Escape(%q)) = %d, originals compare %d", a, b, got, want)
		}
		if got, want := byteCompare(ea, eb), byteCompare(a, b); got != want {
			t.Fatalf("byte order: Escape(%q) vs Escape(%q) = %d, originals %d", a, b, got, want)
		}
	}
}

func TestEscapeEveryLowCharacter(t *testing.T) {
	// Exhaustive over the characters the escaping treats specially:
	// order and round trip between every pair, followed by a tail so that
	// prefix effects show.
	var all []string
	for r := rune(0); r < 0x180; r++ {
		all = append(all, string(r), string(r)+"!", string(r)+"\x00")
	}
	esc := make([]string, len(all))
	units := make([][]uint16, len(all))
	for i, s := range all {
		units[i] = utf16.Encode([]rune(s))
		e, err := Escape(s)
		if err != nil {
			t.Fatal(err)
		}
		esc[i] = e
		if back, err := Unescape(e); err != nil || back != s {
			t.Fatalf("Unescape(%q) = %q, %v; want %q", e, back, err, s)
		}
	}
	for i := range all {
		for j := range all {
			if Compare(esc[i], esc[j]) != slices.Compare(units[i], units[j]) {
				t.Fatalf("order of %q (%q) and %q (%q) not kept", all[i], esc[i], all[j], esc[j])
			}
		}
	}
}

func TestEscapeErrors(t *testing.T) {
	if _, err := Escape("ok\xffno"); !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "offset 2") {
		t.Errorf("Escape of invalid UTF-8: %v, want ErrInvalidKey naming offset 2", err)
	}
	// 341 slashes escape to 1023 units; 342 to 1026.
	if _, err := Escape(strings.Repeat("/", 341)); err != nil {
		t.Errorf("341 slashes: %v, want nil", err)
	}
	_, err := Escape(strings.Repeat("/", 342))
	if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "1026") || !strings.Contains(err.Error(), "1024") {
		t.Errorf("342 slashes: %v, want ErrInvalidKey naming 1026 and the limit 1024", err)
	}
}

func TestUnescapeRejects(t *testing.T) {
	cases := []struct{ in, mention string }{
		{"a/b", "'/'"},
		{"x\ty", "U+0009"},
		{"a.", "offset 1"},
		{"a.2", "offset 1"},
		{"a.2f", "offset 1"},                       // lower-case hex is not canonical
		{"a.41", "lead '.' does not cover U+0041"}, // '.' does not cover 'A'
		{"a~A0", "U+00A0"},                         // U+00A0 needs no escape
		{"a 21", "U+0021"},                         // '!' is never escaped
		{"a !b", "offset 1"},                       // separator outside a compound key
		{"x y", "offset 1"},                        // bare space
		{"\"", "offset 0"},                         // bare lead at the end
		{"\xc3", "0xC3"},                           // invalid UTF-8
		{"ok[5B[", "offset 5"},                     // trailing bare lead
		{"~7E~7", "offset 3"},                      // truncated escape
		{"[5D", "lead '[' does not cover U+005D"},  // ']' is not escaped
		{">40", "lead '>' does not cover U+0040"},  // '@' is not escaped
	}
	for _, c := range cases {
		got, err := Unescape(c.in)
		if err == nil {
			t.Errorf("Unescape(%q) = %q, want an error", c.in, got)
			continue
		}
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("Unescape(%q) = %v, want ErrMalformed mentioning %s", c.in, err, c.mention)
		}
	}
}

func TestEscapedPrefixRange(t *testing.T) {
	// The code is prefix-free, so PrefixRange(Escape(p)) holds exactly the
	// escaped strings that start with p.
	rng := newRand(16)
	for i := 0; i < 20000; i++ {
		p, s := randString(rng, 2), randString(rng, 4)
		if rng.IntN(2) == 0 {
			s = p + s
		}
		ep, _ := Escape(p)
		es, _ := Escape(s)
		if got, want := PrefixRange(ep).Contains(es), strings.HasPrefix(s, p); got != want {
			t.Fatalf("PrefixRange(Escape(%q)).Contains(Escape(%q)) = %v, want %v", p, s, got, want)
		}
	}
}

func TestUnescapeRejectsC1AndQuotesLongInput(t *testing.T) {
	if _, err := Unescape("a\u0085"); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "U+0085 at offset 1") {
		t.Errorf("Unescape with a C1 control: %v", err)
	}
	// A long key is cut at a character boundary in the message.
	_, err := Unescape(strings.Repeat("é", 100) + "/")
	if err == nil || !strings.Contains(err.Error(), "... (201 bytes)") || !strings.Contains(err.Error(), "offset 200") {
		t.Errorf("long input error: %v", err)
	}
}
