package tkotel_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A worker's message is an eventual.Handle span, the parent of the
// requests its step makes, and the queue's gauges follow the receives.
func TestEventualWorkerSpans(t *testing.T) {
	k := newKit(t)
	st := k.in.Store(memstore.New())
	ctx := context.Background()
	for _, name := range []string{"Current", "Archive"} {
		if err := st.CreateTable(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := eventual.New(st, "moves", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Write(ctx, "Current", "Sales", func(tx *eventual.Tx) error {
		if err := tx.Insert("employee", store.Entity{RowKey: "000123"}); err != nil {
			return err
		}
		return tx.Then(ctx, "000123", eventual.Upsert("Archive", store.Entity{PartitionKey: "Sales", RowKey: "000123"}))
	}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	spans := k.spans.Ended()
	handles := spansNamed(spans, "eventual.Handle")
	if len(handles) != 1 {
		t.Fatalf("%d eventual.Handle spans, want 1", len(handles))
	}
	if v, _ := attr(handles[0], "tablekit.outcome"); v.AsString() != "done" {
		t.Errorf("eventual.Handle outcome %q", v.AsString())
	}
	children := map[string]int{}
	for _, s := range spans {
		if s.Parent().SpanID() == handles[0].SpanContext().SpanID() {
			children[s.Name()]++
		}
	}
	if children["Table.Insert Archive"] != 1 || children["Queue.DeleteMessage moves"] != 1 {
		t.Errorf("eventual.Handle's children: %v", children)
	}
	t.Logf("eventual.Handle's children: %v", children)
}
