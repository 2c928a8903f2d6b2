package azstore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestRandomTransactionsMatchMemstore runs the same 150 random
// transactions (every action kind, conditional and unconditional, on a
// few rows so that they collide) on Azurite and on memstore, and requires
// the same outcome for each (success, or the same code, status and failing
// index) and the same table at the end.
func TestRandomTransactionsMatchMemstore(t *testing.T) {
	az := azuriteStore(t)
	name := fmt.Sprintf("randomtx%d", time.Now().UnixNano()%1e9)
	var outcomes [2][]string
	var final [2][]store.Entity
	for i, st := range []store.Store{memstore.New(), az} {
		r := rand.New(rand.NewPCG(4, 4)) // the same transactions on both
		ctx := t.Context()
		if err := st.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })
		tbl := st.Table(name)
		etags := map[string]store.ETag{} // the last ETag each row got
		for range 150 {
			rows := r.Perm(8)[:1+r.IntN(5)]
			acts := make([]store.Action, len(rows))
			for j, row := range rows {
				rk := fmt.Sprint(row)
				a := store.Action{Kind: store.ActionKind(r.IntN(int(store.ActionDelete) + 1)),
					Entity: store.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"V": int32(r.IntN(100))}}}
				if a.Kind.NeedsIfMatch() {
					a.IfMatch = store.ETagAny
					if tag, ok := etags[rk]; ok && tag != "" && r.IntN(2) == 0 {
						a.IfMatch = tag // current or stale
					}
				}
				acts[j] = a
			}
			res, err := tbl.Transact(ctx, acts)
			if err != nil {
				se, ok := err.(*store.Error)
				if !ok {
					t.Fatalf("backend %d: %v is not a *store.Error", i, err)
				}
				outcomes[i] = append(outcomes[i], fmt.Sprintf("%s (%d) at %d", se.Code, se.Status, se.Index))
				continue
			}
			outcomes[i] = append(outcomes[i], "ok")
			for j, a := range acts {
				etags[a.Entity.RowKey] = res[j].ETag
			}
		}
		page, err := tbl.Query(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		final[i] = normalize(page.Entities)
	}
	failed := 0
	for j := range outcomes[0] {
		if outcomes[0][j] != "ok" {
			failed++
		}
		if outcomes[0][j] != outcomes[1][j] {
			t.Errorf("transaction %d: memstore %s, azstore %s", j, outcomes[0][j], outcomes[1][j])
		}
	}
	if failed == 0 || failed == len(outcomes[0]) {
		t.Errorf("%d of %d transactions failed: the test needs both outcomes", failed, len(outcomes[0]))
	}
	if !reflect.DeepEqual(final[0], final[1]) {
		t.Errorf("the tables differ at the end:\nmemstore %v\nazstore  %v", final[0], final[1])
	}
}
