package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestMoveOntoTakenGlobalValue: a Move to a model whose global
// unique index (in a table other than the source's) holds the entity's
// value for another entity is refused before anything is written, as one
// onto a value of the destination partition's unique index is; it does
// not leave the entity in flight for good.
func TestMoveOntoTakenGlobalValue(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		o := e.Opts("mvdup")
		eng := eventualtest.NewEngine(t, e.B.Store, o)
		ta, tb := e.B.NewTable(t, "DupA"), e.B.NewTable(t, "DupB")
		ea, eb := e.B.NewTable(t, "DupAE"), e.B.NewTable(t, "DupBE")
		email := func(x *Employee) string { return x.Email }
		a, err := model.Define(e.B.Store, ta, &model.Options{Engine: eng, Now: e.Now}, model.GlobalUnique("email", email).In(ea))
		if err != nil {
			t.Fatal(err)
		}
		b, err := model.Define(e.B.Store, tb, &model.Options{Engine: eng, Now: e.Now}, model.GlobalUnique("email", email).In(eb))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Insert(ctx, &Employee{Dept: "S", ID: "ann", Email: "x@x"}); err != nil {
			t.Fatal(err)
		}
		if err := b.Insert(ctx, &Employee{Dept: "S", ID: "bob", Email: "x@x"}); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, e.B.Store, ta, tb)
		var de *partition.DuplicateError
		if err := a.Move(ctx, "S", "ann", b, "O", ""); !errors.As(err, &de) || de.IndexName != "email" || de.Value != "x@x" {
			t.Fatalf("move onto an email the destination's index holds: %v, want a *partition.DuplicateError naming it", err)
		}
		// Nothing moved: ann is written at the source as before.
		if err := a.Update(ctx, &Employee{Dept: "S", ID: "ann", Email: "y@x"}, store.Replace); err != nil {
			t.Fatalf("update after the refused move: %v", err)
		}
		if err := a.Move(ctx, "S", "ann", b, "O", ""); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, e.B.Store, ta, tb)
		if g, err := b.Find(ctx, "email", "y@x"); err != nil || g.Dept != "O" {
			t.Fatalf("Find at the destination after the move: %+v, %v", g, err)
		}
	})
}
