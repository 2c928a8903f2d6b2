package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestBTreeAgainstModel drives the B-tree with random puts and removes and
// checks it against a plain map after every step: same size, same point
// reads, and an in-order walk from a random key that yields exactly the
// model's sorted keys from there.
func TestBTreeAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var tr btree
	model := map[[2]string]int64{}
	key := func() (string, string) {
		return fmt.Sprintf("p%02d", rng.IntN(20)), fmt.Sprintf("r%04d", rng.IntN(400))
	}
	for step := range 30000 {
		pk, rk := key()
		if rng.IntN(3) == 0 {
			got := tr.remove(pk, rk)
			_, had := model[[2]string{pk, rk}]
			if (got != nil) != had {
				t.Fatalf("step %d: remove(%s,%s) returned %v, model had=%v", step, pk, rk, got, had)
			}
			delete(model, [2]string{pk, rk})
		} else {
			prev := tr.put(&record{key: joinKey(pk, rk), pkLen: int32(len(pk)), ts: int64(step)})
			old, had := model[[2]string{pk, rk}]
			if (prev != nil) != had || (had && prev.ts != old) {
				t.Fatalf("step %d: put(%s,%s) replaced %v, model had=%v", step, pk, rk, prev, had)
			}
			model[[2]string{pk, rk}] = int64(step)
		}
		if tr.size != len(model) {
			t.Fatalf("step %d: size %d, model %d", step, tr.size, len(model))
		}
		if step%1000 == 0 {
			checkWalk(t, &tr, model, rng)
		}
	}
	checkWalk(t, &tr, model, rng)
	for k, ts := range model {
		if r := tr.get(k[0], k[1]); r == nil || r.ts != ts {
			t.Fatalf("get(%v) = %v, want ts %d", k, r, ts)
		}
	}
	// Remove everything: the tree must end empty and consistent.
	for k := range model {
		if tr.remove(k[0], k[1]) == nil {
			t.Fatalf("remove(%v) found nothing", k)
		}
	}
	if tr.size != 0 || tr.get("p00", "r0000") != nil {
		t.Fatalf("tree not empty after removing everything: size %d", tr.size)
	}
}

func checkWalk(t *testing.T, tr *btree, model map[[2]string]int64, rng *rand.Rand) {
	t.Helper()
	keys := make([][2]string, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return compareKeys(a[0], a[1], b[0], b[1]) })
	fromPK, fromRK := fmt.Sprintf("p%02d", rng.IntN(21)), fmt.Sprintf("r%04d", rng.IntN(400))
	i, _ := slices.BinarySearchFunc(keys, [2]string{fromPK, fromRK}, func(a, b [2]string) int { return compareKeys(a[0], a[1], b[0], b[1]) })
	want := keys[i:]
	var got [][2]string
	tr.ascend(fromPK, fromRK, func(r *record) bool {
		got = append(got, [2]string{r.pk(), r.rk()})
		return true
	})
	if !slices.Equal(got, want) {
		t.Fatalf("walk from (%s,%s): got %d keys, want %d", fromPK, fromRK, len(got), len(want))
	}
	// An early stop returns exactly the first few.
	n := 0
	tr.ascend(fromPK, fromRK, func(*record) bool { n++; return n < 3 })
	if n != min(3, len(want)) {
		t.Fatalf("early stop visited %d, want %d", n, min(3, len(want)))
	}
}

func TestBTreeOrdinalOrder(t *testing.T) {
	var tr btree
	// U+FFFD sorts after U+1F600 in the service's UTF-16 order.
	for _, rk := range []string{"\uFFFD", "\U0001F600", "a", "", "Z"} {
		tr.put(&record{key: joinKey("p", rk), pkLen: 1})
	}
	var got []string
	tr.ascend("", "", func(r *record) bool { got = append(got, r.rk()); return true })
	want := []string{"", "Z", "a", "\U0001F600", "\uFFFD"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
	if store.CompareOrdinal(want[3], want[4]) != -1 {
		t.Fatal("test premise broken")
	}
}
