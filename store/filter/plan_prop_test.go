package filter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// randKeyFilter writes a random filter over PartitionKey, RowKey and one
// custom property, with and, or and not, from a small alphabet of values
// so that bounds collide often.
func randKeyFilter(r *rand.Rand, depth int, budget *int) string {
	vals := []string{"", "a", "ab", "b", "c", "\uE000", "\U0001F600"}
	ops := []string{"eq", "ne", "gt", "ge", "lt", "le"}
	if depth == 0 || *budget <= 1 || r.IntN(3) == 0 {
		*budget--
		switch r.IntN(7) {
		case 0:
			return fmt.Sprintf("N %s %d", ops[r.IntN(6)], r.IntN(3))
		case 1:
			return fmt.Sprintf("PartitionKey %s %d", ops[r.IntN(6)], r.IntN(3))
		case 2, 3, 4:
			return fmt.Sprintf("PartitionKey %s '%s'", ops[r.IntN(6)], vals[r.IntN(len(vals))])
		}
		return fmt.Sprintf("RowKey %s '%s'", ops[r.IntN(6)], vals[r.IntN(len(vals))])
	}
	switch r.IntN(3) {
	case 0:
		return "not (" + randKeyFilter(r, depth-1, budget) + ")"
	case 1:
		return "(" + randKeyFilter(r, depth-1, budget) + ") and (" + randKeyFilter(r, depth-1, budget) + ")"
	}
	return "(" + randKeyFilter(r, depth-1, budget) + ") or (" + randKeyFilter(r, depth-1, budget) + ")"
}

// walkCovers reports whether walking r from Start to Past visits the key.
func walkCovers(r KeyRange, pk, rk string) bool {
	spk, srk, ok := r.Start()
	if ok {
		if c := store.CompareOrdinal(pk, spk); c < 0 || (c == 0 && store.CompareOrdinal(rk, srk) < 0) {
			return false
		}
	}
	return !r.Past(pk, rk)
}

// TestPlanCoversMatches proves on random filters that every matching key
// lies in one range (correctness for an engine that visits only the
// ranges), and that no key is walked by two ranges (no duplicates).
func TestPlanCoversMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := []string{"", "a", "a\x00", "aa", "ab", "abc", "b", "ba", "c", "d", "\uE000", "\U0001F600"}
	for i := 0; i < 3000; i++ {
		budget := store.MaxFilterComparisons
		src := randKeyFilter(r, 4, &budget)
		f, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		p := f.Plan()
		for _, pk := range keys {
			for _, rk := range keys {
				e := &store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(1)}}
				walks, contains := 0, false
				for _, kr := range p.Ranges {
					if walkCovers(kr, pk, rk) {
						walks++
					}
					if kr.Contains(pk, rk) {
						contains = true
						if !walkCovers(kr, pk, rk) {
							t.Fatalf("%q: range %s contains (%q,%q) but its walk misses it", src, rangeString(kr), pk, rk)
						}
					}
				}
				if walks > 1 {
					t.Fatalf("%q: key (%q,%q) is walked by %d ranges: %s", src, pk, rk, walks, plansString(p))
				}
				if f.Match(e) && !contains {
					t.Fatalf("%q matches (%q,%q) but no range contains it: %s", src, pk, rk, plansString(p))
				}
			}
		}
	}
}

func plansString(p Plan) string {
	var s []string
	for _, r := range p.Ranges {
		s = append(s, rangeString(r))
	}
	return p.Kind.String() + " " + strings.Join(s, "; ")
}

// TestKeyRangeNextSkipsNothing proves on random filters that a walk which
// seeks to Next whenever it meets a key outside the RowKey bounds still
// reaches every key the range contains, and that every seek moves forward.
func TestKeyRangeNextSkipsNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	names := []string{"", "a", "a\x00", "aa", "ab", "abc", "b", "ba", "c", "d", "\uE000", "\U0001F600"}
	type key struct{ pk, rk string }
	var sorted []key
	for _, pk := range names {
		for _, rk := range names {
			sorted = append(sorted, key{pk, rk})
		}
	}
	cmp := func(a, b key) int {
		if c := store.CompareOrdinal(a.pk, b.pk); c != 0 {
			return c
		}
		return store.CompareOrdinal(a.rk, b.rk)
	}
	slices.SortFunc(sorted, cmp)
	// seek returns the index of the first key at or after k.
	seek := func(k key) int {
		i, _ := slices.BinarySearchFunc(sorted, k, cmp)
		return i
	}
	seeks := 0
	for range 3000 {
		budget := store.MaxFilterComparisons
		src := randKeyFilter(r, 4, &budget)
		f, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		for _, kr := range f.Plan().Ranges {
			i := 0
			if pk, rk, ok := kr.Start(); ok {
				i = seek(key{pk, rk})
			}
			var got []key
			for i < len(sorted) && !kr.Past(sorted[i].pk, sorted[i].rk) {
				k := sorted[i]
				if npk, nrk, ok := kr.Next(k.pk, k.rk); ok {
					if cmp(key{npk, nrk}, k) <= 0 {
						t.Fatalf("%q: Next(%q, %q) = (%q, %q) does not move forward", src, k.pk, k.rk, npk, nrk)
					}
					i = seek(key{npk, nrk})
					seeks++
					continue
				}
				if kr.Contains(k.pk, k.rk) {
					got = append(got, k)
				}
				i++
			}
			var want []key
			for _, k := range sorted {
				if kr.Contains(k.pk, k.rk) {
					want = append(want, k)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q: range %s: the seeking walk found %q, the range contains %q", src, rangeString(kr), got, want)
			}
		}
	}
	if seeks == 0 {
		t.Fatal("no walk ever seeked: the test proves nothing")
	}
}
