package store

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestKeyASCIIFastPathAgrees checks validateKey's one-pass ASCII check
// against the full one: on every ASCII key (each byte value at several
// places, and the lengths around the limit) they accept the same keys,
// and on keys with other characters the fast check defers.
func TestKeyASCIIFastPathAgrees(t *testing.T) {
	var keys []string
	for c := 0; c < 0x80; c++ {
		for _, at := range []int{0, 3, 9} {
			b := []byte("abcdefghij")
			b[at] = byte(c)
			keys = append(keys, string(b))
		}
	}
	keys = append(keys, "", strings.Repeat("k", MaxKeyUnits), strings.Repeat("k", MaxKeyUnits+1), strings.Repeat("k", MaxKeyUnits-1)+"/")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(0x80))
		}
		keys = append(keys, string(b))
	}
	accepted := 0
	for _, k := range keys {
		full := checkKey("RowKey", k, false) == nil
		if keyASCIIOK(k) != full {
			t.Errorf("key %q: fast check %v, full check %v", k, keyASCIIOK(k), full)
		}
		if full {
			accepted++
		}
	}
	for _, k := range []string{"é", "日本", "a\u0085b", "\xff", "a\u2028"} {
		if keyASCIIOK(k) {
			t.Errorf("fast check accepted the non-ASCII key %q", k)
		}
	}
	if accepted == 0 || accepted == len(keys) {
		t.Fatalf("%d of %d keys accepted: the cases do not exercise both answers", accepted, len(keys))
	}
	t.Logf("%d keys, %d valid, fast and full checks agree", len(keys), accepted)
}
