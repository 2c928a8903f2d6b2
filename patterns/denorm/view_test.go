package denorm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// Employee manages departments (rows of another table) and leads a team.
type Employee struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"`
	ETag    store.ETag `table:",etag"`
	Name    string     `table:",encrypt"`
	Phone   string
	Manages string // departments, comma-separated
	Leads   string // a team of the Teams table, in the employee's unit
}

func targets(depts, teams string) func(e *Employee) []store.RowRef {
	return func(e *Employee) []store.RowRef {
		var out []store.RowRef
		for d := range strings.SplitSeq(e.Manages, ",") {
			if d != "" {
				out = append(out, store.RowRef{Table: depts, PartitionKey: "dept", RowKey: d})
			}
		}
		if e.Leads != "" {
			out = append(out, store.RowRef{Table: teams, PartitionKey: e.Unit, RowKey: e.Leads})
		}
		return out
	}
}

// env is a model of employees copied onto departments and teams, with its
// view.
type env struct {
	e                   eventualtest.Env
	st                  store.Store
	o                   eventualtest.Options
	eng                 *eventual.Engine
	staff, depts, teams string
	m                   *model.Model[Employee]
	v                   *denorm.View[Employee]
}

func newEnv(t *testing.T, e eventualtest.Env, st store.Store, prefix string) *env {
	t.Helper()
	x := &env{e: e, st: st, staff: e.B.NewTable(t, prefix+"staff"), depts: e.B.NewTable(t, prefix+"depts"), teams: e.B.NewTable(t, prefix+"teams")}
	if x.st == nil {
		x.st = e.B.Store
	}
	x.o = e.Opts(prefix + "dn")
	x.eng = eventualtest.NewEngine(t, x.st, x.o)
	var err error
	x.m, err = model.Define(x.st, x.staff, &model.Options{Engine: x.eng, Now: e.Now},
		model.CopyToEach("manager", []string{x.depts, x.teams}, targets(x.depts, x.teams), "Name", "Phone").
			Rename("Name", "ManagerName").Rename("Phone", "ManagerPhone"))
	if err != nil {
		t.Fatal(err)
	}
	if x.v, err = denorm.New(x.m, nil); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *env) drain(t *testing.T) {
	t.Helper()
	eventualtest.Drain(t, x.e, &x.eng, x.o, x.st, x.staff)
}

func (x *env) row(t *testing.T, table, pk, rk string, props map[string]any) {
	t.Helper()
	if _, err := x.st.Table(table).Insert(context.Background(), store.Entity{PartitionKey: pk, RowKey: rk, Properties: props}); err != nil {
		t.Fatal(err)
	}
}

// TestViewReads: SourceOf names the source of a department (its renamed
// properties, version, behind before the engine ran, not found once the
// source left it); Targets lists a source's rows with what each holds
// (current, behind, none for a row made later); Refresh writes that row.
func TestViewReads(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		x := newEnv(t, e, nil, "vr")
		x.row(t, x.depts, "dept", "Sales", map[string]any{"Budget": int64(250)})
		x.row(t, x.teams, "u1", "east", nil)
		don := &Employee{Unit: "u1", ID: "d1", Name: "Don", Phone: "555", Manages: "Sales,Later", Leads: "east"}
		if err := x.m.Insert(ctx, don); err != nil {
			t.Fatal(err)
		}
		if _, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sales"); !store.EntityNotFound(err) {
			t.Fatalf("SourceOf before the engine ran: %v", err)
		}
		x.drain(t)
		c, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sales")
		if err != nil || c.Entity == nil || c.Entity.ID != "d1" || c.Entity.ETag == "" || c.PartitionKey != "u1" || c.ID != "d1" ||
			c.Behind || c.Version == 0 || c.Properties["ManagerName"] != "Don" || c.Properties["ManagerPhone"] != "555" {
			t.Fatalf("SourceOf Sales = %+v, %v", c, err)
		}
		don.Phone = "556"
		if err := x.m.Update(ctx, don, store.Merge); err != nil {
			t.Fatal(err)
		}
		if c, err := x.v.SourceOf(ctx, "manager", x.teams, "u1", "east"); err != nil || !c.Behind || c.Properties["ManagerPhone"] != "555" {
			t.Fatalf("SourceOf the team before the engine ran = %+v, %v", c, err)
		}
		var got []string
		for h, err := range x.v.Targets(ctx, "manager", "u1", "d1") {
			if err != nil {
				t.Fatal(err)
			}
			s := h.Target.RowKey
			switch {
			case h.Copy == nil:
				s += " none"
			case h.Current:
				s += " current"
			case h.Copy.Behind:
				s += " behind"
			}
			got = append(got, s)
		}
		if strings.Join(got, ", ") != "Sales behind, Later none, east behind" {
			t.Fatalf("Targets before the engine ran: %v", got)
		}
		x.drain(t)
		x.row(t, x.depts, "dept", "Later", nil)
		if err := x.v.Refresh(ctx, "u1", "d1"); err != nil {
			t.Fatal(err)
		}
		for h, err := range x.v.Targets(ctx, "manager", "u1", "d1") {
			if err != nil || !h.Current || h.Copy.Properties["ManagerPhone"] != "556" {
				t.Fatalf("Targets after the refresh: %+v, %v", h, err)
			}
		}
		// Sales left: its copy goes, and SourceOf finds none.
		don.Manages = "Later"
		if err := x.m.Update(ctx, don, store.Merge); err != nil {
			t.Fatal(err)
		}
		if c, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sales"); err != nil || c.Entity != nil {
			t.Fatalf("SourceOf the department left, before the engine ran = %+v, %v", c, err)
		}
		x.drain(t)
		if _, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sales"); !store.EntityNotFound(err) {
			t.Fatalf("SourceOf the department left: %v", err)
		}
		if err := x.v.Refresh(ctx, "u1", "nobody"); !store.EntityNotFound(err) {
			t.Fatalf("Refresh of a missing source: %v", err)
		}
		for _, err := range x.v.Targets(ctx, "manager", "u1", "nobody") {
			if !store.EntityNotFound(err) {
				t.Fatalf("Targets of a missing source: %v", err)
			}
		}
	})
}

// TestViewRefusals: New refuses a nil model, a model without a copy and
// a copy the model does not declare; the reads refuse a copy the view
// does not read, a table the copy does not declare and bad keys.
func TestViewRefusals(t *testing.T) {
	ctx := context.Background()
	e := eventualtest.MemEnv()
	x := newEnv(t, e, nil, "bad")
	bare, err := model.Define(e.B.Store, x.staff+"x", &model.Options{Engine: x.eng}, model.Log[Employee]())
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		m    *model.Model[Employee]
		o    *denorm.Options
		want string
	}{
		"nil model":     {nil, nil, "nil"},
		"no copy":       {bare, nil, "declares no copy"},
		"unknown copy":  {x.m, &denorm.Options{Copies: []string{"lead"}}, `"lead"`},
		"empty options": {x.m, &denorm.Options{Copies: []string{}}, "empty"},
	} {
		if _, err := denorm.New(c.m, c.o); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an InvalidInput naming %s", name, err, c.want)
		}
	}
	if v, err := denorm.New(x.m, &denorm.Options{Copies: []string{"manager"}}); err != nil || len(v.Copies()) != 1 || v.Model() != x.m {
		t.Fatalf("New with the copy named: %v", err)
	}
	for name, err := range map[string]error{
		"unknown copy":    func() error { _, err := x.v.SourceOf(ctx, "lead", x.depts, "dept", "Sales"); return err }(),
		"other table":     func() error { _, err := x.v.SourceOf(ctx, "manager", "Elsewhere", "dept", "Sales"); return err }(),
		"bad key":         func() error { _, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sa/les"); return err }(),
		"targets unknown": func() error { _, err := first(x.v.Targets(ctx, "lead", "u1", "d1")); return err }(),
		"nil context": func() error {
			//lint:ignore SA1012 a nil context is what is refused
			_, err := x.v.SourceOf(nil, "manager", x.depts, "dept", "Sales")
			return err
		}(),
	} {
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("%s: %v, want an InvalidInput", name, err)
		}
	}
}

func first[A, B any](seq func(func(A, B) bool)) (A, B) {
	var a A
	var b B
	for x, y := range seq {
		a, b = x, y
		break
	}
	return a, b
}

// TestViewEncrypted: over an encrypted model whose copy renames an
// encrypted property, SourceOf returns the plaintext through the
// encrypting store, and nothing the backend is asked to keep holds it.
func TestViewEncrypted(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, "Name", "ManagerName").Store(spied)
		x := newEnv(t, e, st, "enc")
		const secret = "ManagerSecret7371xyz"
		x.row(t, x.depts, "dept", "Sales", map[string]any{"Budget": int64(1)})
		if err := x.m.Insert(ctx, &Employee{Unit: "u1", ID: "d1", Name: secret, Manages: "Sales"}); err != nil {
			t.Fatal(err)
		}
		if !spy.Seen("Body") {
			t.Fatal("the spy saw no outbox row: the test searches nothing")
		}
		x.drain(t)
		c, err := x.v.SourceOf(ctx, "manager", x.depts, "dept", "Sales")
		if err != nil || c.Properties["ManagerName"] != secret || c.Entity == nil || c.Entity.Name != secret {
			t.Fatalf("SourceOf = %+v, %v", c, err)
		}
		leaks := spy.Leaks(secret)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{x.staff, x.depts}, secret)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}
