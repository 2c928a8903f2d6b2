package mapper_test

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
)

// Review computes its keys instead of tagging fields: the PartitionKey is
// the department and the RowKey the compound key (employee, year), so the
// reviews of one employee form one contiguous range.
type Review struct {
	Department string `table:"-"`
	Employee   string `table:"-"`
	Year       int    `table:"-"`
	Text       string
}

// TableKeys builds the keys with package keys (mapper.KeyMaker).
func (r *Review) TableKeys() (pk, rk string, err error) {
	rk, err = keys.Join(r.Employee, strconv.Itoa(r.Year))
	return r.Department, rk, err
}

// SetTableKeys splits them back on decode (mapper.KeySetter).
func (r *Review) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil {
		return err
	}
	if len(parts) != 2 {
		return fmt.Errorf("review RowKey %q has %d parts, want 2", rk, len(parts))
	}
	r.Department, r.Employee = pk, parts[0]
	r.Year, err = strconv.Atoi(parts[1])
	return err
}

func ExampleKeyMaker() {
	ctx := context.Background()
	repo := mapper.NewRepository[Review](newTable("Reviews"), "Reviews")
	for _, r := range []Review{
		{"Sales", "000123", 2012, "good"},
		{"Sales", "000123", 2013, "better"},
		{"Sales", "0001234", 2013, "someone else"},
		{"Sales", "a/b", 2014, "a '/' in a part is escaped"},
	} {
		if err := repo.Insert(ctx, &r); err != nil {
			fmt.Println(err)
		}
	}
	// Every review of employee 000123, and only those.
	of123, _ := keys.PrefixOf("000123")
	for r, err := range repo.Partition("Sales").Query(ctx, mapper.Where[Review]("RowKey").InRange(of123)) {
		fmt.Println(r.Employee, r.Year, r.Text, err)
	}
	r, err := repo.Get(ctx, "Sales", mustJoin("a/b", "2014"))
	fmt.Println(r.Employee, r.Year, err)
	// Output:
	// 000123 2012 good <nil>
	// 000123 2013 better <nil>
	// a/b 2014 <nil>
}

func mustJoin(parts ...string) string {
	k, err := keys.Join(parts...)
	if err != nil {
		panic(err)
	}
	return k
}

func ExampleField_InRange() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	for _, id := range []string{"empid_000099", "empid_000100", "empid_000199", "empid_000200"} {
		_ = repo.Insert(ctx, &Employee{Department: "Sales", ID: id})
	}
	// keys.Between is half-open, like Field.Between: 000200 is not in it.
	ids := keys.Between("empid_000100", "empid_000200")
	fmt.Println(mapper.Where[Employee]("ID").InRange(ids))
	for e, err := range repo.Partition("Sales").Query(ctx, mapper.Where[Employee]("ID").InRange(ids)) {
		fmt.Println(e.ID, err)
	}
	// The guide's inclusive form.
	ids.UpperIncluded = true
	fmt.Println(mapper.Where[Employee]("ID").InRange(ids))
	// Output:
	// RowKey ge 'empid_000100' and RowKey lt 'empid_000200'
	// empid_000100 <nil>
	// empid_000199 <nil>
	// RowKey ge 'empid_000100' and RowKey le 'empid_000200'
}
