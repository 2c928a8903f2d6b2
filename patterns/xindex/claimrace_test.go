package xindex_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/xindex"
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
		if e, eerr := c.Entity(); eerr == nil && e.Properties[xindex.ClaimProperty] != nil {
			if h := armed.Swap(nil); h != nil {
				(*h)()
			}
		}
		return err
	}
	return storetest.WrapStore(st, hook), func(h func()) { armed.Store(&h) }
}

// orgWide is a staff table whose email index spans every department (one
// index partition), so that two departments' writes race on one value
// without sharing an entity partition; its engine runs one operation at
// a time, in queue order.
type orgWide struct {
	e     eventualtest.Env
	st    store.Store
	o     eventualtest.Options
	eng   *eventual.Engine
	x     *xindex.Table[Employee]
	staff string
	arm   func(func())
}

func newOrgWide(t *testing.T, e eventualtest.Env, queue string) *orgWide {
	t.Helper()
	w := &orgWide{e: e, staff: e.B.NewTable(t, queue), o: e.Opts(queue)}
	w.st, w.arm = afterClaimStamp(e.B.Store)
	w.o.Concurrency = 1
	w.eng = eventualtest.NewEngine(t, w.st, w.o)
	opts := xindex.Options{}
	if e.Fake() {
		opts.Now = e.Clock.Now
	}
	x, err := xindex.New[Employee](w.eng, w.staff, &opts,
		xindex.Unique[Employee]("email", func(v *Employee) string { return v.Email }).InPartition(func(string) string { return "email" }))
	if err != nil {
		t.Fatal(err)
	}
	w.x = x
	return w
}

// process runs the queued operations, one at a time, until none is left.
func (w *orgWide) process(t *testing.T) {
	for {
		n, err := w.eng.ProcessOnce(t.Context())
		if err != nil {
			t.Error(err)
			return
		}
		if n == 0 {
			return
		}
	}
}

// settle drains the engine and checks that the poison queue is empty and
// that value is held by want alone: the copy is want's, and of the
// entities others none holds it.
func (w *orgWide) settle(t *testing.T, value string, want *Employee, others ...*Employee) {
	t.Helper()
	ctx := t.Context()
	eventualtest.Drain(t, w.e, &w.eng, w.o, w.st, w.staff)
	if p, err := w.eng.Poisoned(ctx, 8); err != nil || len(p) != 0 {
		t.Fatalf("poison queue: %+v, %v", p, err)
	}
	h, err := w.x.Find(ctx, "", "email", value)
	if err != nil || h.Source != (xindex.Ref{PartitionKey: want.Department, RowKey: want.ID}) {
		t.Fatalf("%s: %+v, %v; want the copy of %s", value, h.Source, err, want.ID)
	}
	for _, o := range others {
		if got, err := w.x.Get(ctx, o.Department, o.ID); err == nil && got.Email == value {
			t.Errorf("%s/%s holds %s too", o.Department, o.ID, value)
		}
	}
}

// TestTakingAValueBackWhileAnOlderCopyStepRuns: Ann holds a@x (her copy
// is written), changes her last name (a put of the a@x copy at that
// version is queued) and then her email to b@x (a removal of the a@x copy
// is queued). She takes a@x back: the claim stamps her old copy. Before
// her entity write lands, the worker runs both queued steps, in order:
// the put replaces the copy with a newer one, the removal finds a copy
// Ann no longer holds. Then Bob, in another department, asks for a@x.
// The claim of Ann's write in flight must survive both steps, so Bob is
// refused (a pending *partition.DuplicateError) and a@x ends held by Ann
// alone. (A put that erased the stamp let the removal leave a hole, Bob
// took it, and Ann's step then failed with a *HeldTwiceError.)
func TestTakingAValueBackWhileAnOlderCopyStepRuns(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		w := newOrgWide(t, e, "xback")
		ann := emp("Sales", 1, "Ann", "Jones", "a@x")
		bob := emp("Ops", 2, "Bob", "Lee", "a@x")
		if err := w.x.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		w.process(t)
		ann.LastName = "Smith"
		if err := w.x.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		ann.Email = "b@x"
		if err := w.x.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		var bobErr error
		ran := false
		w.arm(func() {
			ran = true
			w.process(t)
			bobErr = w.x.Insert(ctx, bob)
		})
		ann.Email = "a@x"
		if err := w.x.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if !ran {
			t.Fatal("Ann's claim never stamped her copy")
		}
		var de *partition.DuplicateError
		if !errors.As(bobErr, &de) || !de.Pending || de.Value != "a@x" {
			t.Errorf("Bob's insert of a@x while Ann's claim is pending: %v, want a pending duplicate", bobErr)
		}
		w.settle(t, "a@x", ann, bob)
	})
}

// TestClaimOfAWriteThatStartsOver: Ann is deleted (the removal of her
// a@x copy is queued) and inserted again with a@x: her claim stamps her
// old copy. Before that insert lands, another writer inserts Ann with
// a@x too (its claim stamps the copy again), the worker writes that
// write's copy and removes the old one, Ann is deleted again and her copy
// removed, and Bob, in another department, claims a@x and is written. The
// first insert must not land on its old claim: Ann is absent again, so an
// insert alone would succeed, and a@x would be held twice. Its claim is
// made inside its transaction, which the writes of Ann's partition since
// make start over: it claims again, and is refused.
func TestClaimOfAWriteThatStartsOver(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		w := newOrgWide(t, e, "xover")
		ann := emp("Sales", 1, "Ann", "Jones", "a@x")
		bob := emp("Ops", 2, "Bob", "Lee", "a@x")
		if err := w.x.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		w.process(t)
		if err := w.x.DeleteKey(ctx, ann.Department, ann.ID); err != nil {
			t.Fatal(err)
		}
		ran := false
		w.arm(func() {
			ran = true
			again := *ann
			if err := w.x.Upsert(ctx, &again); err != nil {
				t.Error(err)
			}
			w.process(t)
			if err := w.x.DeleteKey(ctx, ann.Department, ann.ID); err != nil {
				t.Error(err)
			}
			w.process(t)
			if err := w.x.Insert(ctx, bob); err != nil {
				t.Errorf("Bob's insert of a@x, which nobody holds: %v", err)
			}
		})
		err := w.x.Insert(ctx, ann)
		if !ran {
			t.Fatal("Ann's claim never stamped her copy")
		}
		var de *partition.DuplicateError
		if !errors.As(err, &de) || de.Value != "a@x" || de.Holder != (xindex.Ref{PartitionKey: "Ops", RowKey: bob.ID}) {
			t.Errorf("Ann's first insert, after Bob took a@x: %v, want a duplicate held by Bob", err)
		}
		w.settle(t, "a@x", bob, ann)
	})
}
