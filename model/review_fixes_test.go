package model_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestGlobalKeysIn: GlobalKeys of a global index declared In a table of
// its own reads that table (it read Options.IndexTable, and found
// nothing).
func TestGlobalKeysIn(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fGIndex, fTables})
		if err := f.m.Insert(ctx, &Employee{Dept: "Sales", ID: "a", LastName: "Jones"}); err != nil {
			t.Fatal(err)
		}
		want := []store.Key{{PartitionKey: "Sales", RowKey: "a"}}
		for _, when := range []string{"before the engine ran", "after"} {
			got, err := f.m.GlobalKeys(ctx, "lastname", "Jones")
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("GlobalKeys %s = %v, %v; want %v", when, got, err, want)
			}
			f.drain(t)
		}
	})
}

// TestCopyOntoInTableRefused: a CopyTo target on a global index's row
// (its partition Join("x", index, value)) in the table the index is In
// is refused, as one in Options.IndexTable is, before anything is
// written; a row of another partition of that table is a target like any.
func TestCopyOntoInTableRefused(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	table, emails := e.B.NewTable(t, "Own"), e.B.NewTable(t, "OwnEmails")
	eng := eventualtest.NewEngine(t, e.B.Store, e.Opts("own"))
	onto := func(x *Employee) (string, string) {
		if x.Badge == "" {
			return "", ""
		}
		return x.Badge, "u"
	}
	m, err := model.Define(e.B.Store, table, &model.Options{Engine: eng, Now: e.Now},
		model.GlobalUnique("email", func(x *Employee) string { return x.Email }).In(emails),
		model.CopyTo("card", emails, onto, "LastName"))
	if err != nil {
		t.Fatal(err)
	}
	at := mustJoin("x", "email", "ann@x")
	err = m.Insert(ctx, &Employee{Dept: "Sales", ID: "bob", Email: "bob@x", Badge: at, LastName: "Jones"})
	if !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("a copy onto the index's row (%q, u) of %s: %v, want a refusal", at, emails, err)
	}
	if _, err := m.Get(ctx, "Sales", "bob"); !store.EntityNotFound(err) {
		t.Fatalf("the refused insert wrote the entity: %v", err)
	}
	if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: "cy", Email: "cy@x", Badge: "cards", LastName: "Jones"}); err != nil {
		t.Fatalf("a copy onto another row of %s: %v", emails, err)
	}
}
