package denorm_test

import (
	"testing"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// TestTakeOverRacingTheSourcesMove: a worker takes a department over from
// a manager who left it, and in that very moment the new manager leaves
// too and the removal of its copy runs first, finding the old manager's
// row and leaving it. The worker's check after its write sees the source
// moved on and removes the copy: no department holds a manager that does
// not manage it.
func TestTakeOverRacingTheSourcesMove(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		hs := &eventualtest.HookStore{Store: e.B.Store}
		f := newFixture(t, e, "dnrace", hs)
		d := f.d
		f.addTarget(t, f.depts, "dept", "dept_1")
		ann := &Employee{Unit: "Sales", ID: "emp_000001", Name: "Ann", Manages: "dept_1"}
		if err := d.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		ann.Manages = ""
		if err := d.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		bob := &Employee{Unit: "Ops", ID: "emp_000002", Name: "Bob", Manages: "dept_1"}
		if err := d.Insert(ctx, bob); err != nil {
			t.Fatal(err)
		}
		bobKey := "Ops !emp_000002"
		ran := false
		hs.Arm(func(en store.Entity) bool {
			return en.RowKey == "dept_1" && en.Properties[denorm.SourceProperty("manager")] == bobKey && en.Properties["ManagerName"] == "Bob"
		}, func() {
			ran = true
			bob.Manages = ""
			if err := d.Update(ctx, bob); err != nil {
				t.Error(err)
				return
			}
			if n, err := f.eng.ProcessOnce(ctx); n != 1 || err != nil {
				t.Errorf("the removal: %d, %v", n, err)
			}
		})
		f.drain(t)
		if !ran {
			t.Fatal("the take-over never happened")
		}
		dept := f.target(t, f.depts, "dept", "dept_1")
		if dept.Properties["ManagerName"] != nil {
			t.Fatalf("the department holds %v, whose manager left it", dept.Properties)
		}
		if c := f.scan(t, "Sales", nil); c.duplicated+c.stale+c.lost+c.clobbered != 0 || t.Failed() {
			t.Fatalf("scan: %+v", c)
		}
	})
}
