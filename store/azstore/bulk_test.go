package azstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestBulkWriterOverAzstore proves store's bulk writer runs over azstore
// unchanged: every write lands, grouped into full transactions, and a
// failing write is reported at its own position.
func TestBulkWriterOverAzstore(t *testing.T) {
	st := azuriteStore(t)
	ctx := t.Context()
	name := fmt.Sprintf("bulk%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })
	tbl := st.Table(name)
	if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p1", RowKey: "r0007"}); err != nil {
		t.Fatal(err)
	}
	acts := make([]store.Action, 1050)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: fmt.Sprintf("p%d", i%3), RowKey: fmt.Sprintf("r%04d", i),
			Properties: map[string]any{"N": int64(i)}}}
	}
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(ctx, acts)
	if err == nil {
		t.Fatal("Write succeeded although r0007 exists")
	}
	if res.Failed == 0 || res.Outcomes[7].Err == nil || store.Code(res.Outcomes[7].Err) != store.CodeEntityAlreadyExists {
		t.Fatalf("outcome of the conflicting write = %+v (failed %d)", res.Outcomes[7], res.Failed)
	}
	for i, o := range res.Outcomes {
		if o.Err == nil && o.ETag == "" {
			t.Fatalf("write %d succeeded without an ETag (the changeset response was not read)", i)
		}
	}
	n := 0
	q := store.Query{}
	for {
		page, err := tbl.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	if want := 1 + res.Written; n != want || res.Written+res.Failed != len(acts) {
		t.Errorf("table holds %d entities; written %d, failed %d of %d", n, res.Written, res.Failed, len(acts))
	}
}
