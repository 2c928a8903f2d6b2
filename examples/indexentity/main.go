// Command indexentity shows the index entities pattern on the entity
// model: employees are found by last name through the keys the model
// keeps for each value, in the department's own partition (a List,
// changed in the same transaction as the employee) and across every
// department (a GlobalIndex, one row per employee in the last name's
// partition, written by the eventual engine's worker), both read through
// the indexentity view. A change of name moves an employee from one last
// name to the other; a departure removes them. It runs on memstore by
// default; pass -conn (or set TABLEKIT_CONN or TABLEKIT_AZURITE_CONN) to
// run it against Azurite or Azure.
//
//	go run ./examples/indexentity
//	go run ./examples/indexentity -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is an employee of a department.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	FirstName  string     `table:",omitempty"`
	LastName   string     `table:",omitempty"`
	ETag       store.ETag `table:",etag"`
}

func main() {
	conn := backend.ConnFlag()
	suffix := flag.String("suffix", "", "suffix for the table's and queue's names (to run beside another copy)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *suffix); err != nil {
		log.Fatalf("indexentity on %s: %v", name, err)
	}
}

// run creates the table and the engine's queue, runs the story, and
// removes them again.
func run(ctx context.Context, w io.Writer, st store.Store, suffix string) (err error) {
	table, queue := "Employees"+suffix, "employees"+suffix
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if cerr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = cerr
		}
	}()
	eng, err := eventual.New(st, queue, &eventual.Options{Visibility: 5 * time.Second})
	if err != nil {
		return err
	}
	if err := eng.Setup(ctx); err != nil {
		return err
	}
	defer func() {
		_ = st.Queue(queue + "-poison").Delete(context.WithoutCancel(ctx))
		if cerr := st.Queue(queue).Delete(context.WithoutCancel(ctx)); err == nil {
			err = cerr
		}
	}()

	// The model keeps both: every write of an employee changes the list
	// of its department in its own transaction, and queues the change of
	// its global index row.
	lastName := func(e *Employee) string { return e.LastName }
	staff, err := model.Define(st, table, &model.Options{Engine: eng},
		model.List("family", lastName),
		model.GlobalIndex("lastname", lastName))
	if err != nil {
		return err
	}
	byName, err := indexentity.New(staff, nil)
	if err != nil {
		return err
	}
	show := func(label, pk, list, last string) error {
		var names []string
		for e, err := range byName.FindAll(ctx, pk, list, last) {
			if err != nil {
				return err
			}
			names = append(names, fmt.Sprintf("%s %s (%s)", e.ID, e.FirstName, e.Department))
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		fmt.Fprintf(w, "  %s %s: %s\n", label, last, strings.Join(names, ", "))
		return nil
	}
	lookups := func(label string) error {
		fmt.Fprintln(w, "in Sales, through the department's list:")
		for _, last := range []string{"Jones", "Smith"} {
			if err := show(label, "Sales", "family", last); err != nil {
				return err
			}
		}
		fmt.Fprintln(w, "in every department, through the global index:")
		for _, last := range []string{"Jones", "Smith"} {
			if err := show(label, "", "lastname", last); err != nil {
				return err
			}
		}
		return nil
	}

	for _, e := range []Employee{
		{Department: "Sales", ID: "000152", FirstName: "Ann", LastName: "Jones"},
		{Department: "Sales", ID: "000123", FirstName: "Don", LastName: "Jones"},
		{Department: "Sales", ID: "000200", FirstName: "Bo", LastName: "Smith"},
		{Department: "Marketing", ID: "000007", FirstName: "Cy", LastName: "Jones"},
	} {
		if err := staff.Insert(ctx, &e); err != nil {
			return err
		}
	}
	// Found at once, before the engine's worker ran: the list was written
	// with each employee, and the global index reads its own writes.
	if err := lookups("found"); err != nil {
		return err
	}

	// Don Jones becomes Don Smith; Ann leaves.
	don, err := staff.Get(ctx, "Sales", "000123")
	if err != nil {
		return err
	}
	don.LastName = "Smith"
	if err := staff.Update(ctx, don, store.Merge); err != nil {
		return err
	}
	if err := staff.Delete(ctx, "Sales", "000152", ""); err != nil {
		return err
	}
	fmt.Fprintln(w, "Don Jones becomes Don Smith; Ann leaves")
	if err := lookups("after the changes,"); err != nil {
		return err
	}
	// The keys alone: one range query, no employee read. The global
	// index's rows of the old name go once the engine's worker ran.
	keys, err := byName.Keys(ctx, "Sales", "family", "Smith")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "the Smiths of Sales: %v\n", keys)
	keys, err = byName.Keys(ctx, "", "lastname", "Jones")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "the Joneses' index rows, before the worker ran (FindAll left two out): %v\n", keys)
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	keys, err = byName.Keys(ctx, "", "lastname", "Jones")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "the Joneses, once the worker ran: %v\n", keys)
	return nil
}
