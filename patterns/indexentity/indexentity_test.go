package indexentity

import (
	"errors"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestLifecycle is the guide's walk-through on each placement: employees
// are added, a lookup by last name returns exactly the Joneses (of Sales
// for a SamePartition list, of the company otherwise) in key order, a
// change of name moves the id between lists, a delete removes it.
func TestLifecycle(t *testing.T) {
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				f := newFixture(t, e, p, Options{}, nil)
				staff := []Employee{
					{Dept: "Sales", ID: "emp_000152", First: "Ann", Last: "Jones"},
					{Dept: "Sales", ID: "emp_000123", First: "Don", Last: "Jones"},
					{Dept: "Sales", ID: "emp_000200", First: "Bo", Last: "Smith"},
					{Dept: "Marketing", ID: "emp_000001", First: "Cy", Last: "Jones"},
					{Dept: "Sales", ID: "emp_000300", First: "Ed"}, // no last name: not listed
				}
				for i := range staff {
					must(t, f.x.Insert(ctx, &staff[i]))
					if staff[i].ETag == "" {
						t.Fatalf("insert of %s left no ETag", staff[i].ID)
					}
				}
				if err := f.x.Insert(ctx, &Employee{Dept: "Sales", ID: "emp_000152", Last: "Other"}); !errors.Is(err, store.ErrAlreadyExists) {
					t.Fatalf("second insert of an id: %v, want ErrAlreadyExists", err)
				}
				f.drain(t)
				want := []string{"Sales/emp_000123", "Sales/emp_000152"}
				if p != SamePartition {
					want = append([]string{"Marketing/emp_000001"}, want...)
				}
				if got := idsOf(collect(t, f.x.FindAll(ctx, f.scope("Sales"), "lastname", "Jones"))); !slices.Equal(got, want) {
					t.Fatalf("Joneses: %v, want %v", got, want)
				}

				// Don Jones becomes Don Smith: his id moves.
				don := staff[1]
				don.Last = "Smith"
				must(t, f.x.Update(ctx, &don))
				stale := staff[1]
				stale.First = "Donald"
				if err := f.x.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
					t.Fatalf("update with a stale ETag: %v, want ErrPreconditionFailed", err)
				}
				f.drain(t)
				want = slices.DeleteFunc(want, func(s string) bool { return s == "Sales/emp_000123" })
				if got := idsOf(collect(t, f.x.FindAll(ctx, f.scope("Sales"), "lastname", "Jones"))); !slices.Equal(got, want) {
					t.Fatalf("Joneses after the change: %v, want %v", got, want)
				}
				if got := idsOf(collect(t, f.x.FindAll(ctx, f.scope("Sales"), "lastname", "Smith"))); !slices.Equal(got, []string{"Sales/emp_000123", "Sales/emp_000200"}) {
					t.Fatalf("Smiths: %v", got)
				}

				// Ann leaves; Bo leaves by key; a delete of nobody is done.
				must(t, f.x.Delete(ctx, &staff[0]))
				must(t, f.x.DeleteKey(ctx, "Sales", "emp_000200"))
				must(t, f.x.DeleteKey(ctx, "Sales", "emp_999999"))
				if err := f.x.Delete(ctx, &staff[0]); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("second delete: %v, want ErrNotFound", err)
				}
				f.drain(t)
				keys, err := f.x.Keys(ctx, f.scope("Sales"), "lastname", "Smith")
				if err != nil || len(keys) != 1 || keys[0] != (Key{PartitionKey: "Sales", RowKey: "emp_000123"}) {
					t.Fatalf("Smiths' keys: %v, %v", keys, err)
				}
				if c := f.check(t); c.lost+c.duplicated+c.stale != 0 || c.entities != 3 {
					t.Fatalf("check: %v", c)
				}
			})
		})
	}
}
