package model_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestGlobalKeys: GlobalKeys names the entities holding a value of a
// global index across partitions, as soon as their writes returned (the
// claims written beside them), sorted; an entity that left the value
// drops out once the engine removed its copy; ValueOf tells which
// entities hold the value now; bad names are refused.
func TestGlobalKeys(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGIndex, fList})
		for _, x := range []Employee{
			{Dept: "Sales", ID: "b", LastName: "Jones"},
			{Dept: "Ops", ID: "a", LastName: "Jones"},
			{Dept: "Sales", ID: "a", LastName: "Jones"},
			{Dept: "Sales", ID: "c", LastName: "Smith"},
		} {
			if err := f.m.Insert(ctx, &x); err != nil {
				t.Fatal(err)
			}
		}
		want := []store.Key{{PartitionKey: "Ops", RowKey: "a"}, {PartitionKey: "Sales", RowKey: "a"}, {PartitionKey: "Sales", RowKey: "b"}}
		expect := func(want []store.Key) {
			t.Helper()
			got, err := f.m.GlobalKeys(ctx, "lastname", "Jones")
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("GlobalKeys Jones = %v, %v; want %v", got, err, want)
			}
		}
		expect(want) // before the engine ran: the claims
		f.drain(t)
		expect(want)
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "b", LastName: "Smith"}, store.Replace); err != nil {
			t.Fatal(err)
		}
		got, err := f.m.GlobalKeys(ctx, "lastname", "Jones")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range got {
			v, err := f.m.Get(ctx, k.PartitionKey, k.RowKey)
			if err != nil {
				t.Fatal(err)
			}
			val, err := f.m.ValueOf("lastname", v)
			if err != nil {
				t.Fatal(err)
			}
			if (val == "Jones") == (k == store.Key{PartitionKey: "Sales", RowKey: "b"}) {
				t.Fatalf("ValueOf %v = %q", k, val)
			}
		}
		f.drain(t)
		expect(want[:2])
		if got, err := f.m.GlobalKeys(ctx, "lastname", ""); err != nil || len(got) != 0 {
			t.Fatalf("the empty value: %v, %v", got, err)
		}
		if v, err := f.m.ValueOf("family", &Employee{LastName: "Lee"}); err != nil || v != "Lee" {
			t.Fatalf("ValueOf of a list: %q, %v", v, err)
		}
		var globals []string
		for _, ix := range f.m.Indexes() {
			if ix.Global {
				globals = append(globals, ix.Name)
			}
		}
		if !slices.Equal(f.m.ListNames(), []string{"family"}) || !slices.Equal(globals, []string{"lastname"}) {
			t.Fatalf("ListNames %v, global indexes %v", f.m.ListNames(), globals)
		}
		for _, c := range []struct {
			err  error
			want string
		}{
			{func() error { _, err := f.m.GlobalKeys(ctx, "family", "Jones"); return err }(), `no index "family"`},
			{func() error { _, err := f.m.ValueOf("nosuch", &Employee{}); return err }(), `no list or index named "nosuch"`},
			{func() error { _, err := f.m.ValueOf("family", nil); return err }(), "the entity is nil"},
		} {
			if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
				t.Errorf("%v, want %q", c.err, c.want)
			}
		}
	})
}
