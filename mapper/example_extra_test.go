package mapper_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// EmployeeV1 is an older version of Employee that knows only Name; the
// extra field keeps the properties it does not know.
type EmployeeV1 struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Name       string
	Rest       map[string]any `table:",extra"`
}

// An older program replaces an entity a newer one wrote, without deleting
// the properties it does not know.
func ExampleRepository_Update_extra() {
	ctx := context.Background()
	st := newTable("Employees")
	_ = mapper.NewRepository[Employee](st, "Employees").Insert(ctx,
		&Employee{Department: "Sales", ID: "1", Name: "Ann", Age: 34, Salary: 1 << 40})

	older := mapper.NewRepository[EmployeeV1](st, "Employees")
	v1, _ := older.Get(ctx, "Sales", "1")
	fmt.Printf("unknown to v1: Age %T %v, Salary %T %v\n", v1.Rest["Age"], v1.Rest["Age"], v1.Rest["Salary"], v1.Rest["Salary"])
	v1.Name = "Anne"
	fmt.Println("replace:", older.Update(ctx, &v1, store.Replace))

	now, _ := mapper.NewRepository[Employee](st, "Employees").Get(ctx, "Sales", "1")
	fmt.Println(now.Name, now.Age, now.Salary)
	// Output:
	// unknown to v1: Age int32 34, Salary int64 1099511627776
	// replace: <nil>
	// Anne 34 1099511627776
}
