// Command indexentity shows the index entities pattern: employees are
// found by last name through lists of their keys, kept in the three places
// the design guide names: beside the employees in their department's
// partition (changed in the same transaction), in a table of their own
// (one partition per last name), and in blobs (one per last name), the
// last two kept up to date by a worker of the eventual engine. A change
// of name moves an employee between lists; a departure removes them. It
// runs on memstore by default; pass -conn (or set TABLEKIT_CONN or
// TABLEKIT_AZURITE_CONN) to run it against Azurite or Azure.
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
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/indexentity"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// Employee is an employee of a department; the RowKey prefix keeps
// queries of employees off the index entities and the engine's rows.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	FirstName  string     `table:",omitempty"`
	LastName   string     `table:",omitempty"`
	ETag       store.ETag `table:",etag"`
}

// TableKind declares the employees' RowKey prefix.
func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

func main() {
	conn := backend.ConnFlag()
	suffix := flag.String("suffix", "", "suffix for the tables', queues' and container's names (to run beside another copy)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn), azqueues.Service(), azblobs.Service())
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

// run walks through the three placements.
func run(ctx context.Context, w io.Writer, st store.Store, suffix string) error {
	for _, p := range []indexentity.Placement{indexentity.SamePartition, indexentity.SeparatePartition, indexentity.InBlobs} {
		if err := walk(ctx, w, st, p, suffix); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

// walk creates what placement p needs, runs the story on it, and removes
// it all again.
func walk(ctx context.Context, w io.Writer, st store.Store, p indexentity.Placement, suffix string) (err error) {
	tag := map[indexentity.Placement]string{indexentity.SamePartition: "Same", indexentity.SeparatePartition: "Sep", indexentity.InBlobs: "Blob"}[p]
	employees, lists := "Employees"+tag+suffix, "LastNames"+suffix
	queue, container := "lastnames"+strings.ToLower(tag)+suffix, "lastnames"+suffix
	cleanup := []func(context.Context) error{}
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			if cerr := cleanup[i](context.WithoutCancel(ctx)); err == nil {
				err = cerr
			}
		}
	}()
	create := func(table string) error {
		if err := st.CreateTable(ctx, table); err != nil {
			return err
		}
		cleanup = append(cleanup, func(ctx context.Context) error { return st.DeleteTable(ctx, table) })
		return nil
	}
	if err := create(employees); err != nil {
		return err
	}
	opts := &indexentity.Options{Placement: p}
	var eng *eventual.Engine
	if p != indexentity.SamePartition {
		eng, err = eventual.New(st, queue, &eventual.Options{Visibility: 5 * time.Second})
		if err != nil {
			return err
		}
		if err := eng.Setup(ctx); err != nil {
			return err
		}
		cleanup = append(cleanup, func(ctx context.Context) error {
			_ = st.Queue(queue + "-poison").Delete(ctx)
			return st.Queue(queue).Delete(ctx)
		})
		opts.Engine = eng
	}
	switch p {
	case indexentity.SamePartition:
		fmt.Fprintln(w, "lists beside the employees, one transaction with each write, per department:")
	case indexentity.SeparatePartition:
		if err := create(lists); err != nil {
			return err
		}
		opts.IndexTable = lists
		fmt.Fprintf(w, "lists in table %s, one partition per last name, through the engine:\n", strings.TrimSuffix(lists, suffix))
	case indexentity.InBlobs:
		c := st.Container(container)
		if err := c.Create(ctx); err != nil {
			return err
		}
		cleanup = append(cleanup, c.Delete)
		opts.Container = container
		fmt.Fprintf(w, "lists in blobs of %s, one per last name, through the engine:\n", strings.TrimSuffix(container, suffix))
	}
	staff, err := indexentity.New(st, employees, opts,
		indexentity.List("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		return err
	}
	// settle lets the engine's worker carry the list changes out.
	settle := func() error {
		if eng == nil {
			return nil
		}
		return eng.Drain(ctx)
	}
	// scope is the partition a lookup of Sales' Joneses names: the lists
	// of the other placements cover every department.
	scope := ""
	if p == indexentity.SamePartition {
		scope = "Sales"
	}
	show := func(label, last string) error {
		var names []string
		for e, err := range staff.FindAll(ctx, scope, "lastname", last) {
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

	staffList := []Employee{
		{Department: "Sales", ID: "emp_000152", FirstName: "Ann", LastName: "Jones"},
		{Department: "Sales", ID: "emp_000123", FirstName: "Don", LastName: "Jones"},
		{Department: "Sales", ID: "emp_000200", FirstName: "Bo", LastName: "Smith"},
		{Department: "Marketing", ID: "emp_000007", FirstName: "Cy", LastName: "Jones"},
	}
	for i := range staffList {
		if err := staff.Insert(ctx, &staffList[i]); err != nil {
			return err
		}
	}
	if err := settle(); err != nil {
		return err
	}
	if err := show("found", "Jones"); err != nil {
		return err
	}

	// Don Jones becomes Don Smith: his id moves from one list to the other.
	don := staffList[1]
	don.LastName = "Smith"
	if err := staff.Update(ctx, &don); err != nil {
		return err
	}
	// Ann leaves: her id leaves the list.
	if err := staff.Delete(ctx, &staffList[0]); err != nil {
		return err
	}
	fmt.Fprintln(w, "  Don Jones becomes Don Smith; Ann leaves")
	if err := settle(); err != nil {
		return err
	}
	for _, last := range []string{"Jones", "Smith"} {
		if err := show("after the changes,", last); err != nil {
			return err
		}
	}
	keys, err := staff.Keys(ctx, scope, "lastname", "Smith")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  the Smiths' list: %v\n", keys)
	return nil
}
