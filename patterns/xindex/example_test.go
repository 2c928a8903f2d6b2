package xindex_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// The guide's employee, stored once in partition "Sales" and found by
// email through the copy the engine writes in a table of its own.
func ExampleView_Find() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	_ = st.CreateTable(ctx, "EmployeeEmails")
	eng, _ := eventual.New(st, "staff-index", nil)
	_ = eng.Setup(ctx)
	staff, _ := model.Define(st, "Employees", &model.Options{Engine: eng},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }).In("EmployeeEmails"))
	x, _ := xindex.New(staff, nil)

	ann := &Employee{Department: "Sales", ID: "emp_000223", FirstName: "Ann", LastName: "Jones", Email: "jonesj@contoso.com"}
	_ = staff.Insert(ctx, ann) // the entity and the intent, one transaction; the email claimed before
	h, err := x.Find(ctx, "email", "jonesj@contoso.com")
	fmt.Println("before the engine, through the claim:", h.Claimed, h.ID, err)

	_ = eng.Drain(ctx) // the engine writes the copy
	h, err = x.Find(ctx, "email", "jonesj@contoso.com")
	fmt.Println(h.Entity.ID, h.Entity.FirstName, h.PK, h.Version, h.Claimed, err)

	// Another employee cannot take the email.
	err = staff.Insert(ctx, &Employee{Department: "Ops", ID: "emp_000224", Email: "jonesj@contoso.com"})
	fmt.Println(errors.Is(err, store.ErrAlreadyExists))
	// Output:
	// before the engine, through the claim: true emp_000223 <nil>
	// emp_000223 Ann Sales 1 false <nil>
	// true
}

// FindFresh reads the entity behind a copy and tells whether the copy was
// behind it.
func ExampleView_FindFresh() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	eng, _ := eventual.New(st, "staff-index", nil)
	_ = eng.Setup(ctx)
	staff, _ := model.Define(st, "Employees", &model.Options{Engine: eng},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }))
	x, _ := xindex.New(staff, nil)

	ann := &Employee{Department: "Sales", ID: "emp_000223", FirstName: "Ann", Email: "ann@contoso.com", Age: 30}
	_ = staff.Insert(ctx, ann)
	_ = eng.Drain(ctx)
	ann.Age = 31
	_ = staff.Update(ctx, ann, store.Replace) // the copy is behind until the engine runs

	f, err := x.FindFresh(ctx, "email", "ann@contoso.com")
	fmt.Println(f.Entity.Age, f.Hit.Entity.Age, f.Stale, err)
	_ = eng.Drain(ctx)
	f, err = x.FindFresh(ctx, "email", "ann@contoso.com")
	fmt.Println(f.Entity.Age, f.Hit.Entity.Age, f.Stale, err)

	ann.Email = "ann@fabrikam.com"
	_ = staff.Update(ctx, ann, store.Replace)
	_, err = x.FindFresh(ctx, "email", "ann@contoso.com")
	fmt.Println(errors.Is(err, store.ErrNotFound))
	// Output:
	// 31 30 true <nil>
	// 31 31 false <nil>
	// true
}

// Prefix reads the values that start with a prefix, in order, across
// the partitions of the index (one per value).
func ExampleView_Prefix() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	eng, _ := eventual.New(st, "staff-index", nil)
	_ = eng.Setup(ctx)
	staff, _ := model.Define(st, "Employees", &model.Options{Engine: eng},
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	x, _ := xindex.New(staff, nil)
	for _, e := range []*Employee{
		{Department: "Sales", ID: "emp_1", LastName: "Jones"},
		{Department: "Ops", ID: "emp_2", LastName: "Johnson"},
		{Department: "Ops", ID: "emp_3", LastName: "Lee"},
	} {
		_ = staff.Insert(ctx, e)
	}
	_ = eng.Drain(ctx)
	for h, err := range x.Prefix(ctx, "lastname", "Jo") {
		fmt.Println(h.Value, h.PK, h.ID, err)
	}
	// Output:
	// Johnson Ops emp_2 <nil>
	// Jones Sales emp_1 <nil>
}
