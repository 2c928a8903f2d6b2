// Command heterogeneous shows the heterogeneous entity types pattern: a
// department's partition holding the department, its employees and their
// badges, three types told apart by a Type property and read back as
// their own Go types by one query, with two layouts of the employee
// struct side by side: rows written by an older program (one Name) read
// by the newer one (FirstName, LastName) through a migration, and then
// rewritten once as the newer layout. It runs on memstore by default;
// pass -conn (or set TABLEKIT_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/heterogeneous
//	go run ./examples/heterogeneous -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Department is the department's own row.
type Department struct {
	Name    string `table:",pk"`
	Row     string `table:",rk"`
	Manager string
	Budget  int64
}

// TableKind declares the department kind.
func (Department) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "department"} }

// EmployeeV1 is the employee as the first program wrote it.
type EmployeeV1 struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Name       string
	Phone      string
}

// TableKind declares the employee kind, before versions existed.
func (EmployeeV1) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "employee"} }

// Employee is the current layout: the name split, the phone renamed.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Mobile     string
}

// TableKind declares version 2 of the employee kind.
func (Employee) TableKind() mapper.Kind {
	return mapper.Kind{Property: "Type", Value: "employee", Version: 2}
}

// Badge is a third kind in the partition.
type Badge struct {
	Department string `table:",pk"`
	ID         string `table:",rk"`
	Holder     string
	Doors      string
}

// TableKind declares the badge kind.
func (Badge) TableKind() mapper.Kind { return mapper.Kind{Property: "Type", Value: "badge"} }

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "Departments", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("heterogeneous on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = derr
		}
	}()
	// The first program's writes: the department and two employees.
	old := mapper.NewRepository[EmployeeV1](st, table)
	if err := mapper.NewRepository[Department](st, table).Insert(ctx, &Department{Name: "Sales", Row: "department", Manager: "000123", Budget: 250_000}); err != nil {
		return err
	}
	for _, e := range []EmployeeV1{{Department: "Sales", ID: "000123", Name: "Don Hall", Phone: "555-0101"}, {Department: "Sales", ID: "000152", Name: "Jun Cao", Phone: "555-0102"}} {
		if err := old.Insert(ctx, &e); err != nil {
			return err
		}
	}

	// The current program knows every kind and both employee layouts.
	reg, err := mapper.NewPropertyRegistry("Type")
	if err != nil {
		return err
	}
	for _, err := range []error{
		mapper.Register[Department](reg, "department"),
		mapper.Register[EmployeeV1](reg, "employee"),
		mapper.Register[Employee](reg, "employee"),
		mapper.Register[Badge](reg, "badge"),
		mapper.Migrate(reg, func(v EmployeeV1) (Employee, error) {
			first, last, _ := strings.Cut(v.Name, " ")
			return Employee{FirstName: first, LastName: last, Mobile: v.Phone}, nil
		}),
	} {
		if err != nil {
			return err
		}
	}
	sales := reg.On(st, table)
	if err := sales.Insert(ctx, &Employee{Department: "Sales", ID: "000155", FirstName: "Ken", LastName: "Kwok", Mobile: "555-0103"}); err != nil {
		return err
	}
	if err := sales.Insert(ctx, &Badge{Department: "Sales", ID: "badge-7", Holder: "000155", Doors: "lobby,floor 3"}); err != nil {
		return err
	}
	fmt.Fprintln(w, "one partition: a department, 2 employees written as version 1, 1 as version 2, a badge")

	// One query, each row as its own type; old employees migrated on read.
	for v, err := range sales.Query(ctx, mapper.Where[any]("PartitionKey").Eq("Sales")) {
		if err != nil {
			return err
		}
		switch x := v.(type) {
		case Department:
			fmt.Fprintf(w, "  department %s, manager %s\n", x.Name, x.Manager)
		case Employee:
			fmt.Fprintf(w, "  employee %s: %s, %s (%s)\n", x.ID, x.LastName, x.FirstName, x.Mobile)
		case Badge:
			fmt.Fprintf(w, "  badge %s of %s: %s\n", x.ID, x.Holder, x.Doors)
		}
	}

	// The old program never reads a row it does not understand.
	_, err = old.Get(ctx, "Sales", "000155")
	fmt.Fprintln(w, "the version 1 program reading Ken's version 2 row: refused as another kind:", errors.Is(err, mapper.ErrWrongKind))

	rep, err := sales.Upgrade(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, err := range mapper.NewRepository[Employee](st, table).Partition("Sales").Query(ctx) {
		if err != nil {
			return err
		}
		n++
	}
	fmt.Fprintf(w, "upgrade: %d old rows rewritten as version 2; a version 2 repository now reads %d employees\n", rep.Upgraded, n)
	return nil
}
