package eventual_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// An employee leaves: the delete from Current and the intent to archive
// commit together; a worker makes the archive copy.
func ExampleEngine_Write() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Current")
	_ = st.CreateTable(ctx, "Archive")
	eng, _ := eventual.New(st, "moves", nil)
	_ = eng.Setup(ctx)

	_, _ = eng.Write(ctx, "Current", "Sales", func(tx *eventual.Tx) error {
		return tx.Insert("employee", store.Entity{RowKey: "000123", Properties: map[string]any{"Name": "Don Hall"}})
	})
	res, err := eng.Write(ctx, "Current", "Sales", func(tx *eventual.Tx) error {
		if err := tx.Delete("employee", "000123", store.ETagAny); err != nil {
			return err
		}
		return tx.Then(ctx, "000123", eventual.Upsert("Archive", store.Entity{PartitionKey: "Sales", RowKey: "000123",
			Properties: map[string]any{"Name": "Don Hall"}}))
	})
	fmt.Println("committed version", res.Version, err)

	_ = eng.Drain(ctx) // a worker, until the queue is empty
	a, err := st.Table("Archive").Get(ctx, "Sales", "000123", nil)
	fmt.Println(a.Properties["Name"], a.Properties[eventual.VersionProperty], err)
	// Output:
	// committed version 2 <nil>
	// Don Hall 2 <nil>
}
