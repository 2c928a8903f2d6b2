package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestSourceOf: a row holding a copy reads its source: found once the
// engine wrote the copy, gone with the entity, and refused for a row that
// holds no copy, an unknown copy name and bad keys.
func TestSourceOf(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fCopy})
		card := mustJoin("Sales", "c0")
		ann := &Employee{Dept: "Sales", ID: "c0", Email: "ann@x.com", LastName: "Jones"}
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if _, err := f.m.SourceOf(ctx, "card", "cards", card); !store.EntityNotFound(err) {
			t.Fatalf("before the engine wrote the copy: %v", err)
		}
		f.drain(t)
		got, err := f.m.SourceOf(ctx, "card", "cards", card)
		if err != nil || got.ID != "c0" || got.Dept != "Sales" || got.Email != "ann@x.com" || got.ETag == "" {
			t.Fatalf("SourceOf the card: %+v, %v", got, err)
		}
		// A row of the copy's table that holds no copy.
		if _, err := f.m.SourceOf(ctx, "card", "cards", mustJoin("Ops", "c1")); !store.EntityNotFound(err) {
			t.Fatalf("a row without a copy: %v", err)
		}
		if _, err := f.m.SourceOf(ctx, "nosuch", "cards", card); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("an unknown copy: %v", err)
		}
		if _, err := f.m.SourceOf(ctx, "card", "cards", "bad/key"); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a bad key: %v", err)
		}
		// Deleted: the copy is left until the engine removes it, and is
		// never taken for a source meanwhile.
		if err := f.m.Delete(ctx, "Sales", "c0", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.m.SourceOf(ctx, "card", "cards", card); !store.EntityNotFound(err) {
			t.Fatalf("after the delete, before the engine ran: %v", err)
		}
		f.drain(t)
		if _, err := f.m.SourceOf(ctx, "card", "cards", card); !store.EntityNotFound(err) {
			t.Fatalf("after the delete: %v", err)
		}
	})
}
