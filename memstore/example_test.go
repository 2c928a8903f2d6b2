package memstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A memstore refuses what Azure refuses, with Azure's error codes.
func ExampleNew() {
	ctx := context.Background()
	st := memstore.New()
	if err := st.CreateTable(ctx, "Employees"); err != nil {
		panic(err)
	}
	t := st.Table("Employees")
	_, err := t.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: map[string]any{"Age": int32(36)}})
	fmt.Println("insert:", err)

	_, err = t.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "000123"})
	fmt.Println("again:", store.Code(err), errors.Is(err, store.ErrAlreadyExists))

	_, err = t.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "a/b"})
	fmt.Println("bad key:", store.Code(err))

	_, err = t.Transact(ctx, []store.Action{
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "Sales", RowKey: "1"}},
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "Support", RowKey: "2"}},
	})
	var se *store.Error
	errors.As(err, &se)
	fmt.Println("mixed batch:", se.Code, "at action", se.Index)
	// Output:
	// insert: <nil>
	// again: EntityAlreadyExists true
	// bad key: OutOfRangeInput
	// mixed batch: CommandsInBatchActOnDifferentPartitions at action 1
}

// WithShortPages catches code that reads only the first page of a query.
func ExampleWithShortPages() {
	ctx := context.Background()
	st := memstore.New(memstore.WithShortPages(1))
	_ = st.CreateTable(ctx, "Events")
	t := st.Table("Events")
	for i := range 25 {
		_, _ = t.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i)})
	}
	q := store.Query{Top: 10}
	total := 0
	for {
		page, err := t.Query(ctx, q)
		if err != nil {
			panic(err)
		}
		total += len(page.Entities)
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	fmt.Println("entities:", total)
	// Output: entities: 25
}
