package azstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// TestRandomDateTimeFiltersMatchMemstore runs random DateTime filters over
// values 100 ns apart (several in one millisecond, and across a
// millisecond's edge) on Azurite and on memstore, and requires the same
// entities. Azurite compares DateTime at millisecond precision, so without
// azstore's widening "When gt x" and ranges inside one millisecond lose
// rows, silently.
func TestRandomDateTimeFiltersMatchMemstore(t *testing.T) {
	az := azuriteStore(t)
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2024, 5, 6, 7, 8, 9, 999_999_000, time.UTC) // 100 ns before a millisecond's edge... and more
	var times []time.Time
	for i := range 30 {
		times = append(times, base.Add(time.Duration(i-10)*100*time.Nanosecond))
	}
	var data []store.Entity
	for i, w := range times {
		data = append(data, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: map[string]any{"When": w, "N": int32(i % 3)}})
	}
	ops := []func(f filter.Field, v any) filter.Cond{
		filter.Field.Eq, filter.Field.Ne, filter.Field.Gt, filter.Field.Ge, filter.Field.Lt, filter.Field.Le,
	}
	when := func() filter.Cond {
		return ops[r.IntN(len(ops))](filter.Prop("When"), times[r.IntN(len(times))])
	}
	var queries []string
	for len(queries) < 150 {
		c := when()
		switch r.IntN(5) {
		case 1:
			c = filter.And(c, when())
		case 2:
			c = filter.Or(c, when())
		case 3:
			c = filter.And(filter.Prop("N").Eq(int32(r.IntN(3))), c)
		case 4:
			c = filter.Not(c)
		}
		if c.Err() == nil {
			queries = append(queries, c.String())
		}
	}
	name := fmt.Sprintf("randomwhen%d", time.Now().UnixNano()%1e9)
	results := make([]map[string][]string, 2)
	for i, st := range []store.Store{memstore.New(), az} {
		ctx := t.Context()
		if err := st.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })
		tbl := st.Table(name)
		for _, e := range data {
			if _, err := tbl.Insert(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		results[i] = map[string][]string{}
		for _, f := range queries {
			var keys []string
			for e, err := range store.All(ctx, tbl, store.Query{Filter: f}) {
				if err != nil {
					t.Fatalf("Query(%q): %v", f, err)
				}
				keys = append(keys, e.RowKey)
			}
			results[i][f] = keys
		}
	}
	differ := 0
	for _, f := range queries {
		if m, a := results[0][f], results[1][f]; !slices.Equal(m, a) {
			differ++
			if differ <= 5 {
				t.Errorf("%s:\nmemstore %q\nazstore  %q", f, m, a)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d DateTime filters give different entities", differ, len(queries))
	}
}
