package meter_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/meter"
)

// What common operations cost: an insert is one transaction, a batch of
// 100 writes one, a query one per page, a get of a missing row one.
func Example() {
	ctx := context.Background()
	st, m := meter.Wrap(memstore.New())
	_ = st.CreateTable(ctx, "Orders")
	tbl := st.Table("Orders")

	_, _ = tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "one"})
	var batch []store.Action
	for i := range 100 {
		batch = append(batch, store.Action{Kind: store.ActionInsert,
			Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i)}})
	}
	_, _ = tbl.Transact(ctx, batch)
	q := store.Query{Top: 50}
	for {
		p, _ := tbl.Query(ctx, q) // 101 rows: 3 pages of at most 50
		if q.Continuation = p.Continuation; q.Continuation == "" {
			break
		}
	}
	_, _ = tbl.Get(ctx, "p", "missing", nil)

	for _, e := range m.Entries() {
		fmt.Printf("%-18s billed %d\n", e.Op, e.Billed)
	}
	fmt.Println("total billed:", m.Total().Billed)
	// Output:
	// Store.CreateTable  billed 1
	// Table.Get          billed 1
	// Table.Insert       billed 1
	// Table.Query        billed 3
	// Table.Transact     billed 1
	// total billed: 7
}
