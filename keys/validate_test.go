package keys

import (
	"errors"
	"strings"
	"testing"
)

func TestValidKeyAccepts(t *testing.T) {
	good := []string{
		"",
		"Sales",
		"empid_000223",
		"email_jonesj@contoso.com",
		"with space and ~!$%&'()*+,-.:;<=>@[]^_`{|}",
		"\u00A0\uFFFF\U0010FFFF",
		strings.Repeat("a", MaxKeyUnits),
		strings.Repeat("\U0001F600", MaxKeyUnits/2), // two units each
	}
	for _, k := range good {
		if err := ValidKey(k); err != nil {
			t.Errorf("ValidKey(%q) = %v, want nil", k, err)
		}
	}
}

func TestValidKeyRejects(t *testing.T) {
	cases := []struct {
		key  string
		want []string // substrings the message must contain
	}{
		{"a/b", []string{`'/'`, "offset 1"}},
		{`a\b`, []string{`'\\'`, "offset 1"}},
		{"ab#", []string{`'#'`, "offset 2"}},
		{"?", []string{`'?'`, "offset 0"}},
		{"tab\there", []string{"U+0009", "offset 3"}},
		{"nul\x00", []string{"U+0000", "offset 3"}},
		{"del\x7f", []string{"U+007F", "offset 3"}},
		{"é\u0085", []string{"U+0085", "offset 2"}},
		{"\u009F", []string{"U+009F"}},
		{"bad\xffutf8", []string{"0xFF", "offset 3"}},
		{strings.Repeat("a", MaxKeyUnits+1), []string{"1025 UTF-16 code units", "limit is 1024"}},
		{strings.Repeat("\U0001F600", MaxKeyUnits/2) + "a", []string{"1025 UTF-16 code units"}},
	}
	for _, c := range cases {
		err := ValidKey(c.key)
		if err == nil {
			t.Errorf("ValidKey(%q) = nil, want an error", c.key)
			continue
		}
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v, does not wrap ErrInvalidKey", c.key, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ValidKey(%q) = %q, want it to mention %s", c.key, err, w)
			}
		}
	}
}

func TestValidKeyLongKeyMessageIsShort(t *testing.T) {
	err := ValidKey(strings.Repeat("x", 5000))
	if err == nil || len(err.Error()) > 200 {
		t.Fatalf("error for a 5000-character key should be short, got %d bytes", len(err.Error()))
	}
}

func TestValidKeyMatchesRuleDefinition(t *testing.T) {
	// Every BMP character below U+0100 against the rule as the reference states it.
	for r := rune(0); r < 0x100; r++ {
		want := r <= 0x1F || (r >= 0x7F && r <= 0x9F) || strings.ContainsRune(`/\#?`, r)
		got := ValidKey("k"+string(r)) != nil
		if got != want {
			t.Errorf("ValidKey with U+%04X: rejected=%v, want %v", r, got, want)
		}
	}
}
