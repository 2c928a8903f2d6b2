// Command xindex shows the design guide's inter-partition secondary
// index as a view on an entity model: employees stored once, in their
// department's partition under their ids, found by email through the
// copies of a unique global index kept in a table of its own, and by
// last name through a non-unique one, across every department. The model
// writes the entity and the intent to update the copies in one
// transaction, claiming a new email first; its engine writes the copies.
// The view reads them: a write is found through its claim at once, a
// copy behind its entity is told apart (Stale), and a taken email is
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
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/xindex"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is stored in its department's partition under its id.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Age        int32
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
		log.Fatalf("xindex on %s: %v", name, err)
	}
}

func run(ctx context.Context, w io.Writer, st store.Store, suffix string) (err error) {
	staff, emails, queue := "Employees"+suffix, "EmployeeEmails"+suffix, "staffindex"+suffix
	for _, t := range []string{staff, emails} {
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
	// The declaration: the email unique across every department, its
	// copies in a table of their own; the last name in the model's index
	// table (here the entities' own).
	m, err := model.Define(st, staff, &model.Options{Engine: eng},
		model.GlobalUnique("email", func(e *Employee) string { return e.Email }).In(emails),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		return err
	}
	x, err := xindex.New(m, nil)
	if err != nil {
		return err
	}

	people := []*Employee{
		{Department: "Sales", ID: "000223", FirstName: "John", LastName: "Jones", Email: "jonesj@contoso.com", Age: 34},
		{Department: "Marketing", ID: "000224", FirstName: "Ann", LastName: "Jones", Email: "annj@contoso.com", Age: 29},
		{Department: "Sales", ID: "000225", FirstName: "Don", LastName: "Hall", Email: "donh@contoso.com", Age: 41},
		{Department: "Sales", ID: "000226", FirstName: "Jo", LastName: "Johnson", Email: "joj@contoso.com", Age: 50},
	}
	for _, p := range people {
		if err := m.Insert(ctx, p); err != nil {
			return err
		}
	}
	h, err := x.Find(ctx, "email", "jonesj@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "4 employees; before the engine ran, jonesj@contoso.com -> %s %s through its claim: %v\n", h.PK, h.ID, h.Claimed)
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	h, err = x.Find(ctx, "email", "jonesj@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "email jonesj@contoso.com -> %s %s %s (copy of version %d in %s)\n", h.Entity.ID, h.Entity.FirstName, h.Entity.LastName, h.Version, "EmployeeEmails")
	fmt.Fprint(w, "last name Jones, every department:")
	for h, err := range x.FindAll(ctx, "lastname", "Jones") {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s (%s)", h.Entity.FirstName, h.PK)
	}
	fmt.Fprint(w, "\nemails from a to e:")
	for h, err := range x.Range(ctx, "email", "a", "e") {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s", h.Value)
	}
	fmt.Fprint(w, "\nlast names starting with Jo:")
	for h, err := range x.Prefix(ctx, "lastname", "Jo") {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, " %s %s", h.Value, h.Entity.FirstName)
	}
	fmt.Fprintln(w)

	// Ann changes her email; until the engine runs, the old copy leads
	// to an entity that no longer holds it, and the new one is found
	// through its claim.
	ann := people[1]
	ann.Email = "ann.jones@contoso.com"
	if err := m.Update(ctx, ann, store.Replace); err != nil {
		return err
	}
	_, err = x.FindFresh(ctx, "email", "annj@contoso.com")
	fmt.Fprintf(w, "before the engine ran, annj@contoso.com is no longer Ann's: %v\n", errors.Is(err, store.ErrNotFound))
	// John has a birthday; his copy is behind until the engine runs.
	john := people[0]
	john.Age++
	if err := m.Update(ctx, john, store.Replace); err != nil {
		return err
	}
	f, err := x.FindFresh(ctx, "email", "jonesj@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "before the engine ran, John's copy says %d, his entity %d: stale %v\n", f.Hit.Entity.Age, f.Entity.Age, f.Stale)
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	f, err = x.FindFresh(ctx, "email", "ann.jones@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "after the engine ran, ann.jones@contoso.com -> %s (stale %v)\n", f.Entity.ID, f.Stale)

	// A taken email is refused, whatever the department; nothing is
	// written.
	err = m.Insert(ctx, &Employee{Department: "Marketing", ID: "000227", FirstName: "Eve", LastName: "Ray", Email: "donh@contoso.com"})
	var dup *partition.DuplicateError
	if !errors.As(err, &dup) {
		return fmt.Errorf("a taken email was accepted: %v", err)
	}
	fmt.Fprintf(w, "another donh@contoso.com: refused, %s %q is held in %s (%s)\n", dup.IndexName, dup.Value, dup.Holder.PartitionKey, store.Code(err))

	// Don leaves: his copies go.
	if err := m.Delete(ctx, "Sales", "000225", ""); err != nil {
		return err
	}
	if err := eng.Drain(ctx); err != nil {
		return err
	}
	_, err = x.Find(ctx, "email", "donh@contoso.com")
	fmt.Fprintf(w, "after Don left, donh@contoso.com found: %v\n", err == nil)
	rep, err := m.Check(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Check: %d entities, %d findings\n", rep.Entities, len(rep.Findings))
	return nil
}
