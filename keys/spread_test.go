package keys

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fnv1a32 is FNV-1a written from its published definition, to pin the
// hash Spread uses independently of hash/fnv.
func fnv1a32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestFNV1aKnownVectors(t *testing.T) {
	// Published FNV-1a 32-bit test vectors.
	for s, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := fnv1a32(s); got != want {
			t.Errorf("fnv1a32(%q) = %#x, want %#x", s, got, want)
		}
	}
}

func TestSpreadIsFNV1aModN(t *testing.T) {
	rng := newRand(14)
	for i := 0; i < 20000; i++ {
		key := randString(rng, 8)
		n := 1 + rng.IntN(MaxSpread)
		if i%2 == 0 {
			n = 1 + rng.IntN(20)
		}
		got, err := Spread(key, n)
		if err != nil {
			t.Fatal(err)
		}
		want := int(fnv1a32(key) % uint32(n))
		v, err := strconv.Atoi(got)
		if err != nil || v != want || len(got) != len(strconv.Itoa(n-1)) {
			t.Fatalf("Spread(%q, %d) = %q, want bucket %d padded to %d", key, n, got, want, len(strconv.Itoa(n-1)))
		}
		if n <= 20 {
			all, _ := SpreadBuckets(n)
			if _, found := slices.BinarySearch(all, got); !found {
				t.Fatalf("Spread(%q, %d) = %q is not among SpreadBuckets", key, n, got)
			}
		}
	}
}

func TestSpreadPinnedValues(t *testing.T) {
	// Stability across versions: these must never change.
	// 0xe40c292c % 16 = 12; 0xbf9cf968 % 1000 = 3214735720 % 1000 = 720; 0x811c9dc5 % 100 = 2166136261 % 100 = 61, and % 200 = 61 padded to 3 digits.
	for _, c := range []struct {
		key  string
		n    int
		want string
	}{{"a", 16, "12"}, {"foobar", 1000, "720"}, {"", 100, "61"}, {"anything", 1, "0"}, {"", 200, "061"}} {
		if got, _ := Spread(c.key, c.n); got != c.want {
			t.Errorf("Spread(%q, %d) = %q, want %q", c.key, c.n, got, c.want)
		}
	}
}

func TestSpreadBuckets(t *testing.T) {
	cases := map[int]string{
		1:  "0",
		10: "0,1,2,3,4,5,6,7,8,9",
		11: "00,01,02,03,04,05,06,07,08,09,10",
	}
	for n, want := range cases {
		got, err := SpreadBuckets(n)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("SpreadBuckets(%d) = %q, %v; want %s", n, got, err, want)
		}
	}
	all, _ := SpreadBuckets(MaxSpread)
	if len(all) != MaxSpread || all[0] != "0000" || all[MaxSpread-1] != "9999" || !slices.IsSorted(all) {
		t.Errorf("SpreadBuckets(%d) wrong: first %q last %q", MaxSpread, all[0], all[len(all)-1])
	}
}

func TestSpreadSpreads(t *testing.T) {
	// Sequential ids, the typical hot-partition input, must not pile up:
	// with 16 buckets and 16,000 keys each bucket gets roughly 1,000.
	counts := map[string]int{}
	for i := 0; i < 16000; i++ {
		b, _ := Spread("device-"+strconv.Itoa(i), 16)
		counts[b]++
	}
	if len(counts) != 16 {
		t.Fatalf("only %d of 16 buckets used", len(counts))
	}
	for b, c := range counts {
		if c < 800 || c > 1200 {
			t.Errorf("bucket %s got %d of 16000 keys, want about 1000", b, c)
		}
	}
}

func TestSpreadRejects(t *testing.T) {
	for _, n := range []int{0, -1, MaxSpread + 1} {
		if _, err := Spread("k", n); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), strconv.Itoa(n)) {
			t.Errorf("Spread(k, %d) = %v, want ErrOutOfRange naming %d", n, err, n)
		}
		if _, err := SpreadBuckets(n); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("SpreadBuckets(%d) = %v, want ErrOutOfRange", n, err)
		}
	}
}
