package store

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// checkString agrees with utf8.ValidString and the UTF-16 length on
// random strings of ASCII, multi-byte characters and invalid bytes, at
// every offset of its eight-byte fast path.
func TestCheckStringMatchesUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "~", "é", "日", "😀", "\xff", "\xc3", "\x80", "\x00"}
	cases := 0
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(24) {
			if rng.IntN(4) == 0 {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			} else {
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		s := b.String()
		units, err := checkString("P", s)
		valid := utf8.ValidString(s)
		if valid != (err == nil) {
			t.Fatalf("%q: error %v, valid UTF-8 %v", s, err, valid)
		}
		if valid && units != len(utf16.Encode([]rune(s))) {
			t.Fatalf("%q: %d units, want %d", s, units, len(utf16.Encode([]rune(s))))
		}
		cases++
	}
	t.Logf("%d random strings checked", cases)
}
