package onetomany_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
)

// TestAddLosingEveryRaceIsARace: an Add without the parent's ETag that
// loses to another writer of the family on every one of its tries gives
// up with a race to retry (partition.ErrConflict), not a row changed
// under the caller's ETag: the caller gave none. Every write of its
// transaction is refused, so the family holds no child of it.
func TestAddLosingEveryRaceIsARace(t *testing.T) {
	defer onetomany.SetBackoff(func(int) time.Duration { return 0 })()
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		name := b.NewTable(t, "famvocab")
		plain, err := onetomany.New[Employee, Review](b.Store, name, parentOf)
		if err != nil {
			t.Fatal(err)
		}
		emp := &Employee{Department: "Sales", ID: "e1", Name: "Raced"}
		if err := plain.Insert(t.Context(), emp); err != nil {
			t.Fatal(err)
		}
		// Before each of the Add's transactions, another writer of the
		// family touches the parent, so the ETag the Add read is stale.
		var tries atomic.Int32
		pk, rk, err := emp.TableKeys()
		if err != nil {
			t.Fatal(err)
		}
		raced := stepped(b.Store, func([]store.Action) {
			tries.Add(1)
			touch := store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"Name": "Other"}}
			if _, err := b.Store.Table(name).Update(context.WithoutCancel(t.Context()), touch, store.Merge, store.ETagAny); err != nil {
				t.Errorf("the racing writer: %v", err)
			}
		})
		f, err := onetomany.New[Employee, Review](raced, name, parentOf)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Add(t.Context(), &Employee{Department: "Sales", ID: "e1"}, reviews("e1", 2024)...)
		errvocab.Check(t, err, errvocab.Race, store.ErrPreconditionFailed)
		if n := tries.Load(); n < 2 {
			t.Errorf("the Add tried %d times before giving up, want several", n)
		}
		if n := rowsOf(t, b.Store.Table(name)); n != 1 {
			t.Errorf("%d rows after the refused Add, want the parent alone", n)
		}
	})
}
