// Command onetomany shows the compound key pattern for a one-to-many
// relationship: an employee and the employee's yearly reviews in the
// department's partition, the reviews' RowKeys extending the employee's,
// written in one transaction and read back with one range query, a review
// added under the employee's fence, and the family deleted together. It
// runs on memstore by default; pass -conn (or set TABLEKIT_CONN) to run it
// against Azurite or Azure.
//
//	go run ./examples/onetomany
//	go run ./examples/onetomany -conn "$TABLEKIT_AZURITE_CONN"
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
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/onetomany"
	"github.com/tablekit/tablekit/store"
)

// Employee is stored under RowKey keys.Join("emp", ID).
type Employee struct {
	Department string     `table:"-"`
	ID         string     `table:"-"`
	ETag       store.ETag `table:",etag"`
	Name       string
	Title      string
}

// TableKeys computes the employee's keys.
func (e Employee) TableKeys() (string, string, error) {
	rk, err := keys.Join("emp", e.ID)
	return e.Department, rk, err
}

// SetTableKeys reads the key fields back.
func (e *Employee) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 2 {
		return fmt.Errorf("RowKey %q is not an employee's", rk)
	}
	e.Department, e.ID = pk, parts[1]
	return nil
}

// TableKind tells employees from reviews and from other rows.
func (Employee) TableKind() mapper.Kind { return mapper.Kind{Property: "Kind", Value: "employee"} }

// Review is stored under keys.Join("emp", EmployeeID, "review", Year).
type Review struct {
	Department string     `table:"-"`
	EmployeeID string     `table:"-"`
	Year       string     `table:"-"`
	ETag       store.ETag `table:",etag"`
	Rating     int32
	Notes      string
}

// TableKeys computes the review's keys.
func (r Review) TableKeys() (string, string, error) {
	rk, err := keys.Join("emp", r.EmployeeID, "review", r.Year)
	return r.Department, rk, err
}

// SetTableKeys reads the key fields back.
func (r *Review) SetTableKeys(pk, rk string) error {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 4 {
		return fmt.Errorf("RowKey %q is not a review's", rk)
	}
	r.Department, r.EmployeeID, r.Year = pk, parts[1], parts[3]
	return nil
}

// TableKind declares the review kind.
func (Review) TableKind() mapper.Kind { return mapper.Kind{Property: "Kind", Value: "review"} }

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "EmployeeReviews", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("onetomany on %s: %v", name, err)
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
	staff, err := onetomany.New[Employee, Review](st, table,
		func(r *Review) Employee { return Employee{Department: r.Department, ID: r.EmployeeID} })
	if err != nil {
		return err
	}
	review := func(id, year string, rating int32, notes string) *Review {
		return &Review{Department: "Sales", EmployeeID: id, Year: year, Rating: rating, Notes: notes}
	}
	don := &Employee{Department: "Sales", ID: "000123", Name: "Don Hall", Title: "Account manager"}
	if err := staff.Insert(ctx, don, review("000123", "2024", 4, "steady"), review("000123", "2025", 5, "closed the Fabrikam deal")); err != nil {
		return err
	}
	if err := staff.Insert(ctx, &Employee{Department: "Sales", ID: "0001234", Name: "Jun Cao"}, review("0001234", "2025", 3, "new")); err != nil {
		return err
	}
	fmt.Fprintln(w, "Don Hall and 2 reviews in one transaction; Jun Cao (id 0001234) beside them")

	// A review added later: one transaction with a write of the employee
	// conditional on the ETag Insert stored in don.
	if err := staff.Add(ctx, don, review("000123", "2026", 5, "promoted")); err != nil {
		return err
	}
	f, err := staff.Get(ctx, Employee{Department: "Sales", ID: "000123"})
	if err != nil {
		return err
	}
	var ys []string
	for _, r := range f.Children {
		ys = append(ys, fmt.Sprintf("%s:%d", r.Year, r.Rating))
	}
	fmt.Fprintf(w, "one range query: %s (%s) with reviews %s\n", f.Parent.Name, f.Parent.Title, strings.Join(ys, " "))

	// A writer holding an old copy of the employee cannot add to it.
	stale := f.Parent
	f.Parent.Title = "Sales lead"
	if err := staff.Update(ctx, &f.Parent); err != nil {
		return err
	}
	err = staff.Add(ctx, &stale, review("000123", "2027", 1, "from a stale copy"))
	fmt.Fprintln(w, "add from a stale copy of the employee refused:", errors.Is(err, store.ErrPreconditionFailed))

	if err := staff.Delete(ctx, &Employee{Department: "Sales", ID: "000123"}); err != nil {
		return err
	}
	left := 0
	for _, err := range store.All(ctx, st.Table(table), store.Query{}) {
		if err != nil {
			return err
		}
		left++
	}
	fmt.Fprintf(w, "deleted Don's family in one transaction: %d rows left (Jun Cao's family, and Don's row with the family head's two properties alone)\n", left)
	return nil
}
