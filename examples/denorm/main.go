// Command denorm shows denormalization: each department row holds its
// manager's name and phone, so one point read answers who runs it, and
// each team row (in the manager's own partition) holds its lead's name.
// A write of the employee updates the team in the same transaction and
// the department through a worker; the targets' own data is never
// touched. It runs on memstore by default; pass -conn (or set
// TABLEKIT_CONN or TABLEKIT_AZURITE_CONN) to run it against Azurite or
// Azure.
//
//	go run ./examples/denorm
//	go run ./examples/denorm -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/denorm"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is stored in its unit's partition under "emp_" + id; it may
// manage a department and lead a team.
type Employee struct {
	Unit    string     `table:",pk"`
	ID      string     `table:",rk"`
	ETag    store.ETag `table:",etag"`
	Name    string
	Phone   string
	Manages string // a department's RowKey in Departments
	Leads   string // a team's RowKey in the employee's own partition
}

// TableKind keeps reads of employees away from the team rows and the
// engine's rows of their partition.
func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

// Department is what a reader of the Departments table sees.
type Department struct {
	Kind         string `table:",pk"`
	Name         string `table:",rk"`
	Budget       int64
	ManagerName  string
	ManagerPhone string
}

func main() {
	conn := backend.ConnFlag()
	suffix := flag.String("suffix", "", "suffix for the tables' and queues' names (to run beside another copy)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *suffix); err != nil {
		log.Fatalf("denorm on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, suffix string) (err error) {
	staff, depts, queue := "Staff"+suffix, "Departments"+suffix, "managers"+suffix
	for _, t := range []string{staff, depts} {
		if err := st.CreateTable(ctx, t); err != nil {
			return err
		}
		defer func() {
			if derr := st.DeleteTable(context.WithoutCancel(ctx), t); err == nil {
				err = derr
			}
		}()
	}
	eng, err := eventual.New(st, queue, &eventual.Options{Visibility: 5 * time.Second})
	if err != nil {
		return err
	}
	if err := eng.Setup(ctx); err != nil {
		return err
	}
	defer func() {
		for _, q := range []string{queue, queue + "-poison"} {
			_ = st.Queue(q).Delete(context.WithoutCancel(ctx))
		}
	}()
	d, err := denorm.New[Employee](eng, staff,
		denorm.Copy[Employee]("manager", func(e *Employee) []denorm.Target {
			if e.Manages == "" {
				return nil
			}
			return []denorm.Target{{Table: depts, PartitionKey: "dept", RowKey: e.Manages}}
		}).Field("Name", "ManagerName").Field("Phone", "ManagerPhone"),
		denorm.Copy[Employee]("lead", func(e *Employee) []denorm.Target {
			if e.Leads == "" {
				return nil
			}
			return []denorm.Target{{PartitionKey: e.Unit, RowKey: e.Leads}}
		}).Field("Name", "LeadName"))
	if err != nil {
		return err
	}
	departments := mapper.NewRepository[Department](st, depts)
	for _, dep := range []*Department{{Kind: "dept", Name: "Sales", Budget: 250000}, {Kind: "dept", Name: "Support", Budget: 90000}} {
		if err := departments.Insert(ctx, dep); err != nil {
			return err
		}
	}
	if _, err := st.Table(staff).Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "team_east", Properties: map[string]any{"Region": "East"}}); err != nil {
		return err
	}
	show := func(when string) error {
		fmt.Fprintf(w, "%s:\n", when)
		for dep, err := range departments.Query(ctx) {
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "  department %-7s budget %6d, manager %q %q\n", dep.Name, dep.Budget, dep.ManagerName, dep.ManagerPhone)
		}
		team, err := st.Table(staff).Get(ctx, "Sales", "team_east", nil)
		if err != nil {
			return err
		}
		lead, _ := team.Properties["LeadName"].(string)
		fmt.Fprintf(w, "  team east, region %v, lead %q\n", team.Properties["Region"], lead)
		return nil
	}

	don := &Employee{Unit: "Sales", ID: "emp_000123", Name: "Don Hall", Phone: "555-0100", Manages: "Sales", Leads: "team_east"}
	if err := d.Insert(ctx, don); err != nil {
		return err
	}
	if err := show("Don joins, before the worker"); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("after the worker"); err != nil {
		return err
	}
	don.Phone, don.Manages = "555-0199", "Support"
	if err := d.Update(ctx, don); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("Don moves to Support with a new phone"); err != nil {
		return err
	}
	// Another lead for Don's team is refused: a target has one source. It
	// is a conflict of the data, not a race: retrying cannot help.
	err = d.Insert(ctx, &Employee{Unit: "Sales", ID: "emp_000124", Name: "Ann Ray", Leads: "team_east"})
	var ce *denorm.OtherSourceError
	fmt.Fprintf(w, "Ann as lead of team east: refused %v (%v)\n", errors.As(err, &ce), err)
	if err := d.Delete(ctx, don); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	if err := show("Don leaves"); err != nil {
		return err
	}
	p, err := eng.Poisoned(ctx, 32)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "poison queue: %d messages\n", len(p))
	return nil
}
