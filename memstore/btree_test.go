package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestTableStorageAgainstModel drives a table's arena, B-tree and index
// with random puts and removes and checks them against a plain map after
// every step: same size, same point reads through the index and through
// the tree, and an in-order walk from a random key that yields exactly the
// model's sorted keys from there. Compaction runs often (a tiny garbage
// floor), so moved records are checked too.
func TestTableStorageAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	tb := newTable("Model")
	tb.arena.minGarbage = 512
	model := map[[2]string]int64{}
	key := func() (string, string) {
		return fmt.Sprintf("p%02d", rng.IntN(20)), fmt.Sprintf("r%04d", rng.IntN(400))
	}
	compactions := 0
	for step := range 30000 {
		pk, rk := key()
		garbage := tb.arena.garbage
		if rng.IntN(3) == 0 {
			_, had := model[[2]string{pk, rk}]
			if (tb.get(pk, rk) != nil) != had {
				t.Fatalf("step %d: get(%s,%s) before remove disagrees with the model (had=%v)", step, pk, rk, had)
			}
			tb.remove(pk, rk)
			delete(model, [2]string{pk, rk})
		} else {
			tb.put(newRecord(pk, rk, int64(step), map[string]any{"S": int32(step)}))
			model[[2]string{pk, rk}] = int64(step)
		}
		if tb.arena.garbage < garbage { // only a compaction lowers it
			compactions++
		}
		if tb.tree.size != len(model) || tb.index.count != len(model) {
			t.Fatalf("step %d: tree %d, index %d, model %d", step, tb.tree.size, tb.index.count, len(model))
		}
		if step%1000 == 0 {
			checkWalk(t, tb, model, rng)
		}
	}
	checkWalk(t, tb, model, rng)
	for k, ts := range model {
		r := tb.get(k[0], k[1])
		if r == nil || r.ts() != ts || r.pk() != k[0] || r.rk() != k[1] {
			t.Fatalf("get(%v) = %v, want ts %d", k, r, ts)
		}
		if x := tb.tree.get(k[0], k[1]); x == 0 || tb.arena.get(x).ts() != ts {
			t.Fatalf("tree get(%v) disagrees", k)
		}
		if v := r.entity(nil).Properties["S"]; v != int32(ts) {
			t.Fatalf("record %v decodes S = %v, want %d", k, v, ts)
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction ran: the test does not cover moved records")
	}
	for k := range model {
		tb.remove(k[0], k[1])
	}
	if tb.tree.size != 0 || tb.index.count != 0 || tb.get("p00", "r0000") != nil || tb.arena.live != 0 {
		t.Fatalf("table not empty after removing everything: tree %d, index %d, live %d", tb.tree.size, tb.index.count, tb.arena.live)
	}
}

func checkWalk(t *testing.T, tb *table, model map[[2]string]int64, rng *rand.Rand) {
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
	tb.tree.ascend(fromPK, fromRK, func(r record) bool {
		got = append(got, [2]string{r.pk(), r.rk()})
		return true
	})
	if !slices.Equal(got, want) {
		t.Fatalf("walk from (%s,%s): got %d keys, want %d", fromPK, fromRK, len(got), len(want))
	}
	n := 0
	tb.tree.ascend(fromPK, fromRK, func(record) bool { n++; return n < 3 })
	if n != min(3, len(want)) {
		t.Fatalf("early stop visited %d, want %d", n, min(3, len(want)))
	}
}

func TestBTreeOrdinalOrder(t *testing.T) {
	tb := newTable("Order")
	// U+FFFD sorts after U+1F600 in the service's UTF-16 order.
	for _, rk := range []string{"\uFFFD", "\U0001F600", "a", "", "Z"} {
		tb.put(newRecord("p", rk, 0, nil))
	}
	var got []string
	tb.tree.ascend("", "", func(r record) bool { got = append(got, r.rk()); return true })
	want := []string{"", "Z", "a", "\U0001F600", "\uFFFD"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
	if store.CompareOrdinal(want[3], want[4]) != -1 {
		t.Fatal("test premise broken")
	}
}

func TestArenaBigRecordsAndIndexGrowth(t *testing.T) {
	tb := newTable("Big")
	big := make([]byte, store.MaxBinaryBytes)
	for i := range 100 { // 100 x 64 KiB: several chunks, index rehashes
		tb.put(newRecord("p", fmt.Sprintf("%03d", i), int64(i), map[string]any{"B": big}))
	}
	if len(tb.arena.chunks) < 2 {
		t.Fatalf("100 records of 64 KiB fit in %d chunk(s)", len(tb.arena.chunks))
	}
	for i := range 100 {
		r := tb.get("p", fmt.Sprintf("%03d", i))
		if r == nil || r.ts() != int64(i) || len(r.entity(nil).Properties["B"].([]byte)) != len(big) {
			t.Fatalf("record %d lost", i)
		}
	}
}
