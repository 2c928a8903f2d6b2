package mapper_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// Employee is an entity of the Employees table: the department is the
// PartitionKey and the employee id the RowKey.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Name       string
	Age        int32
	Salary     int64 `table:",omitempty"`
	Hired      time.Time
}

func newTable(name string) store.Store {
	st := memstore.New()
	if err := st.CreateTable(context.Background(), name); err != nil {
		panic(err)
	}
	return st
}

func ExampleNewRepository() {
	ctx := context.Background()
	st := newTable("Employees")
	repo := mapper.NewRepository[Employee](st, "Employees")

	ann := Employee{Department: "Sales", ID: "000123", Name: "Ann", Age: 34,
		Hired: time.Date(2019, 7, 1, 9, 0, 0, 0, time.UTC)}
	if err := repo.Insert(ctx, &ann); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ETag set:", ann.ETag != "")

	got, err := repo.Get(ctx, "Sales", "000123")
	fmt.Println(got.Name, got.Age, got.Hired.Format(time.DateOnly), err)

	_, err = repo.Get(ctx, "Sales", "999")
	fmt.Println("missing:", errors.Is(err, store.ErrNotFound))
	// Output:
	// ETag set: true
	// Ann 34 2019-07-01 <nil>
	// missing: true
}

func ExampleRepository_Update() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	_ = repo.Insert(ctx, &Employee{Department: "Sales", ID: "1", Name: "Ann", Age: 34})

	// Two readers load the same version.
	first, _ := repo.Get(ctx, "Sales", "1")
	second, _ := repo.Get(ctx, "Sales", "1")

	first.Age = 35
	fmt.Println("first update:", repo.Update(ctx, &first, store.Merge))

	// The second holds a stale ETag: optimistic concurrency refuses it.
	second.Name = "Anne"
	err := repo.Update(ctx, &second, store.Merge)
	fmt.Println("second update is stale:", errors.Is(err, store.ErrPreconditionFailed))

	// Re-read, re-apply, retry.
	second, _ = repo.Get(ctx, "Sales", "1")
	second.Name = "Anne"
	fmt.Println("retry:", repo.Update(ctx, &second, store.Merge))

	now, _ := repo.Get(ctx, "Sales", "1")
	fmt.Println(now.Name, now.Age)
	// Output:
	// first update: <nil>
	// second update is stale: true
	// retry: <nil>
	// Anne 35
}

func ExampleRepository_Query() {
	ctx := context.Background()
	// Short pages with continuation tokens, as Azure returns them: Query
	// follows every token.
	st := memstore.New(memstore.WithShortPages(1))
	_ = st.CreateTable(ctx, "Employees")
	repo := mapper.NewRepository[Employee](st, "Employees")
	for i, name := range []string{"Ann", "Bob", "Cid", "Dee", "Eve"} {
		_ = repo.Insert(ctx, &Employee{Department: "Sales", ID: fmt.Sprint(i), Name: name, Age: int32(30 + 5*i)})
	}
	for e, err := range repo.Query(ctx, mapper.Where[Employee]("Age").Ge(40)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(e.Name, e.Age)
	}
	// Output:
	// Cid 40
	// Dee 45
	// Eve 50
}

func ExampleRepository_QueryPage() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	for i := range 5 {
		_ = repo.Insert(ctx, &Employee{Department: "Sales", ID: fmt.Sprint(i), Name: fmt.Sprint("E", i)})
	}
	token := ""
	for {
		page, err := repo.QueryPage(ctx, token, 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, e := range page.Items {
			fmt.Print(e.Name, " ")
		}
		fmt.Println("| more:", page.Next != "")
		if page.Next == "" {
			break
		}
		token = page.Next
	}
	// Output:
	// E0 E1 | more: true
	// E2 E3 | more: true
	// E4 | more: false
}

func ExampleRepository_Partition() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	sales := repo.Partition("Sales")

	// A transaction on the partition: all or nothing.
	b := sales.Batch()
	for i, name := range []string{"Ann", "Bob"} {
		if err := b.Insert(&Employee{Department: "Sales", ID: fmt.Sprint(i), Name: name, Age: 40}); err != nil {
			fmt.Println(err)
		}
	}
	// A value of another partition is refused when it is added.
	fmt.Println(b.Insert(&Employee{Department: "HR", ID: "9"}))
	fmt.Println("run:", b.Run(ctx))

	ann, _ := sales.Get(ctx, "0")
	fmt.Println(ann.Name)
	for e, err := range sales.Query(ctx, mapper.Where[Employee]("Name").Gt("Ann")) {
		fmt.Println(e.Name, err)
	}
	// Output:
	// mapper: insert of PartitionKey "HR" refused: CommandsInBatchActOnDifferentPartitions (400): this batch is on PartitionKey "Sales", and a transaction covers one partition
	// run: <nil>
	// Ann
	// Bob <nil>
}

// Department shares the Employees table with Employee (the guide's
// heterogeneous entity types pattern).
type Department struct {
	Department    string `table:",pk"`
	ID            string `table:",rk"`
	Manager       string
	EmployeeCount int32
}

// Staff and Team share a table, told apart by the EntityType property
// each declares as its kind.
type Staff struct {
	Team string `table:",pk"`
	ID   string `table:",rk"`
	Name string
}

func (Staff) TableKind() mapper.Kind { return mapper.Kind{Property: "EntityType", Value: "Staff"} }

type Team struct {
	Team    string `table:",pk"`
	ID      string `table:",rk"`
	Manager string
	Size    int32
}

func (Team) TableKind() mapper.Kind { return mapper.Kind{Property: "EntityType", Value: "Team"} }

func ExampleRegistry() {
	ctx := context.Background()
	st := newTable("Staff")

	reg, _ := mapper.NewPropertyRegistry("EntityType")
	_ = mapper.Register[Staff](reg, "Staff")
	_ = mapper.Register[Team](reg, "Team")
	tbl := reg.On(st, "Staff") // the registry bound to its table

	_ = tbl.Insert(ctx, &Team{Team: "Sales", ID: "TEAM", Manager: "Ann", Size: 2})
	_ = tbl.Insert(ctx, &Staff{Team: "Sales", ID: "000123", Name: "Ann"})
	_ = tbl.Insert(ctx, &Staff{Team: "Sales", ID: "000124", Name: "Bob"})

	for v, err := range tbl.Query(ctx, mapper.Where[any]("PartitionKey").Eq("Sales")) {
		switch x := v.(type) {
		case Staff:
			fmt.Println("staff", x.Name)
		case Team:
			fmt.Println("team managed by", x.Manager, "of", x.Size)
		default:
			fmt.Println(err)
		}
	}
	// A repository of one kind reads only its own rows.
	staff := mapper.NewRepository[Staff](st, "Staff")
	n := 0
	for range staff.Query(ctx) {
		n++
	}
	fmt.Println(n, "staff rows")
	// Output:
	// staff Ann
	// staff Bob
	// team managed by Ann of 2
	// 2 staff rows
}

func ExampleWhere() {
	// Names and literal types are checked against Employee's fields.
	adults := mapper.Where[Employee]("Age").Ge(18).And(mapper.Where[Employee]("Name").Ne("O'Brien"))
	fmt.Println(adults)
	fmt.Println(mapper.Where[Employee]("Salary").Gt(100000)) // Int64: the L suffix
	fmt.Println(mapper.Where[Employee]("Department").Eq("Sales"))

	fmt.Println(mapper.Where[Employee]("Agee").Ge(18).Err())
	fmt.Println(mapper.Where[Employee]("Age").Ge("18").Err())
	// Output:
	// Age ge 18 and Name ne 'O''Brien'
	// Salary gt 100000L
	// PartitionKey eq 'Sales'
	// mapper: mapper_test.Employee.Agee: no property or field named "Agee" (properties: Name, Age, Salary, Hired)
	// mapper: mapper_test.Employee.Age: cannot compare Age (Go int32, stored as Edm.Int32) with string value 18
}

func ExampleEncode() {
	e, err := mapper.Encode(Employee{Department: "Sales", ID: "1", Name: "Ann", Age: 34, Salary: 1 << 40})
	fmt.Println(e.PartitionKey, e.RowKey, err)
	for _, name := range []string{"Name", "Age", "Salary", "Hired"} {
		v, ok := e.Properties[name]
		fmt.Printf("%s: %T %v %v\n", name, v, v, ok)
	}
	// Output:
	// Sales 1 <nil>
	// Name: string Ann true
	// Age: int32 34 true
	// Salary: int64 1099511627776 true
	// Hired: <nil> <nil> false
}

func ExampleAppendJSON() {
	b, err := mapper.AppendJSON(nil, &Employee{Department: "Sales", ID: "1", Name: "Ann", Age: 34, Salary: 1 << 40})
	fmt.Println(string(b), err)
	// Output:
	// {"PartitionKey":"Sales","RowKey":"1","Age":34,"Name":"Ann","Salary@odata.type":"Edm.Int64","Salary":"1099511627776"} <nil>
}

func ExampleBatch() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	sales := repo.Partition("Sales")

	// Fill transactions until one is full, run it, and start the next.
	b := sales.Batch()
	runs := 0
	for i := range 250 {
		e := &Employee{Department: "Sales", ID: fmt.Sprintf("%05d", i), Name: "E"}
		err := b.Insert(e)
		if errors.Is(err, mapper.ErrBatchFull) {
			if err := b.Run(ctx); err != nil {
				fmt.Println(err)
				return
			}
			runs++
			b = sales.Batch()
			err = b.Insert(e)
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := b.Run(ctx); err != nil {
		fmt.Println(err)
		return
	}
	runs++
	n := 0
	for range sales.Query(ctx) {
		n++
	}
	fmt.Println(n, "employees in", runs, "transactions")
	// Output:
	// 250 employees in 3 transactions
}

// BulkWrite loads many values at once: grouped by partition into
// transactions, with one outcome per value.
func ExampleRepository_BulkWrite() {
	ctx := context.Background()
	repo := mapper.NewRepository[Employee](newTable("Employees"), "Employees")
	var staff []*Employee
	for i := range 250 {
		staff = append(staff, &Employee{Department: []string{"Sales", "Support"}[i%2], ID: fmt.Sprintf("%06d", i), Name: fmt.Sprint("Employee ", i)})
	}
	res, err := repo.BulkWrite(ctx, store.ActionInsert, staff, store.BulkOptions{})
	fmt.Println(res.Written, res.Failed, res.Batches, err, staff[0].ETag != "")
	// Output: 250 0 4 <nil> true
}
