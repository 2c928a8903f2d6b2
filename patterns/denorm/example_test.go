package denorm_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// The guide's department holds its manager's name and phone: one point
// read answers who runs it. Every write of the manager carries them over.
func ExampleSource_Update() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Staff")
	_ = st.CreateTable(ctx, "Departments")
	eng, _ := eventual.New(st, "managers", nil)
	_ = eng.Setup(ctx)
	mgrs, _ := denorm.New[Employee](eng, "Staff",
		denorm.Copy[Employee]("manager", func(e *Employee) []denorm.Target {
			return []denorm.Target{{Table: "Departments", PartitionKey: "dept", RowKey: e.Manages}}
		}).Field("Name", "ManagerName").Field("Phone", "ManagerPhone"))

	// The department is a row of its own, with data of its own.
	_, _ = st.Table("Departments").Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales",
		Properties: map[string]any{"Budget": int64(250000)}})

	don := &Employee{Unit: "Sales", ID: "emp_000123", Name: "Don Hall", Phone: "555-0100", Manages: "Sales"}
	_ = mgrs.Insert(ctx, don)
	_ = eng.Drain(ctx) // a worker carries the copy over

	don.Phone = "555-0199"
	_ = mgrs.Update(ctx, don)
	_ = eng.Drain(ctx)

	dept, _ := st.Table("Departments").Get(ctx, "dept", "Sales", nil)
	fmt.Println(dept.Properties["ManagerName"], dept.Properties["ManagerPhone"], dept.Properties["Budget"])
	// Output:
	// Don Hall 555-0199 250000
}

// A target in the source's own partition is written in the source's
// transaction: current as soon as the write returns.
func ExampleSource_Insert() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Staff")
	eng, _ := eventual.New(st, "leads", nil)
	_ = eng.Setup(ctx)
	leads, _ := denorm.New[Employee](eng, "Staff",
		denorm.Copy[Employee]("lead", func(e *Employee) []denorm.Target {
			return []denorm.Target{{PartitionKey: e.Unit, RowKey: e.Leads}}
		}).Field("Name", "LeadName"))
	_, _ = st.Table("Staff").Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "team_east",
		Properties: map[string]any{"Region": "East"}})

	_ = leads.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_000124", Name: "Ann Ray", Leads: "team_east"})

	team, _ := st.Table("Staff").Get(ctx, "Sales", "team_east", nil)
	fmt.Println(team.Properties["LeadName"], team.Properties["Region"])
	// Output:
	// Ann Ray East
}
