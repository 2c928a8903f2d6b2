package model_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// TestCopyLateAfterRemoval: a target the entity left holds, after a
// racing put and its own removal, the entity's source with no copied
// property at an old version (the removal's mark). An older operation
// than the entity's latest, which still mapped the target, must not put
// the copy back there: the entity no longer maps to it, and the latest
// operation's removal ran before (when the row held nothing of the
// entity), so nothing would ever remove it.
//
// The run: v1 maps Sales (op1). While op1's merge is held (after its
// check that the entity is still at v1), v2 changes the phone, still
// mapping Sales (op2, whose message is dropped: only the sweep brings
// it), and v3 leaves Sales (op3), whose removal runs at once and finds
// nothing. op1's merge then lands, sees the entity moved on and removes
// its copy again, leaving the mark. op2 runs last.
func TestCopyLateAfterRemoval(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	staff, depts := e.B.NewTable(t, "lrstaff"), e.B.NewTable(t, "lrdepts")
	var hold atomic.Pointer[func()]
	var drop atomic.Bool
	st := storetest.WrapStore(e.B.Store, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.Op == "Queue.Put" && drop.Load() {
			return nil // the message is lost: the sweep queues the operation again
		}
		if c.Name == depts && c.EntityOp() == "Table.Update" && c.RowKey == "Sales" {
			if h := hold.Swap(nil); h != nil {
				(*h)()
			}
		}
		return do(ctx)
	})
	o := e.Opts("lateremoval")
	o.Concurrency = 1
	eng := eventualtest.NewEngine(t, st, o)
	m, err := model.Define(st, staff, &model.Options{Engine: eng, Now: e.Now}, managerCopy(depts, depts))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Table(depts).Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales", Properties: map[string]any{"Budget": int64(7)}}); err != nil {
		t.Fatal(err)
	}
	don := &Manager{Unit: "u1", ID: "d1", Name: "Don", Phone: "555", Manages: "Sales"}
	if err := m.Insert(ctx, don); err != nil {
		t.Fatal(err)
	}
	var errs []error
	h := func() {
		drop.Store(true)
		don.Phone = "556" // v2: still Sales
		errs = append(errs, m.Update(ctx, don, store.Replace), eng.Flush(ctx))
		drop.Store(false)
		don.Manages = "" // v3: Sales left
		errs = append(errs, m.Update(ctx, don, store.Replace))
		n, err := eng.ProcessOnce(ctx) // op3: its removal finds no copy
		if n != 1 {
			t.Errorf("op3: %d operations run", n)
		}
		errs = append(errs, err)
	}
	hold.Store(&h)
	if n, err := eng.ProcessOnce(ctx); err != nil || n != 1 {
		t.Fatalf("op1: %d, %v", n, err)
	}
	if hold.Load() != nil {
		t.Fatal("op1's merge was never held")
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	eventualtest.Drain(t, e, &eng, o, st, staff) // op2, through the sweep
	row, err := st.Table(depts).Get(ctx, "dept", "Sales", nil)
	if err != nil {
		t.Fatal(err)
	}
	if row.Properties["ManagerName"] != nil || row.Properties["Phone"] != nil || row.Properties["Budget"] != int64(7) {
		t.Errorf("Sales, which the manager left, holds %v", row.Properties)
	}
	if rep, err := m.Check(ctx, nil); err != nil || !rep.Clean() {
		t.Errorf("Check: %v\n%s", err, rep)
	}
}
