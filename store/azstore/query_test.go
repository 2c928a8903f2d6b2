package azstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestQueryMatchesMemstore proves typed filters, $select and paging give
// the same pages on Azurite as on memstore, including where Azurite alone
// would match loosely (an Int64 1 against the Int32 literal 1) or fail (an
// Int64 literal against an Int32 property).
func TestQueryMatchesMemstore(t *testing.T) {
	az := azuriteStore(t)
	name := fmt.Sprintf("querymatch%d", time.Now().UnixNano()%1e9)
	data := []store.Entity{
		{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"A": "x", "B": int32(1)}},
		{PartitionKey: "p", RowKey: "2", Properties: map[string]any{"A": "y", "B": int64(1)}},
		{PartitionKey: "p", RowKey: "3", Properties: map[string]any{"A": "z", "B": 1.0}},
		{PartitionKey: "p", RowKey: "4", Properties: map[string]any{"C": "only C"}},
		{PartitionKey: "q", RowKey: "1", Properties: map[string]any{"A": "w", "B": int32(2)}},
	}
	queries := []store.Query{
		{Filter: "B eq 1"},
		{Filter: "B eq 1L"},
		{Filter: "B eq 1.0"},
		{Filter: "B ge 1", Select: []string{"A"}},
		{Filter: "A ne 'x'", Select: []string{"A", "Missing"}},
		{Select: []string{"C"}},
		{Filter: "PartitionKey eq 'p' and RowKey gt '1'", Top: 1},
	}
	results := map[string][][]store.Entity{}
	for _, st := range []struct {
		name string
		s    store.Store
	}{{"memstore", memstore.New()}, {"azstore", az}} {
		ctx := t.Context()
		if err := st.s.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.s.DeleteTable(ctx, name) })
		tbl := st.s.Table(name)
		for _, e := range data {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			var all []store.Entity
			for {
				page, err := tbl.Query(ctx, q)
				if err != nil {
					t.Fatalf("%s: Query(%+v): %v", st.name, q, err)
				}
				all = append(all, normalize(page.Entities)...)
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
			results[st.name] = append(results[st.name], all)
		}
	}
	for i, q := range queries {
		m, a := results["memstore"][i], results["azstore"][i]
		if len(m) == 0 && q.Filter != "B eq 1.0" && q.Filter != "B eq 1L" {
			t.Errorf("query %+v matched nothing on memstore: the test proves nothing", q)
		}
		if !reflect.DeepEqual(m, a) {
			t.Errorf("query %+v\nmemstore %v\nazstore  %v", q, m, a)
		}
	}
}
