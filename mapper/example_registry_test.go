package mapper_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

func ExampleNewPrefixRegistry() {
	ctx := context.Background()
	tbl := newTable("Employees").Table("Employees")

	// The kind is the RowKey prefix, which also groups each kind together.
	reg := mapper.NewPrefixRegistry()
	_ = mapper.Register[Employee](reg, "emp_")
	_ = mapper.Register[Department](reg, "dept_")
	fmt.Println(mapper.Register[Review](reg, "em")) // one prefix may not start another

	_ = reg.Insert(ctx, tbl, &Employee{Department: "Sales", ID: "emp_000123", Name: "Ann"})
	_ = reg.Insert(ctx, tbl, &Department{Department: "Sales", ID: "dept_Sales", Manager: "Ann"})
	fmt.Println(reg.Insert(ctx, tbl, &Employee{Department: "Sales", ID: "000124", Name: "Bob"}))

	// An entity some other program wrote.
	_, _ = tbl.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "robot_1"})

	for v, err := range reg.Query(ctx, tbl, filter.PK.Eq("Sales")) {
		switch x := v.(type) {
		case Employee:
			fmt.Println("employee", x.Name)
		case Department:
			fmt.Println("department managed by", x.Manager)
		default:
			fmt.Println("unknown kind:", errors.Is(err, mapper.ErrUnknownKind))
		}
	}
	fmt.Println(reg.Cond("emp_"))
	// Output:
	// mapper: mapper_test.Review: prefix "em" overlaps prefix "emp_" of mapper_test.Employee: a RowKey could start with both
	// mapper: mapper_test.Employee: RowKey "000124" does not start with its kind's prefix "emp_"
	// department managed by Ann
	// employee Ann
	// unknown kind: true
	// RowKey ge 'emp_' and RowKey lt 'emp`'
}
