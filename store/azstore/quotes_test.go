package azstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestQuotedKeysInBatches proves keys with single quotes work in every
// kind of transaction action on Azurite, as they do in single operations.
func TestQuotedKeysInBatches(t *testing.T) {
	st := azuriteStore(t)
	ctx := t.Context()
	name := fmt.Sprintf("quotes%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })
	tbl := st.Table(name)
	pk := "O'Brien"
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: pk, RowKey: "it's", Properties: map[string]any{"A": "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: pk, RowKey: "gone'"}); err != nil {
		t.Fatal(err)
	}
	_, err := tbl.Transact(ctx, []store.Action{
		{Kind: store.ActionUpdateMerge, Entity: store.Entity{PartitionKey: pk, RowKey: "it's", Properties: map[string]any{"B": "y"}}, IfMatch: store.ETagAny},
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: "''new", Properties: map[string]any{"C": "z'"}}},
		{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: pk, RowKey: "up'"}},
		{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: "gone'"}, IfMatch: store.ETagAny},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := tbl.Query(ctx, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entities {
		got = append(got, fmt.Sprintf("%s|%s|%v", e.PartitionKey, e.RowKey, e.Properties))
	}
	want := []string{"O'Brien|''new|map[C:z']", "O'Brien|it's|map[A:x B:y]", "O'Brien|up'|map[]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("table holds %q\nwant %q", got, want)
	}
}
