// Command index shows the intra-partition secondary index pattern: the
// guide's employees, stored once by id and found as fast by email (a
// unique index holding a full copy) and by last name (a non-unique index
// holding a projection), with the copies moved in the same transaction
// when a value changes and a taken email refused. It runs on memstore by
// default; pass -conn (or set TABLEKIT_CONN) to run it against Azurite or
// Azure.
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

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/index"
	"github.com/tablekit/tablekit/store"
)

// Employee is stored under RowKey "emp_<id>" in its department's
// partition; the index copies sit beside it under "email..." and
// "lastname..." RowKeys, which the kind's prefix keeps out of its queries.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	FirstName  string
	LastName   string
	Email      string
	Phone      string
}

// TableKind declares the RowKey prefix of employees.
func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

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
	staff, err := index.New[Employee](st, table,
		index.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
		index.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName"))
	if err != nil {
		return err
	}
	people := []*Employee{
		{Department: "Sales", ID: "emp_000123", FirstName: "Don", LastName: "Hall", Email: "don@contoso.com", Phone: "555-0101"},
		{Department: "Sales", ID: "emp_000152", FirstName: "Jun", LastName: "Cao", Email: "jun@contoso.com", Phone: "555-0102"},
		{Department: "Sales", ID: "emp_000155", FirstName: "Ken", LastName: "Kwok", Email: "ken@contoso.com", Phone: "555-0103"},
		{Department: "Sales", ID: "emp_000171", FirstName: "Ann", LastName: "Hall", Email: "ann@contoso.com", Phone: "555-0104"},
	}
	for _, e := range people {
		if err := staff.Insert(ctx, e); err != nil {
			return err
		}
	}
	rows := 0
	for _, err := range store.All(ctx, st.Table(table), store.Query{}) {
		if err != nil {
			return err
		}
		rows++
	}
	fmt.Fprintf(w, "inserted %d employees, each with its head row and 2 index copies in one transaction: %d rows\n", len(people), rows)

	e, err := staff.Find(ctx, "Sales", "email", "jun@contoso.com")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "by email jun@contoso.com: %s %s %s (one point read)\n", e.ID, e.FirstName, e.Phone)

	var halls []string
	for e, err := range staff.FindAll(ctx, "Sales", "lastname", "Hall") {
		if err != nil {
			return err
		}
		halls = append(halls, e.FirstName+" ("+e.Email+")")
	}
	fmt.Fprintf(w, "by last name Hall: %s\n", strings.Join(halls, ", "))

	var emails []string
	for e, err := range staff.Range(ctx, "Sales", "email", "d", "k") {
		if err != nil {
			return err
		}
		emails = append(emails, e.Email)
	}
	fmt.Fprintf(w, "emails from d to k: %s\n", strings.Join(emails, ", "))

	// Don changes his email: the entity and both copies move in one
	// transaction, conditional on the ETag Insert stored in the value.
	don := people[0]
	don.Email = "donald@contoso.com"
	if err := staff.Update(ctx, don); err != nil {
		return err
	}
	if _, err := staff.Find(ctx, "Sales", "email", "don@contoso.com"); errors.Is(err, store.ErrNotFound) {
		fmt.Fprintln(w, "don@contoso.com after the change: not found; donald@contoso.com finds", don.ID)
	} else {
		return fmt.Errorf("the old email still resolves: %v", err)
	}

	// Ken takes Ann's email: refused, nothing written.
	ken := people[2]
	ken.Email = "ann@contoso.com"
	var dup *partition.DuplicateError
	if err := staff.Update(ctx, ken); errors.As(err, &dup) {
		fmt.Fprintf(w, "Ken to %s: refused, %s %q is taken\n", ken.Email, dup.IndexName, dup.Value)
	} else {
		return fmt.Errorf("a taken email was accepted: %v", err)
	}

	if err := staff.Delete(ctx, people[1]); err != nil {
		return err
	}
	rows = 0
	for _, err := range store.All(ctx, st.Table(table), store.Query{}) {
		if err != nil {
			return err
		}
		rows++
	}
	fmt.Fprintf(w, "deleted Jun with his copies: %d rows left (his head row stays, saying he is gone)\n", rows)
	return nil
}
