package denorm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/errvocab"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

func (f *fixture) target(t *testing.T, table, pk, rk string) store.Entity {
	t.Helper()
	e, err := f.e.B.Store.Table(table).Get(context.Background(), pk, rk, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// processUntilPoisoned runs the worker, letting failed receives come
// back, until the poison queue holds a message.
func (f *fixture) processUntilPoisoned(t *testing.T) []eventual.Poisoned {
	t.Helper()
	ctx := context.Background()
	for range 8 {
		for {
			n, err := f.eng.ProcessOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		if p, _ := f.eng.Poisoned(ctx, 32); len(p) > 0 {
			return p
		}
		f.e.Pass(1100 * time.Millisecond)
	}
	t.Fatal("nothing was poisoned")
	return nil
}

// TestGuideWalkthrough: a manager's name and phone reach the team it
// leads (its own partition) in the same transaction, and the department
// it manages (another table) once the worker ran; a change of phone
// follows; a department it stops managing loses the copy; a second
// manager of its team is refused at once, of its department reported by
// the worker until the first one leaves; a missing target is not
// created; the targets' own properties are never touched.
func TestGuideWalkthrough(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		f := newFixture(t, e, "dnwalk", nil)
		f.o.MaxReceives = 2
		f.restart(t)
		d := f.d
		for _, rk := range []string{"dept_1", "dept_2"} {
			f.addTarget(t, f.depts, "dept", rk)
		}
		f.addTarget(t, f.staff, "Sales", "team_1")
		ann := &Employee{Unit: "Sales", ID: "emp_000001", Name: "Ann", Phone: "555-0101", Manages: "dept_1", Leads: "team_1"}
		if err := d.Insert(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if ann.ETag == "" {
			t.Fatal("Insert did not store the ETag")
		}
		// The team shares Ann's partition: written in her transaction.
		team := f.target(t, f.staff, "Sales", "team_1")
		if team.Properties["ManagerName"] != "Ann" || team.Properties["ManagerPhone"] != "555-0101" || team.Properties["Budget"] != int64(1001) {
			t.Fatalf("team after the insert: %v", team.Properties)
		}
		if _, has := f.target(t, f.depts, "dept", "dept_1").Properties["ManagerName"]; has {
			t.Fatal("the department was written before the worker ran")
		}
		f.drain(t)
		if dept := f.target(t, f.depts, "dept", "dept_1"); dept.Properties["ManagerName"] != "Ann" || dept.Properties["Budget"] != int64(1001) {
			t.Fatalf("department after the worker: %v", dept.Properties)
		}

		// A new phone, and another department.
		ann.Phone, ann.Manages = "555-0199", "dept_2"
		if err := d.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if dept := f.target(t, f.depts, "dept", "dept_2"); dept.Properties["ManagerPhone"] != "555-0199" {
			t.Fatalf("the new department: %v", dept.Properties)
		}
		if dept := f.target(t, f.depts, "dept", "dept_1"); dept.Properties["ManagerName"] != nil || dept.Properties["Title"] != "row dept_1" {
			t.Fatalf("the department Ann left: %v", dept.Properties)
		}

		// A second manager of Ann's team: refused at once, nothing written.
		bob := &Employee{Unit: "Sales", ID: "emp_000002", Name: "Bob", Phone: "555-0202", Leads: "team_1"}
		err := d.Insert(ctx, bob)
		var ce *denorm.OtherSourceError
		if !errors.As(err, &ce) || ce.Holder.RowKey != ann.ID || ce.Claimant.RowKey != bob.ID || !errors.Is(err, denorm.ErrOtherSource) {
			t.Fatalf("a second manager of one team: %v", err)
		}
		// A conflict of the data, not a race: no caller retries it.
		errvocab.Check(t, err, errvocab.Domain, denorm.ErrOtherSource, store.ErrAlreadyExists)
		if _, err := d.Get(ctx, "Sales", bob.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused insert left its source: %v", err)
		}
		// A second manager of Ann's department, in another partition: the
		// worker reports it until Ann leaves.
		bob = &Employee{Unit: "Ops", ID: "emp_000002", Name: "Bob", Phone: "555-0202", Manages: "dept_2"}
		if err := d.Insert(ctx, bob); err != nil {
			t.Fatal(err)
		}
		p := f.processUntilPoisoned(t)
		if msg := p[0].Attempts[0].Error; !strings.Contains(msg, "dept_2") || !strings.Contains(msg, "emp_000001") || !strings.Contains(msg, "emp_000002") {
			t.Fatalf("the poisoned attempt does not name the target and both sources: %s", msg)
		}
		t.Logf("poisoned: %s", p[0].Attempts[0].Error)
		if dept := f.target(t, f.depts, "dept", "dept_2"); dept.Properties["ManagerName"] != "Ann" {
			t.Fatalf("the first manager's copy was overwritten: %v", dept.Properties)
		}
		ann.Manages = ""
		if err := d.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if dept := f.target(t, f.depts, "dept", "dept_2"); dept.Properties["ManagerName"] != "Bob" {
			t.Fatalf("after Ann left, the department holds %v", dept.Properties)
		}
		// A missing target is not created; a delete clears its targets.
		cy := &Employee{Unit: "Sales", ID: "emp_000003", Name: "Cy", Manages: "dept_missing"}
		if err := d.Insert(ctx, cy); err != nil {
			t.Fatal(err)
		}
		if err := d.DeleteKey(ctx, "Ops", bob.ID); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if _, err := f.e.B.Store.Table(f.depts).Get(ctx, "dept", "dept_missing", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a missing target was created: %v", err)
		}
		if dept := f.target(t, f.depts, "dept", "dept_2"); dept.Properties["ManagerName"] != nil {
			t.Fatalf("the deleted manager's department: %v", dept.Properties)
		}
		// The department is made after its manager: Refresh sends the
		// values again.
		f.addTarget(t, f.depts, "dept", "dept_missing")
		if err := d.Refresh(ctx, "Sales", cy.ID); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		if dept := f.target(t, f.depts, "dept", "dept_missing"); dept.Properties["ManagerName"] != "Cy" {
			t.Fatalf("after Refresh the late department holds %v", dept.Properties)
		}
		// A stale ETag is refused.
		stale := *ann
		ann.Name = "Ann Ray"
		if err := d.Update(ctx, ann); err != nil {
			t.Fatal(err)
		}
		if err := d.Update(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("stale update: %v", err)
		}
		// A stale ETag refuses a delete too, and leaves the row; no ETag
		// at all is refused naming the call.
		if err := d.Delete(ctx, &stale); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Fatalf("stale delete: %v", err)
		}
		if _, err := f.e.B.Store.Table(f.staff).Get(ctx, stale.Unit, stale.ID, nil); err != nil {
			t.Fatalf("a stale delete removed the row: %v", err)
		}
		untagged := stale
		untagged.ETag = ""
		for name, op := range map[string]func(context.Context, *Employee) error{"update": d.Update, "delete": d.Delete} {
			if err := op(ctx, &untagged); !errors.Is(err, mapper.ErrNoETag) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s without an ETag: %v; want mapper.ErrNoETag naming the call", name, err)
			}
		}
		f.drain(t)
		if c := f.scan(t, "Sales", nil); c.lost+c.duplicated+c.stale+c.clobbered != 0 || c.filled != 2 || t.Failed() {
			t.Fatalf("at the end: %+v", c)
		}
	})
}
