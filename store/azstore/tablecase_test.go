package azstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestTableNameInAnotherCase: on Azurite, which matches table names
// case-sensitively, every entity operation through another letter case of
// the name reaches the table, as on Azure: single writes, reads, queries,
// and transactions (whose TableNotFound Azurite reports inside the batch
// answer).
func TestTableNameInAnotherCase(t *testing.T) {
	st := azuriteStore(t)
	ctx := t.Context()
	name := fmt.Sprintf("MixedCase%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })

	tx := st.Table(strings.ToLower(name))
	res, err := tx.Transact(ctx, []store.Action{
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a", Properties: map[string]any{"V": int32(1)}}},
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "b", Properties: map[string]any{"V": int32(2)}}},
	})
	if err != nil || len(res) != 2 {
		t.Fatalf("transaction through %q: %v", strings.ToLower(name), err)
	}
	up := st.Table(strings.ToUpper(name))
	if _, err := up.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "c"}); err != nil {
		t.Fatalf("insert through %q: %v", strings.ToUpper(name), err)
	}
	e, err := st.Table(name).Get(ctx, "p", "a", nil)
	if err != nil || e.Properties["V"] != int32(1) {
		t.Fatalf("the transaction's row through the creation case: %v %v", e.Properties, err)
	}
	n := 0
	for _, err := range store.All(ctx, up, store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("query through another case found %d rows, want 3", n)
	}
	// A table that does not exist in any case is still TableNotFound.
	_, err = st.Table("Nosuch"+name).Transact(ctx, []store.Action{{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}}})
	if store.Code(err) != store.CodeTableNotFound {
		t.Fatalf("transaction on a missing table: %v", err)
	}
}
