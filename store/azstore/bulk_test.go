package azstore

import (
	"fmt"
	"strings"
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

// TestBulkWriterNonASCIIOverAzstore proves the bulk writer's batches fit
// the body azstore really sends: 300 entities of 17,500 'é' (35 KB each as
// UTF-8, 105 KB as the escapes a large body travels as) all land.
func TestBulkWriterNonASCIIOverAzstore(t *testing.T) {
	st := azuriteStore(t)
	ctx := t.Context()
	name := fmt.Sprintf("bulkutf%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(ctx, name) })
	s := strings.Repeat("é", 17500)
	acts := make([]store.Action, 300)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i), Properties: map[string]any{"S": s}}}
	}
	res, err := store.NewBulkWriter(st.Table(name), store.BulkOptions{}).Write(ctx, acts)
	if err != nil {
		t.Fatalf("Write: %v (written %d of %d in %d transactions)", err, res.Written, len(acts), res.Batches)
	}
	if res.Written != len(acts) || res.Batches < 8 {
		t.Errorf("written %d of %d in %d transactions; want all, in at least 8 transactions under 4 MiB", res.Written, len(acts), res.Batches)
	}
}
