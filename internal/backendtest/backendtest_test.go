package backendtest

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestRunReachesEveryBackend: the body runs on each backend against a
// table of its own, which exists during the test.
func TestRunReachesEveryBackend(t *testing.T) {
	var names []string
	Run(t, func(t *testing.T, b Backend) {
		names = append(names, b.Name)
		tbl := b.Store.Table(b.NewTable(t, "bt"))
		if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
			t.Fatalf("%s: insert into the new table: %v", b.Name, err)
		}
		if _, err := tbl.Get(t.Context(), "p", "missing", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s: get of a missing row: %v", b.Name, err)
		}
	})
	if len(names) == 0 || names[0] != "memstore" {
		t.Fatalf("ran on %v, want memstore first", names)
	}
}
