package eventual_test

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestSourceVersions: VersionOf reads the version Write stamps on a
// source row (0 for a row without one or with another type); Ref.Read
// (store.RowRef's) finds the row, reports a deleted one as not found
// without an error, and a missing table as an error; MovedPast is false at the row's
// version and above, true below it and once the row is gone.
func TestSourceVersions(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src := e.B.NewTable(t, "vsrc")
		eng := eventualtest.NewEngine(t, st, e.Opts("ver"))
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			return tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		ref := eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}
		row, found, err := ref.Read(ctx, st)
		if err != nil || !found || row.Properties["Name"] != "a" {
			t.Fatalf("read: %v, found %v, %v", row.Properties, found, err)
		}
		v := eventual.VersionOf(&row)
		if v != res.Version || v == 0 {
			t.Fatalf("VersionOf = %d, want the write's %d", v, res.Version)
		}
		for _, c := range []struct {
			at   int64
			want bool
		}{{v - 1, true}, {v, false}, {v + 1, false}} {
			if moved, err := eventual.MovedPast(ctx, st, ref, c.at); moved != c.want || err != nil {
				t.Errorf("MovedPast(%d) of a row at %d = %v, %v; want %v", c.at, v, moved, err, c.want)
			}
		}
		for name, props := range map[string]map[string]any{
			"none": nil, "int32": {eventual.VersionProperty: int32(7)}, "string": {eventual.VersionProperty: "7"},
		} {
			want := map[string]int64{"int32": 7}[name]
			if got := eventual.VersionOf(&store.Entity{Properties: props}); got != want {
				t.Errorf("VersionOf of a row with %s = %d, want %d", name, got, want)
			}
		}

		if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error { return tx.Delete("row", "r", store.ETagAny) }); err != nil {
			t.Fatal(err)
		}
		if row, found, err := ref.Read(ctx, st); found || err != nil {
			t.Fatalf("read of a deleted row: %v, found %v, %v; want not found and no error", row.Properties, found, err)
		}
		if moved, err := eventual.MovedPast(ctx, st, ref, v+100); !moved || err != nil {
			t.Errorf("MovedPast of a deleted row = %v, %v; want true", moved, err)
		}

		gone := eventual.Ref{Table: "missing" + e.Names, PartitionKey: "p", RowKey: "r"}
		if _, found, err := gone.Read(ctx, st); found || !errors.Is(err, store.ErrNotFound) || store.Code(err) != store.CodeTableNotFound {
			t.Errorf("read of a missing table: found %v, %v; want TableNotFound", found, err)
		}
		if moved, err := eventual.MovedPast(ctx, st, gone, v); moved || store.Code(err) != store.CodeTableNotFound {
			t.Errorf("MovedPast in a missing table = %v, %v; want TableNotFound", moved, err)
		}
	})
}
