package memstore_test

import (
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestConformance runs the whole conformance suite against memstore.
func TestConformance(t *testing.T) {
	storetest.RunWith(t, storetest.Harness{
		New: func(t *testing.T) store.Store { return memstore.New() },
		NewDeleting: func(t *testing.T) store.Store {
			return memstore.New(memstore.WithTableDeleteDelay(time.Hour))
		},
	})
}

// TestConformanceShared runs the suite with one store shared by every
// subtest, as a server is shared, and with short and empty pages, as
// Azure returns at partition-server boundaries.
func TestConformanceShared(t *testing.T) {
	shared := memstore.New(memstore.WithShortPages(1))
	storetest.Run(t, func(t *testing.T) store.Store { return shared })
}

// TestTableNameCaseVariant_SameTable proves what the portable suite cannot
// (Azurite 3.35 gets it wrong): as on Azure, an entity operation through
// any letter case of a table's name reaches the same table.
func TestTableNameCaseVariant_SameTable(t *testing.T) {
	st := memstore.New()
	ctx := t.Context()
	if err := st.CreateTable(ctx, "MixedCase"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Table("mixedcase").Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": "x"}}); err != nil {
		t.Fatalf("insert through lower case: %v", err)
	}
	e, err := st.Table("MIXEDCASE").Get(ctx, "p", "r", nil)
	if err != nil || e.Properties["A"] != "x" {
		t.Fatalf("get through upper case = %v, %v; want the entity inserted through lower case", e.Properties, err)
	}
	if err := st.DeleteTable(ctx, "mixedCASE"); err != nil {
		t.Fatalf("delete through another case: %v", err)
	}
	if _, err := st.Table("MixedCase").Get(ctx, "p", "r", nil); store.Code(err) != store.CodeTableNotFound {
		t.Errorf("after delete: %v, want TableNotFound", err)
	}
}
