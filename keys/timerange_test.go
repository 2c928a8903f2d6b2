package keys

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// TestInvertedTicksRange: for random ranges and times around their ends,
// a key prefix+InvertedTicks(t) (bare, or with a suffix) is in the range
// exactly when from <= t < to.
func TestInvertedTicksRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	for range 300 {
		from := base.Add(time.Duration(r.IntN(1_000_000)) * 100)
		to := from.Add(time.Duration(1+r.IntN(50)) * 100)
		rng, err := InvertedTicksRange("order_", from, to)
		if err != nil {
			t.Fatal(err)
		}
		for d := -3; d < 55; d++ {
			at := from.Add(time.Duration(d) * 100)
			k, _ := InvertedTicks(at)
			in := !at.Before(from) && at.Before(to)
			for _, key := range []string{"order_" + k, "order_" + k + " !suffix", "order_" + k + "~"} {
				if rng.Contains(key) != in {
					t.Fatalf("range [%v, %v) = %v: key of %v (%q) contained %v, want %v", from, to, rng, at, key, !in, in)
				}
			}
		}
		// Forward keys likewise.
		frng, err := TicksRange("t", from, to)
		if err != nil {
			t.Fatal(err)
		}
		for d := -3; d < 55; d++ {
			at := from.Add(time.Duration(d) * 100)
			k, _ := TicksKey(at)
			in := !at.Before(from) && at.Before(to)
			if frng.Contains("t"+k) != in || frng.Contains("t"+k+"-x") != in {
				t.Fatalf("TicksRange [%v, %v): key of %v contained %v", from, to, at, !in)
			}
		}
	}
	// Keys of another prefix are never in the range.
	rng, _ := InvertedTicksRange("order_", base, base.Add(time.Hour))
	k, _ := InvertedTicks(base.Add(time.Minute))
	if rng.Contains("customer_"+k) || !rng.Contains("order_"+k) {
		t.Fatal("the prefix does not bound the range")
	}
	// Open at the newest end, and the whole range of ticks.
	all, err := InvertedTicksRange("", MinTime, MaxTime.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{MinTime, MaxTime, base} {
		k, _ := InvertedTicks(at)
		if !all.Contains(k) {
			t.Fatalf("the whole range misses %v", at)
		}
	}
}

func TestInvertedTicksRangeRefusesBadRanges(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct{ from, to time.Time }{
		{now, now},
		{now, now.Add(-time.Second)},
		{MinTime.Add(-time.Second), now},
	} {
		if _, err := InvertedTicksRange("p", c.from, c.to); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("[%v, %v): %v, want ErrOutOfRange", c.from, c.to, err)
		}
		if _, err := TicksRange("p", c.from, c.to); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("TicksRange [%v, %v): %v, want ErrOutOfRange", c.from, c.to, err)
		}
	}
}

// TestIDAtAndIDRange: one generator makes ids for any time; IDTime reads
// the time back; IDRange holds the ids of [from, to) to the millisecond.
func TestIDAtAndIDRange(t *testing.T) {
	g := NewIDGenerator(nil, chacha(5))
	from := time.Date(2021, 6, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(10 * time.Millisecond)
	rng, err := IDRange("o-", from, to)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for ms := -3; ms < 13; ms++ {
		at := from.Add(time.Duration(ms) * time.Millisecond)
		for range 20 {
			id, err := g.At(at.Add(300 * time.Microsecond))
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("id %s twice", id)
			}
			seen[id] = true
			got, err := IDTime(id)
			if err != nil || !got.Equal(at) {
				t.Fatalf("IDTime(At(%v)) = %v, %v", at, got, err)
			}
			in := ms >= 0 && ms < 10
			if rng.Contains("o-"+id) != in {
				t.Fatalf("id of %v in [%v, %v): %v, want %v", at, from, to, !in, in)
			}
		}
	}
	if _, err := g.At(time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("At before 1970: %v", err)
	}
	if _, err := IDRange("", to, from); !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("reversed IDRange: %v", err)
	}
}

// chacha is a seeded random source for ids.
func chacha(seed byte) *rand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}
