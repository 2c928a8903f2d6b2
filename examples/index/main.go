// Command index shows the intra-partition secondary index pattern: the
// guide's employees, stored once by id and found as fast by email (a
// unique index holding a full copy) and by last name (a non-unique index
// holding a projection), declared on the entity model, which writes the
// copies in the entity's own transaction and moves them when a value
// changes; the index view reads them by value, by range and by prefix. A
// taken email is refused. It runs on memstore by default; pass -conn (or
// set TABLEKIT_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/index
//	go run ./examples/index -conn "$TABLEKIT_AZURITE_CONN"
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

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Employee is stored in its department's partition; the model keys it
// "e !<id>" and its index copies "u !email !<value>" and
// "i !lastname !<value> !<id>" beside it.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Phone      string
}

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "EmployeesIndexed", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("index on %s: %v", name, err)
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
	// The model writes through an engine; with indexes in the partition
	// only, every write is one transaction and its queue is never used.
	eng, err := eventual.New(st, strings.ToLower(table), nil)
	if err != nil {
		return err
	}
	staff, err := model.Define(st, table, &model.Options{Engine: eng},
		model.Unique("email", func(e *Employee) string { return e.Email }),
		model.Index("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName"))
	if err != nil {
		return err
	}
	byValue, err := index.New(staff, nil)
	if err != nil {
		return err
	}
	people := []*Employee{
		{Department: "Sales", ID: "000123", FirstName: "Don", LastName: "Hall", Email: "don@contoso.com", Phone: "555-0101"},
		{Department: "Sales", ID: "000152", FirstName: "Jun", LastName: "Cao", Email: "jun@contoso.com", Phone: "555-0102"},
		{Department: "Sales", ID: "000155", FirstName: "Ken", LastName: "Kwok", Email: "ken@contoso.com", Phone: "555-0103"},
		{Department: "Sales", ID: "000171", FirstName: "Ann", LastName: "Hall", Email: "ann@contoso.com", Phone: "555-0104"},
	}
	for _, e := range people {
		if err := staff.Insert(ctx, e); err != nil {
			return err
		}
	}
	rows, err := count(ctx, st, table)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "inserted %d employees, each with its 2 index copies in one transaction: %d rows (with the partition's fence and tail)\n", len(people), rows)

	e, err := byValue.Find(ctx, "Sales", "email", "jun@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "by email jun@contoso.com: %s %s %s (one point read of the full copy)\n", e.ID, e.FirstName, e.Phone)

	var halls []string
	for e, err := range byValue.FindAll(ctx, "Sales", "lastname", "Hall") {
		if err != nil {
			return err
		}
		halls = append(halls, e.FirstName+" ("+e.Email+")")
	}
	fmt.Fprintf(w, "by last name Hall: %s (the copies hold the first name only: each entity read from its row)\n", strings.Join(halls, ", "))

	var emails []string
	for e, err := range byValue.Range(ctx, "Sales", "email", "d", "k") {
		if err != nil {
			return err
		}
		emails = append(emails, e.Email)
	}
	fmt.Fprintf(w, "emails from d to k: %s\n", strings.Join(emails, ", "))
	var names []string
	for e, err := range byValue.Prefix(ctx, "Sales", "lastname", "K") {
		if err != nil {
			return err
		}
		names = append(names, e.FirstName+" "+e.LastName)
	}
	fmt.Fprintf(w, "last names starting with K: %s\n", strings.Join(names, ", "))

	// Don changes his email: the entity and its copies move in one
	// transaction, conditional on the ETag Insert stored in the value.
	don := people[0]
	don.Email = "donald@contoso.com"
	if err := staff.Update(ctx, don, store.Merge); err != nil {
		return err
	}
	if _, err := byValue.Find(ctx, "Sales", "email", "don@contoso.com"); !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("the old email still resolves: %v", err)
	}
	got, err := byValue.Find(ctx, "Sales", "email", "donald@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "don@contoso.com after the change: not found; donald@contoso.com finds", got.ID)

	// Ken takes Ann's email: refused, nothing written.
	ken := people[2]
	ken.Email = "ann@contoso.com"
	var dup *partition.DuplicateError
	if err := staff.Update(ctx, ken, store.Merge); errors.As(err, &dup) {
		fmt.Fprintf(w, "Ken to %s: refused, %s %q is taken\n", ken.Email, dup.IndexName, dup.Value)
	} else {
		return fmt.Errorf("a taken email was accepted: %v", err)
	}

	if err := staff.Delete(ctx, "Sales", people[1].ID, ""); err != nil {
		return err
	}
	if rows, err = count(ctx, st, table); err != nil {
		return err
	}
	fmt.Fprintf(w, "deleted Jun with his copies: %d rows left\n", rows)
	rep, err := staff.Check(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Check: %d entities, clean %v\n", rep.Entities, rep.Clean())
	return nil
}

// count reads every row of table.
func count(ctx context.Context, st store.Store, table string) (int, error) {
	n := 0
	for _, err := range store.All(ctx, st.Table(table), store.Query{}) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
