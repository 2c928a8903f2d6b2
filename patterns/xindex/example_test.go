package xindex_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
)

// The guide's employee, stored once in partition "Sales" and found by
// email through a copy in partition "email_Sales", written by a worker.
func ExampleTable_Find() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	eng, _ := eventual.New(st, "staff-index", nil)
	_ = eng.Setup(ctx)
	staff, _ := xindex.New[Employee](eng, "Employees", nil,
		xindex.Unique[Employee]("email", func(e *Employee) string { return e.Email }))

	ann := &Employee{Department: "Sales", ID: "emp_000223", FirstName: "Ann", LastName: "Jones", Email: "jonesj@contoso.com"}
	_ = staff.Insert(ctx, ann) // the entity and the intent, one transaction
	_, err := staff.Find(ctx, "Sales", "email", "jonesj@contoso.com")
	fmt.Println("before the worker, not found:", errors.Is(err, store.ErrNotFound))

	_ = eng.Drain(ctx) // a worker writes the copy
	h, err := staff.Find(ctx, "Sales", "email", "jonesj@contoso.com")
	fmt.Println(h.Value.ID, h.Value.FirstName, h.Source.PartitionKey, h.Version, err)

	// Another employee cannot take the email.
	err = staff.Insert(ctx, &Employee{Department: "Sales", ID: "emp_000224", Email: "jonesj@contoso.com"})
	fmt.Println(err)
	// Output:
	// before the worker, not found: true
	// emp_000223 Ann Sales 1 <nil>
	// partition "email_Sales" of table Employees: email "jonesj@contoso.com" is taken by ("Sales", "emp_000223"): EntityAlreadyExists (409): xindex: row ("email_Sales", "email !jonesj@contoso.2Ecom") of table Employees exists, another entity's
}

// FindFresh reads the entity behind a copy and tells whether the copy was
// behind it.
func ExampleTable_FindFresh() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	eng, _ := eventual.New(st, "staff-index", nil)
	_ = eng.Setup(ctx)
	staff, _ := xindex.New[Employee](eng, "Employees", nil,
		xindex.Unique[Employee]("email", func(e *Employee) string { return e.Email }))

	ann := &Employee{Department: "Sales", ID: "emp_000223", FirstName: "Ann", Email: "ann@contoso.com", Age: 30}
	_ = staff.Insert(ctx, ann)
	_ = eng.Drain(ctx)
	ann.Age = 31
	_ = staff.Update(ctx, ann) // the copy is now behind until the worker runs

	f, err := staff.FindFresh(ctx, "Sales", "email", "ann@contoso.com")
	fmt.Println(f.Value.Age, f.Hit.Value.Age, f.Stale, err)
	_ = eng.Drain(ctx)
	f, err = staff.FindFresh(ctx, "Sales", "email", "ann@contoso.com")
	fmt.Println(f.Value.Age, f.Hit.Value.Age, f.Stale, err)

	ann.Email = "ann@fabrikam.com"
	_ = staff.Update(ctx, ann)
	_, err = staff.FindFresh(ctx, "Sales", "email", "ann@contoso.com")
	fmt.Println(err)
	// Output:
	// 31 30 true <nil>
	// 31 31 false <nil>
	// xindex: email "ann@contoso.com" leads to ("Sales", "emp_000223"), which no longer holds it (copy of version 2, entity at 3)
}
