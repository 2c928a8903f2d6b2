package denorm_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
)

// Staff is a source: its name and phone are copied onto the department
// it manages.
type Staff struct {
	Unit    string `table:",pk"`
	ID      string `table:",rk"`
	Name    string
	Phone   string
	Manages string
}

// The guide's department holds its manager's name and phone: one point
// read answers who runs it. The model carries them over on every write of
// the manager; the view reads a department's source.
func ExampleView_SourceOf() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Staff")
	_ = st.CreateTable(ctx, "Departments")
	eng, _ := eventual.New(st, "managers", nil)
	_ = eng.Setup(ctx)
	department := func(e *Staff) []store.RowRef {
		if e.Manages == "" {
			return nil
		}
		return []store.RowRef{{Table: "Departments", PartitionKey: "dept", RowKey: e.Manages}}
	}
	staff, _ := model.Define(st, "Staff", &model.Options{Engine: eng},
		model.CopyToEach("manager", []string{"Departments"}, department, "Name", "Phone").
			Rename("Name", "ManagerName").Rename("Phone", "ManagerPhone"))
	mgrs, _ := denorm.New(staff, nil)

	// The department is a row of its own, with data of its own.
	_, _ = st.Table("Departments").Insert(ctx, store.Entity{PartitionKey: "dept", RowKey: "Sales",
		Properties: map[string]any{"Budget": int64(250000)}})

	don := &Staff{Unit: "Sales", ID: "000123", Name: "Don Hall", Phone: "555-0100", Manages: "Sales"}
	_ = staff.Insert(ctx, don)
	_ = eng.Drain(ctx) // a worker carries the copy over
	don.Phone = "555-0199"
	_ = staff.Update(ctx, don, store.Merge)
	_ = eng.Drain(ctx)

	dept, _ := st.Table("Departments").Get(ctx, "dept", "Sales", nil)
	fmt.Println(dept.Properties["ManagerName"], dept.Properties["ManagerPhone"], dept.Properties["Budget"])
	c, _ := mgrs.SourceOf(ctx, "manager", "Departments", "dept", "Sales")
	fmt.Println(c.PartitionKey, c.ID, c.Entity.Name, c.Behind)
	// Output:
	// Don Hall 555-0199 250000
	// Sales 000123 Don Hall false
}
