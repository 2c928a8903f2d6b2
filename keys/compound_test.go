package keys

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestJoinByHand(t *testing.T) {
	cases := []struct {
		parts []string
		want  string
	}{
		{[]string{"000123", "2012"}, "000123 !2012"},
		{[]string{"a"}, "a"},
		{[]string{"a", ""}, "a !"},
		{[]string{"", "a"}, " !a"},
		{[]string{"a b", "c/d"}, "a 20b !c.2Fd"},
		{[]string{" !", "x"}, " 20! !x"},
	}
	for _, c := range cases {
		got, err := Join(c.parts...)
		if err != nil || got != c.want {
			t.Errorf("Join(%q) = %q, %v; want %q", c.parts, got, err, c.want)
		}
	}
	if k, err := Join(); k != "" || err != nil {
		t.Errorf("Join() = %q, %v; want empty", k, err)
	}
}

// tupleCompare is the order Join promises: part by part, a prefix first.
func tupleCompare(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := refCompare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return sign(len(a) - len(b))
}

func randTuple(rng interface{ IntN(int) int }, gen func() string) []string {
	t := make([]string, 1+rng.IntN(4))
	for i := range t {
		t[i] = gen()
	}
	return t
}

func TestJoinSplitProperties(t *testing.T) {
	rng := newRand(3)
	gen := func() string { return randString(rng, 4) }
	for i := 0; i < 20000; i++ {
		a, b := randTuple(rng, gen), randTuple(rng, gen)
		if rng.IntN(3) == 0 {
			b = append(slices.Clone(a[:rng.IntN(len(a)+1)]), b...)
		}
		ka, err := Join(a...)
		if err != nil {
			t.Fatalf("Join(%q): %v", a, err)
		}
		kb, err := Join(b...)
		if err != nil {
			t.Fatalf("Join(%q): %v", b, err)
		}
		if err := ValidKey(ka); err != nil {
			t.Fatalf("Join(%q) = %q is not a legal key: %v", a, ka, err)
		}
		back, err := Split(ka)
		if err != nil || !slices.Equal(back, a) {
			t.Fatalf("Split(Join(%q)) = %q, %v", a, back, err)
		}
		if got, want := Compare(ka, kb), tupleCompare(a, b); got != want {
			t.Fatalf("Compare(Join(%q), Join(%q)) = %d, tuple order %d (%q vs %q)", a, b, got, want, ka, kb)
		}
	}
}

func TestJoinTupleOrderFromIssue(t *testing.T) {
	tuples := [][]string{{"a", "b"}, {"a", "c"}, {"ab", ""}}
	var ks []string
	for _, tp := range tuples {
		k, err := Join(tp...)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	if !(Compare(ks[0], ks[1]) < 0 && Compare(ks[1], ks[2]) < 0) {
		t.Errorf("want %q < %q < %q", ks[0], ks[1], ks[2])
	}
}

func TestJoinErrors(t *testing.T) {
	_, err := Join("fine", "bad\xff")
	if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "part 1") {
		t.Errorf("Join with invalid UTF-8: %v, want ErrInvalidKey naming part 1", err)
	}
	_, err = Join(strings.Repeat("a", 600), strings.Repeat("b", 423))
	if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "1025") {
		t.Errorf("Join over the limit: %v, want ErrInvalidKey naming 1025 units", err)
	}
	if _, err := Join(strings.Repeat("a", 600), strings.Repeat("b", 422)); err != nil {
		t.Errorf("Join of exactly 1024 units: %v", err)
	}
}

func TestSplitRejects(t *testing.T) {
	for _, in := range []string{"a b", "a !b/", "a ", "a !b !", "a ! ", "a.2"} {
		got, err := Split(in)
		if in == "a !b !" {
			// A trailing separator is a legal empty last part.
			if err != nil || !slices.Equal(got, []string{"a", "b", ""}) {
				t.Errorf("Split(%q) = %q, %v", in, got, err)
			}
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Split(%q) = %q, %v; want ErrMalformed", in, got, err)
		}
	}
	if _, err := Split("a b"); err == nil || !strings.Contains(err.Error(), `separator " !"`) {
		t.Errorf("Split error should explain the separator, got %v", err)
	}
}

func TestPrefixOfProperties(t *testing.T) {
	rng := newRand(4)
	small := []string{"", "a", "ab", "b", " ", "!", "/", "a b", "\uFFFF", "\U0010FFFF"}
	gen := func() string { return small[rng.IntN(len(small))] }
	for i := 0; i < 20000; i++ {
		p := randTuple(rng, gen)
		p = p[:rng.IntN(len(p)+1)]
		k := randTuple(rng, gen)
		if rng.IntN(2) == 0 {
			k = append(slices.Clone(p), k...)
		}
		r, err := PrefixOf(p...)
		if err != nil {
			t.Fatal(err)
		}
		key, err := Join(k...)
		if err != nil {
			t.Fatal(err)
		}
		want := len(k) > len(p) && slices.Equal(k[:len(p)], p)
		if len(p) == 0 {
			want = true
		}
		if got := r.Contains(key); got != want {
			t.Fatalf("PrefixOf(%q) = %v; Contains(Join(%q) = %q) = %v, want %v", p, r, k, key, got, want)
		}
	}
}

func TestPrefixOfEmployeeReviews(t *testing.T) {
	r, err := PrefixOf("000123")
	if err != nil {
		t.Fatal(err)
	}
	in := [][]string{{"000123", "2012"}, {"000123", "2013"}, {"000123", ""}}
	out := [][]string{{"000123"}, {"000124", "2012"}, {"0001234", "2012"}, {"000122", "2012"}}
	for _, tp := range in {
		k, _ := Join(tp...)
		if !r.Contains(k) {
			t.Errorf("PrefixOf(000123) should contain %q", k)
		}
	}
	for _, tp := range out {
		k, _ := Join(tp...)
		if r.Contains(k) {
			t.Errorf("PrefixOf(000123) should not contain %q", k)
		}
	}
	if _, err := PrefixOf("\xff"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("PrefixOf(invalid UTF-8) = %v, want ErrInvalidKey", err)
	}
}
