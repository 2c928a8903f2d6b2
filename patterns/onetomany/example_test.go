package onetomany_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/onetomany"
)

// An employee and the employee's yearly reviews: written in one
// transaction, read in one range query, a review added later under the
// employee's fence.
func ExampleNew() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	staff, err := onetomany.New[Employee, Review](st, "Employees",
		func(r *Review) Employee { return Employee{Department: r.Department, ID: r.EmployeeID} })
	if err != nil {
		fmt.Println(err)
		return
	}
	don := &Employee{Department: "Sales", ID: "000123", Name: "Don Hall"}
	err = staff.Insert(ctx, don,
		&Review{Department: "Sales", EmployeeID: "000123", Year: 2024, Rating: 4},
		&Review{Department: "Sales", EmployeeID: "000123", Year: 2025, Rating: 5})
	fmt.Println("insert:", err)

	err = staff.Add(ctx, don, &Review{Department: "Sales", EmployeeID: "000123", Year: 2026, Rating: 5})
	fmt.Println("add:", err)

	f, err := staff.Get(ctx, Employee{Department: "Sales", ID: "000123"})
	fmt.Println(f.Parent.Name, err)
	for _, r := range f.Children {
		fmt.Println(r.Year, r.Rating)
	}
	// Output:
	// insert: <nil>
	// add: <nil>
	// Don Hall <nil>
	// 2024 4
	// 2025 5
	// 2026 5
}
