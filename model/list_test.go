package model_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// TestList: a list row names the ids of its partition's entities holding
// its value, through inserts, updates that change the value, merges that
// keep it, deletes and a move, each in the entity's own transaction (the
// list is right as soon as the write returns, before any worker ran).
func TestList(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		f := newFixture(t, e, nil, []string{fList})
		ids := func(pk, v string) []string {
			t.Helper()
			got, err := f.m.ListIDs(ctx, "family", pk, v)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		expect := func(pk, v string, want ...string) {
			t.Helper()
			if got := ids(pk, v); !slices.Equal(got, want) {
				t.Fatalf("list family of %s/%q = %q, want %q", pk, v, got, want)
			}
		}
		for _, x := range []Employee{
			{Dept: "Sales", ID: "b", LastName: "Jones"},
			{Dept: "Sales", ID: "a", LastName: "Jones"},
			{Dept: "Sales", ID: "c", LastName: "Smith"},
			{Dept: "Ops", ID: "d", LastName: "Jones"},
			{Dept: "Sales", ID: "e"}, // no value: in no list
		} {
			if err := f.m.Insert(ctx, &x); err != nil {
				t.Fatal(err)
			}
		}
		expect("Sales", "Jones", "a", "b")
		expect("Sales", "Smith", "c")
		expect("Ops", "Jones", "d")
		expect("Sales", "", []string(nil)...)

		// A replace that changes the value moves the id; a merge that does
		// not touch it keeps it.
		b := &Employee{Dept: "Sales", ID: "b", LastName: "Smith", N: 1}
		if err := f.m.Update(ctx, b, store.Replace); err != nil {
			t.Fatal(err)
		}
		expect("Sales", "Jones", "a")
		expect("Sales", "Smith", "b", "c")
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "c", LastName: "Smith", N: 7}, store.Merge); err != nil {
			t.Fatal(err)
		}
		expect("Sales", "Smith", "b", "c")
		if err := f.m.Upsert(ctx, &Employee{Dept: "Sales", ID: "e", LastName: "Jones"}, store.Replace); err != nil {
			t.Fatal(err)
		}
		expect("Sales", "Jones", "a", "e")

		got, err := f.m.ListOf(ctx, "family", "Sales", "Smith")
		if err != nil || len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" || got[1].N != 7 || got[0].ETag == "" {
			t.Fatalf("ListOf Smith: %+v, %v", got, err)
		}

		// The last entity leaving a value removes its row.
		if err := f.m.Delete(ctx, "Sales", "a", ""); err != nil {
			t.Fatal(err)
		}
		if err := f.m.Update(ctx, &Employee{Dept: "Sales", ID: "e", LastName: ""}, store.Replace); err != nil {
			t.Fatal(err)
		}
		expect("Sales", "Jones", []string(nil)...)
		if _, err := f.raw().Table(f.table).Get(ctx, "Sales", mustJoin("n", "family", "Jones", ""), nil); !store.EntityNotFound(err) {
			t.Fatalf("the row of a list nobody holds: %v", err)
		}

		// A move leaves the source's list at once and joins the
		// destination's when it arrives.
		if err := f.m.Move(ctx, "Sales", "b", f.m, "Ops", ""); err != nil {
			t.Fatal(err)
		}
		expect("Sales", "Smith", "c")
		f.drain(t)
		expect("Ops", "Smith", "b")
		if r := f.verify(t); r.bad() {
			t.Fatalf("after the writes: %s", r)
		}
		if rep, err := f.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check: %v, %v", rep, err)
		}
	})
}

// TestListRefusals: bad declarations and lookups are refused naming what
// is wrong (TestListSegmentLimit has the limit of a list's length).
func TestListRefusals(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	f := newFixture(t, e, nil, []string{fList})
	family := func(e *Employee) string { return e.LastName }
	for _, c := range []struct {
		name  string
		feats []model.Feature[Employee]
		want  string
	}{
		{"bad name", []model.Feature[Employee]{model.List("no-dash", family)}, `list name "no-dash"`},
		{"no value", []model.Feature[Employee]{model.List[Employee]("family", nil)}, "list family has no value function"},
		{"twice", []model.Feature[Employee]{model.List("family", family), model.List("family", family)}, "family is declared twice"},
		{"an index's name", []model.Feature[Employee]{model.Index("family", family), model.List("family", family)}, "family is declared twice"},
	} {
		o := f.mo
		o.Engine = f.eng
		_, err := model.Define(e.B.Store, f.table, &o, c.feats...)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := f.m.ListIDs(ctx, "nosuch", "Sales", "x"); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `no list named "nosuch"`) {
		t.Errorf("unknown list: %v", err)
	}
	// A value no key can hold (a RowKey holds at most 1 KiB).
	bad := &Employee{Dept: "Sales", ID: "bad", LastName: strings.Repeat("x", 1100)}
	if err := f.m.Insert(ctx, bad); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "list family") {
		t.Errorf("a value no key can hold: %v", err)
	}
	if _, err := f.m.Get(ctx, "Sales", "bad"); !store.EntityNotFound(err) {
		t.Errorf("the refused entity was written: %v", err)
	}
}
