package memstore_test

import (
	"fmt"
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
		Faults: faultHarness,
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

// TestMergePastLimits_Refused proves two rules the portable suite cannot
// carry, because only the service sees the stored entity a merge lands on
// (Azurite does not enforce either): a merge or upsert-merge that would
// take an entity past 252 properties or past 1 MiB by the size formula is
// refused, alone or in a transaction, and leaves the entity as it was.
func TestMergePastLimits_Refused(t *testing.T) {
	st := memstore.New()
	ctx := t.Context()
	if err := st.CreateTable(ctx, "limits"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("limits")
	full := store.Entity{PartitionKey: "p", RowKey: "full", Properties: map[string]any{}}
	for i := range store.MaxCustomProperties {
		full.Properties[fmt.Sprintf("P%03d", i)] = int32(i)
	}
	big := store.Entity{PartitionKey: "p", RowKey: "big", Properties: map[string]any{}}
	for i := range 15 {
		big.Properties[fmt.Sprintf("B%03d", i)] = make([]byte, store.MaxBinaryBytes)
	}
	tags := map[string]store.ETag{}
	for _, e := range []store.Entity{full, big} {
		tag, err := tbl.Insert(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		tags[e.RowKey] = tag
	}
	one := func(rk, name string, v any) store.Entity {
		return store.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{name: v}}
	}
	cases := []struct {
		name string
		do   func() error
		code string
	}{
		{"merge a 253rd property", func() error {
			_, err := tbl.Update(ctx, one("full", "Extra", "x"), store.Merge, store.ETagAny)
			return err
		}, store.CodeTooManyProperties},
		{"upsert-merge a 253rd property", func() error {
			_, err := tbl.Upsert(ctx, one("full", "Extra", "x"), store.Merge)
			return err
		}, store.CodeTooManyProperties},
		{"merge past 1 MiB", func() error {
			_, err := tbl.Update(ctx, one("big", "More", make([]byte, store.MaxBinaryBytes)), store.Merge, store.ETagAny)
			return err
		}, store.CodeEntityTooLarge},
		{"merge past 1 MiB in a transaction", func() error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: one("new", "A", "a")},
				{Kind: store.ActionUpsertMerge, Entity: one("big", "More", make([]byte, store.MaxBinaryBytes))},
			})
			return err
		}, store.CodeEntityTooLarge},
	}
	for _, c := range cases {
		if err := c.do(); store.Code(err) != c.code {
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
		}
	}
	for rk, tag := range tags {
		e, err := tbl.Get(ctx, "p", rk, nil)
		if err != nil || e.ETag != tag {
			t.Errorf("%s after the refused merges: ETag %s, %v; want unchanged %s", rk, e.ETag, err, tag)
		}
	}
	if _, err := tbl.Get(ctx, "p", "new", nil); store.Code(err) != store.CodeResourceNotFound {
		t.Errorf("the failed transaction's insert is visible: %v", err)
	}
}
