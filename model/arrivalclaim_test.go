package model_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestArrivalClaimOutlivesTheLease: Ann moves from Ops to Sales with her
// global unique email. The arrival claims the email for Ann at Sales
// (taking over her copy, the claim naming the reservation) and its
// transaction fails, so Ann stays in flight, her marker at Ops holding the
// email. Past the claim lease, Bob asks for the email: it is still Ann's,
// and Bob is refused. Then the arrival runs again and Ann arrives with
// her email. Judged by the reservation alone (no entity), the claim would
// go to Bob, and Ann's arrival would be refused for good.
func TestArrivalClaimOutlivesTheLease(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		var fail atomic.Bool
		var failed atomic.Int64
		hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
			if c.Op == "Table.Transact" && c.PartitionKey == "Sales" && fail.Load() {
				for _, a := range c.Actions {
					if strings.HasPrefix(a.Entity.RowKey, "a ") { // the arrival's receipt
						failed.Add(1)
						return errors.New("injected: the arrival's transaction is refused")
					}
				}
			}
			return do(ctx)
		}
		f := newFixture(t, e, storetest.WrapStore(e.B.Store, hook), []string{fGUnique})
		f.o.Concurrency = 1
		f.restart(t)
		ann := &Employee{Dept: "Ops", ID: "ann", Email: "a@x"}
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		fail.Store(true)
		if err := f.m.Move(ctx, "Ops", "ann", f.m, "Sales", ""); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := f.eng.ProcessOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if failed.Load() > 0 {
				break
			}
		}
		if failed.Load() == 0 {
			t.Fatal("the arrival never ran")
		}
		row := f.rawGet(t, f.table, mustJoin("x", "email", "a@x"), "u")
		if row.Properties[model.SourcePartitionProperty] != "Sales" {
			t.Fatalf("the email's row names %v/%v: want the arrival's claim (Sales)", row.Properties[model.SourcePartitionProperty], row.Properties[model.SourceRowProperty])
		}
		// Past the lease of the arrival's claim.
		d := 3 * time.Minute
		if e.Fake() {
			e.Pass(d)
		} else {
			f.skew.Add(int64(d))
		}
		bob := &Employee{Dept: "Ops", ID: "bob", Email: "a@x"}
		err := f.m.Insert(ctx, bob)
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.Value != "a@x" {
			t.Fatalf("Bob's insert of Ann's email while she is in flight: %v, want a duplicate", err)
		}
		fail.Store(false)
		f.drain(t)
		if p, err := f.eng.Poisoned(ctx, 8); err != nil || len(p) != 0 {
			t.Fatalf("poison queue: %+v, %v", p, err)
		}
		got, err := f.m.Find(ctx, "email", "a@x")
		if err != nil || got.Dept != "Sales" || got.ID != "ann" {
			t.Fatalf("Find a@x after the arrival: %+v, %v; want Ann at Sales", got, err)
		}
		if _, err := f.m.Get(ctx, "Ops", "bob"); !store.EntityNotFound(err) {
			t.Fatalf("Bob: %v, want not found", err)
		}
		if r := f.verify(t); r.bad() || r.entities != 1 {
			t.Fatalf("verify: %v", r)
		}
	})
}
