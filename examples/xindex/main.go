// Command xindex shows secondary indexes in other partitions and tables:
// employees stored once in partition "Sales" under their ids, found by
// email through copies in partition "email_Sales" and by last name
// through copies in a table of their own. The entity write and the intent
// to update the copies commit together; a worker writes the copies. A
// lookup tells a copy that is behind its entity, and a taken email is
// refused. It runs on memstore by default; pass -conn (or set
// TABLEKIT_CONN or TABLEKIT_AZURITE_CONN) to run it against Azurite or
// Azure.
//
//	go run ./examples/xindex
//	go run ./examples/xindex -conn "$TABLEKIT_AZURITE_CONN"
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
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is stored in its department's partition under "emp_" + id.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Age        int32
}

// TableKind keeps reads of employees away from the engine's rows and
// the email copies.
func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

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
		log.Fatalf("xindex on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, suffix string) (err error) {
	staff, ix, queue := "Employees"+suffix, "EmployeeIndex"+suffix, "staffindex"+suffix
	for _, t := range []string{staff, ix} {
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
	x, err := xindex.New[Employee](eng, staff, nil,
		xindex.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		xindex.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).
			Project("FirstName", "LastName").InTable(ix))
	if err != nil {
		return err
	}

	people := []*Employee{
		{Department: "Sales", ID: "emp_000223", FirstName: "John", LastName: "Jones", Email: "jonesj@contoso.com", Age: 34},
		{Department: "Sales", ID: "emp_000224", FirstName: "Ann", LastName: "Jones", Email: "annj@contoso.com", Age: 29},
		{Department: "Sales", ID: "emp_000225", FirstName: "Don", LastName: "Hall", Email: "donh@contoso.com", Age: 41},
	}
	for _, p := range people {
		if err := x.Insert(ctx, p); err != nil {
			return err
		}
	}
	_, err = x.Find(ctx, "Sales", "email", "jonesj@contoso.com")
	fmt.Fprintf(w, "3 employees in Sales; before the worker, jonesj@contoso.com found: %v\n", err == nil)
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	h, err := x.Find(ctx, "Sales", "email", "jonesj@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "email jonesj@contoso.com -> %s %s %s (copy of version %d, partition email_Sales)\n", h.Value.ID, h.Value.FirstName, h.Value.LastName, h.Version)
	fmt.Fprint(w, "last name Jones (table EmployeeIndex):")
	for h, err := range x.FindAll(ctx, "Sales", "lastname", "Jones") {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s %s", h.Value.FirstName, h.Value.ID)
	}
	fmt.Fprint(w, "\nemails from a to e:")
	for h, err := range x.Range(ctx, "Sales", "email", "a", "e") {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s", h.IndexValue)
	}
	fmt.Fprintln(w)

	// Ann changes her email; until the worker runs, the old copy dangles.
	ann := people[1]
	ann.Email = "ann.jones@contoso.com"
	if err := x.Update(ctx, ann); err != nil {
		return err
	}
	_, err = x.FindFresh(ctx, "Sales", "email", "annj@contoso.com")
	var de *xindex.DanglingError
	fmt.Fprintf(w, "before the worker, annj@contoso.com dangles: %v\n", errors.As(err, &de))
	// John has a birthday; his copy is behind until the worker runs.
	john := people[0]
	john.Age++
	if err := x.Update(ctx, john); err != nil {
		return err
	}
	f, err := x.FindFresh(ctx, "Sales", "email", "jonesj@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "before the worker, John's copy says %d, his entity %d: stale %v\n", f.Hit.Value.Age, f.Value.Age, f.Stale)
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	f, err = x.FindFresh(ctx, "Sales", "email", "ann.jones@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "after the worker, ann.jones@contoso.com -> %s (stale %v)\n", f.Value.ID, f.Stale)

	// A taken email is refused; nothing is written.
	err = x.Insert(ctx, &Employee{Department: "Sales", ID: "emp_000226", FirstName: "Eve", LastName: "Ray", Email: "donh@contoso.com"})
	var dup *partition.DuplicateError
	if !errors.As(err, &dup) {
		return fmt.Errorf("a taken email was accepted: %v", err)
	}
	fmt.Fprintf(w, "another donh@contoso.com: refused, %s %q is taken by %s (partition %q, %s)\n", dup.IndexName, dup.Value, dup.Holder, dup.Partition, store.Code(err))

	// Don leaves: his copies go.
	if err := x.Delete(ctx, people[2]); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	_, err = x.Find(ctx, "Sales", "email", "donh@contoso.com")
	fmt.Fprintf(w, "after Don left, donh@contoso.com found: %v\n", err == nil)
	p, err := eng.Poisoned(ctx, 32)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "poison queue: %d messages\n", len(p))
	return nil
}
