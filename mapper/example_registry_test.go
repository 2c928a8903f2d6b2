package mapper_test

import (
	"context"
	"errors"
	"fmt"

	"strings"

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

// StaffV1 is the first layout of a staff member: one Name.
type StaffV1 struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Name       string
}

func (StaffV1) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "employee"} }

// StaffV2 splits the name.
type StaffV2 struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
}

func (StaffV2) TableKind() mapper.Kind {
	return mapper.Kind{Property: "Type", Value: "employee", Version: 2}
}

// Two layouts of one struct coexist: a row of each, both read as the
// newest layout, the old one migrated on read.
func ExampleMigrate() {
	ctx := context.Background()
	st := newTable("Staff")
	reg, _ := mapper.NewPropertyRegistry("Type")
	_ = mapper.Register[StaffV1](reg, "employee")
	_ = mapper.Register[StaffV2](reg, "employee")
	_ = mapper.Migrate(reg, func(v StaffV1) (StaffV2, error) {
		first, last, _ := strings.Cut(v.Name, " ")
		return StaffV2{FirstName: first, LastName: last}, nil
	})
	// An old program wrote Ann; a new one writes Bob.
	_ = mapper.NewRepository[StaffV1](st, "Staff").Insert(ctx, &StaffV1{Department: "Sales", ID: "1", Name: "Ann Lee"})
	_ = mapper.NewRepository[StaffV2](st, "Staff").Insert(ctx, &StaffV2{Department: "Sales", ID: "2", FirstName: "Bob", LastName: "Ray"})

	staff := reg.On(st, "Staff")
	for v, err := range staff.Query(ctx) {
		e := v.(StaffV2)
		fmt.Println(e.ID, e.FirstName, e.LastName, err)
	}
	rep, err := staff.Upgrade(ctx)
	fmt.Printf("upgraded %d of %d old rows, %v\n", rep.Upgraded, rep.Read, err)
	// Output:
	// 1 Ann Lee <nil>
	// 2 Bob Ray <nil>
	// upgraded 1 of 1 old rows, <nil>
}
