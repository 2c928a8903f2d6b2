package model_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// afterClaimStamp returns a store whose hook, once armed, runs just after
// the first claim stamp (a Merge of TkClaim onto a row) that succeeds:
// the moment a write has claimed a value and not yet written its entity.
func afterClaimStamp(st store.Store) (store.Store, func(func())) {
	var armed atomic.Pointer[func()]
	hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		err := do(ctx)
		if err != nil || c.Op != "Table.Update" || c.Action.Kind != store.ActionUpdateMerge {
			return err
		}
		if e, eerr := c.Entity(); eerr == nil && e.Properties[model.ClaimProperty] != nil {
			if h := armed.Swap(nil); h != nil {
				(*h)()
			}
		}
		return err
	}
	return storetest.WrapStore(st, hook), func(h func()) { armed.Store(&h) }
}

// TestTakingAGlobalValueBackWhileAnOlderCopyStepRuns: Ann holds a@x in a
// GlobalUnique index (her copy is written), changes her last name (a put
// of the a@x copy at that version is queued) and then her email to b@x
// (a removal of the a@x copy is queued). She takes a@x back: the claim
// stamps her old copy. Before her entity write lands, the worker runs
// both queued steps, in order: the put replaces the copy with a newer
// one, the removal finds a copy Ann no longer holds. Then Bob asks for
// a@x. The claim of Ann's write in flight must survive both steps, so Bob
// is refused (a pending *partition.DuplicateError) and a@x ends held by
// Ann alone.
func TestTakingAGlobalValueBackWhileAnOlderCopyStepRuns(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st, arm := afterClaimStamp(e.B.Store)
		f := newFixture(t, e, st, []string{fGUnique})
		f.o.Concurrency = 1 // one operation at a time, in queue order
		f.restart(t)
		ann := &Employee{Dept: "Sales", ID: "ann", Email: "a@x", LastName: "Jones"}
		if err := f.m.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		ann.LastName = "Smith"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		ann.Email = "b@x"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		var bobErr error
		ran := false
		arm(func() {
			ran = true
			for {
				n, err := f.eng.ProcessOnce(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					break
				}
			}
			bobErr = f.m.Insert(ctx, &Employee{Dept: "Ops", ID: "bob", Email: "a@x", LastName: "Lee"})
		})
		ann.Email = "a@x"
		if err := f.m.Update(ctx, ann, store.Replace); err != nil {
			t.Fatal(err)
		}
		if !ran {
			t.Fatal("Ann's claim never stamped her copy")
		}
		var de *partition.DuplicateError
		if !errors.As(bobErr, &de) || !de.Pending || de.Value != "a@x" {
			t.Errorf("Bob's insert of a@x while Ann's claim is pending: %v, want a pending duplicate", bobErr)
		}
		f.drain(t)
		if p, err := f.eng.Poisoned(ctx, 8); err != nil || len(p) != 0 {
			t.Fatalf("poison queue: %+v, %v", p, err)
		}
		if r := f.verify(t); r.bad() || r.entities != 1 {
			t.Fatalf("verify: %v", r)
		}
	})
}

// TestClaimOfAWriteThatStartsOver: Ann is deleted (the removal of her
// a@x copy is queued) and inserted again with a@x: her claim stamps her
// old copy. Before that insert lands, another writer inserts Ann with
// a@x too, the worker writes that write's copy and removes the old one,
// Ann is deleted again and her copy removed, and Bob, in another
// partition, claims a@x and is written. The first insert must not land
// on its old claim (Ann is absent again, so an insert alone would
// succeed): its claim is made inside its transaction, which the writes of
// Ann's partition since make start over, so it claims again and is
// refused.
func TestClaimOfAWriteThatStartsOver(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st, arm := afterClaimStamp(e.B.Store)
		f := newFixture(t, e, st, []string{fGUnique})
		f.o.Concurrency = 1 // one operation at a time, in queue order
		f.restart(t)
		process := func() {
			for {
				n, err := f.eng.ProcessOnce(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 {
					return
				}
			}
		}
		ann := Employee{Dept: "Sales", ID: "ann", Email: "a@x", LastName: "Jones"}
		bob := Employee{Dept: "Ops", ID: "bob", Email: "a@x", LastName: "Lee"}
		first := ann
		if err := f.m.Insert(ctx, &first); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if err := f.m.Delete(ctx, ann.Dept, ann.ID, ""); err != nil {
			t.Fatal(err)
		}
		ran := false
		arm(func() {
			ran = true
			again := ann
			if err := f.m.Upsert(ctx, &again, store.Replace); err != nil {
				t.Error(err)
			}
			process()
			if err := f.m.Delete(ctx, ann.Dept, ann.ID, ""); err != nil {
				t.Error(err)
			}
			process()
			b := bob
			if err := f.m.Insert(ctx, &b); err != nil {
				t.Errorf("Bob's insert of a@x, which nobody holds: %v", err)
			}
		})
		late := ann
		err := f.m.Insert(ctx, &late)
		if !ran {
			t.Fatal("Ann's claim never stamped her copy")
		}
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.Value != "a@x" || de.Holder.PartitionKey != "Ops" {
			t.Errorf("Ann's first insert, after Bob took a@x: %v, want a duplicate held by Bob", err)
		}
		f.drain(t)
		if p, err := f.eng.Poisoned(ctx, 8); err != nil || len(p) != 0 {
			t.Fatalf("poison queue: %+v, %v", p, err)
		}
		if got, err := f.m.Find(ctx, "email", "a@x"); err != nil || got.ID != "bob" {
			t.Fatalf("a@x: %+v, %v; want Bob", got, err)
		}
		if r := f.verify(t); r.bad() || r.entities != 1 {
			t.Fatalf("verify: %v", r)
		}
	})
}

// TestClaimRowsAreTheSharedOnes: the model's rows of the index table are
// judged by internal/claims, which reads them by these names.
func TestClaimRowsAreTheSharedOnes(t *testing.T) {
	for _, p := range [][2]string{
		{model.SourceTableProperty, claims.SourceTableProperty},
		{model.SourcePartitionProperty, claims.SourcePartitionProperty},
		{model.SourceRowProperty, claims.SourceRowProperty},
		{model.ClaimProperty, claims.ClaimProperty},
		{model.ClaimedProperty, claims.ClaimedProperty},
	} {
		if p[0] != p[1] {
			t.Errorf("the model names %q what internal/claims reads as %q", p[0], p[1])
		}
	}
}
