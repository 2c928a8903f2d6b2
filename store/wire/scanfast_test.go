package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

func specialByte(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }

// TestSpecialInAgreesWithBytes checks the eight-byte test against a
// byte-by-byte one: every byte value at every position of words whose
// other bytes are ordinary (ASCII and UTF-8 continuation bytes alike), and
// random words.
func TestSpecialInAgreesWithBytes(t *testing.T) {
	fill := []byte{'a', ' ', '~', 0x7F, 0x80, 0xC3, 0xFF, '!', '#', '[', ']', '0'}
	var b [8]byte
	checked := 0
	for _, f := range fill {
		for pos := range 8 {
			for c := range 256 {
				for i := range b {
					b[i] = f
				}
				b[pos] = byte(c)
				want := specialByte(f) || specialByte(byte(c))
				if got := specialIn(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Fatalf("word % x: specialIn %v, want %v", b, got, want)
				}
				checked++
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		w := rng.Uint64()
		binary.LittleEndian.PutUint64(b[:], w)
		want := false
		for _, c := range b {
			want = want || specialByte(c)
		}
		if got := specialIn(w); got != want {
			t.Fatalf("word % x: specialIn %v, want %v", b, got, want)
		}
		checked++
	}
	t.Logf("%d words agree", checked)
}

// TestStringTokenEveryOffset puts a quote, an escape or a control
// character at every offset of strings longer than a word, and checks
// where the token ends, the escape flag and the refusal.
func TestStringTokenEveryOffset(t *testing.T) {
	for n := 0; n < 40; n++ {
		body := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		in := `"` + body + `",1`
		s := scanner{data: []byte(in)}
		tok, esc, err := s.stringToken()
		if err != nil || string(tok) != `"`+body+`"` || esc || s.pos != len(in)-2 {
			t.Fatalf("%q: token %q, escaped %v, pos %d, %v", in, tok, esc, s.pos, err)
		}
		for at := 0; at <= len(body); at++ {
			esc := `"` + body[:at] + `\"` + body[at:] + `" `
			s := scanner{data: []byte(esc)}
			tok, escaped, err := s.stringToken()
			if err != nil || string(tok) != esc[:len(esc)-1] || !escaped {
				t.Fatalf("%q: token %q, escaped %v, %v", esc, tok, escaped, err)
			}
			ctl := `"` + body[:at] + "\x01" + body[at:] + `"`
			s = scanner{data: []byte(ctl)}
			if _, _, err := s.stringToken(); err == nil || !strings.Contains(err.Error(), "control character") || s.pos != 1+at {
				t.Fatalf("%q: error %v at %d, want a control character at %d", ctl, err, s.pos, 1+at)
			}
		}
		open := `"` + body
		s = scanner{data: []byte(open)}
		if _, _, err := s.stringToken(); err == nil || !strings.Contains(err.Error(), "unterminated") {
			t.Fatalf("%q: %v, want unterminated", open, err)
		}
	}
}
