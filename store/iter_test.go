package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestAllFollowsEveryPage: All walks every page (memstore with short and
// empty pages), in key order, stops when the loop breaks, and yields a
// query's error.
func TestAllFollowsEveryPage(t *testing.T) {
	st := memstore.New(memstore.WithShortPages(9))
	ctx := t.Context()
	if err := st.CreateTable(ctx, "iter"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("iter")
	for i := range 250 {
		if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: map[string]any{"N": int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for e, err := range store.All(ctx, tbl, store.Query{Filter: "N ge 10", Top: 7}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.RowKey)
	}
	if len(got) != 240 || got[0] != "010" || got[239] != "249" {
		t.Fatalf("got %d entities from %v to %v, want 240 from 010 to 249", len(got), got[0], got[len(got)-1])
	}
	n := 0
	for range store.All(ctx, tbl, store.Query{}) {
		n++
		if n == 5 {
			break
		}
	}
	if n != 5 {
		t.Fatalf("break after 5 gave %d", n)
	}
	for _, err := range store.All(ctx, st.Table("missing"), store.Query{}) {
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a query of a missing table yielded %v", err)
		}
	}
}

func ExampleAll() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Readings")
	tbl := st.Table("Readings")
	for i := range 3 {
		_, _ = tbl.Insert(ctx, store.Entity{PartitionKey: "sensor-1", RowKey: fmt.Sprint(i)})
	}
	for e, err := range store.All(ctx, tbl, store.Query{Filter: "PartitionKey eq 'sensor-1'"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.PartitionKey, e.RowKey)
	}
	// Output:
	// sensor-1 0
	// sensor-1 1
	// sensor-1 2
}
