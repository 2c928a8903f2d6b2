package indexentity_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
)

// Employee is the design guide's example: employees of a department by
// id; the RowKey prefix keeps queries of employees off the index entities
// and reserved rows beside them.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	FirstName  string     `table:",omitempty"`
	LastName   string     `table:",omitempty"`
	ETag       store.ETag `table:",etag"`
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

func lastName(e *Employee) string { return e.LastName }

// The guide's second option: the lists live in the employees' own
// partition and change in the same transaction as the employee, so a
// lookup of the Joneses of Sales is exact at once.
func ExampleNew() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	staff, err := indexentity.New(st, "Employees", nil, indexentity.List("lastname", lastName))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range []Employee{
		{Department: "Sales", ID: "emp_000152", FirstName: "Ann", LastName: "Jones"},
		{Department: "Sales", ID: "emp_000123", FirstName: "Don", LastName: "Jones"},
		{Department: "Sales", ID: "emp_000200", FirstName: "Bo", LastName: "Smith"},
	} {
		if err := staff.Insert(ctx, &e); err != nil {
			fmt.Println(err)
			return
		}
	}
	for e, err := range staff.FindAll(ctx, "Sales", "lastname", "Jones") {
		fmt.Println(e.ID, e.FirstName, e.LastName, err)
	}
	// Output:
	// emp_000123 Don Jones <nil>
	// emp_000152 Ann Jones <nil>
}

// A change of last name moves the id between lists, in the same
// transaction as the change.
func ExampleTable_Update() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	staff, _ := indexentity.New(st, "Employees", nil, indexentity.List("lastname", lastName))
	don := Employee{Department: "Sales", ID: "emp_000123", FirstName: "Don", LastName: "Jones"}
	_ = staff.Insert(ctx, &don)

	don.LastName = "Smith"
	fmt.Println(staff.Update(ctx, &don))
	jones, _ := staff.Keys(ctx, "Sales", "lastname", "Jones")
	smiths, _ := staff.Keys(ctx, "Sales", "lastname", "Smith")
	fmt.Println(len(jones), smiths)
	// Output:
	// <nil>
	// 0 [("Sales", "emp_000123")]
}

// The guide's third option: the lists live in a table of their own, one
// partition per last name, and cover every department; the eventual
// engine carries each change from the employee's write to the list.
func ExampleTable_FindAll_separatePartition() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	_ = st.CreateTable(ctx, "LastNames")
	eng, _ := eventual.New(st, "lastnames", nil)
	_ = eng.Setup(ctx)
	staff, err := indexentity.New(st, "Employees",
		&indexentity.Options{Placement: indexentity.SeparatePartition, Engine: eng, IndexTable: "LastNames"},
		indexentity.List("lastname", lastName))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range []Employee{
		{Department: "Sales", ID: "emp_000152", FirstName: "Ann", LastName: "Jones"},
		{Department: "Marketing", ID: "emp_000007", FirstName: "Cy", LastName: "Jones"},
	} {
		_ = staff.Insert(ctx, &e)
	}
	_ = eng.Drain(ctx) // workers run the list changes
	for e, err := range staff.FindAll(ctx, "", "lastname", "Jones") {
		fmt.Println(e.Department, e.ID, e.FirstName, err)
	}
	// Output:
	// Marketing emp_000007 Cy <nil>
	// Sales emp_000152 Ann <nil>
}

// The guide's first option: one blob per last name, for lists of any
// length.
func ExampleTable_Keys_inBlobs() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	_ = st.Container("lastnames").Create(ctx)
	eng, _ := eventual.New(st, "lastnames", nil)
	_ = eng.Setup(ctx)
	staff, _ := indexentity.New(st, "Employees",
		&indexentity.Options{Placement: indexentity.InBlobs, Engine: eng, Container: "lastnames"},
		indexentity.List("lastname", lastName))
	ann := Employee{Department: "Sales", ID: "emp_000152", LastName: "Jones"}
	_ = staff.Insert(ctx, &ann)
	_ = eng.Drain(ctx)
	keys, err := staff.Keys(ctx, "", "lastname", "Jones")
	fmt.Println(keys, err)
	blob, _, _ := st.Container("lastnames").Get(ctx, "lastname/Jones")
	fmt.Printf("%q\n", blob)
	// Output:
	// [("Sales", "emp_000152")] <nil>
	// "1\tSales\temp_000152\n"
}
