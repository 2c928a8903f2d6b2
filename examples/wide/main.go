// Command wide shows the wide entities pattern: an employee with a year
// of daily message counts and a photo, more than one entity holds, stored
// across the rows of one partition in one transaction and read back with
// one query; two editors racing on one version; a value that shrinks; and
// a value too large for one transaction, refused before anything is
// sent. It runs on memstore by default; pass -conn (or set TABLEKIT_CONN)
// to run it against Azurite or Azure.
//
//	go run ./examples/wide
//	go run ./examples/wide -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"bytes"
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
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "WideEmployees", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("wide on %s: %v", name, err)
	}
}

// Employee is more than one entity holds: 365 daily message counts (kept
// by the extra map) beside its fields, and a photo larger than one binary
// property.
type Employee struct {
	Department string         `table:",pk"`
	ID         string         `table:",rk"`
	ETag       store.ETag     `table:",etag"`
	Name       string         `table:"Name"`
	Photo      []byte         `table:"Photo,omitempty"`
	Days       map[string]any `table:",extra"`
}

func employee(name string, photo int) Employee {
	e := Employee{Name: name, Photo: bytes.Repeat([]byte{0xFF, 0xD8, 0x42}, photo/3), Days: map[string]any{}}
	for d := range 365 {
		e.Days[fmt.Sprintf("Day%03d", d)] = int32((d * 7) % 11)
	}
	return e
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
	employees, err := wide.New[Employee](st, table, nil)
	if err != nil {
		return err
	}

	// One employee: 367 properties and a 150,000-byte photo.
	ada := employee("Ada Lovelace", 150_000)
	if _, err := employees.Put(ctx, "Sales", "emp_000123", &ada, ""); err != nil {
		return err
	}
	s, err := employees.Read(ctx, "Sales", "emp_000123")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %d properties and a %d-byte photo in %d rows, written in one transaction\n",
		s.Value.Name, len(s.Value.Days)+2, len(s.Value.Photo), s.Rows)
	fmt.Fprintf(w, "read back with one query of its rows: day 0 = %v, day 364 = %v messages\n", s.Value.Days["Day000"], s.Value.Days["Day364"])

	// Other rows of the partition are not read: a plain entity beside it.
	if _, err := st.Table(table).Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "dept_info", Properties: map[string]any{"Head": "Grace"}}); err != nil {
		return err
	}

	// Two editors read the same version and write at once: the header's
	// If-Match lets one in.
	a, b := s.Value, s.Value
	a.Name, b.Name = "Ada King", "Augusta Ada"
	b.Photo = nil
	_, errA := employees.Put(ctx, "Sales", "emp_000123", &a, s.ETag)
	_, errB := employees.Put(ctx, "Sales", "emp_000123", &b, s.ETag)
	after, _, err := employees.Get(ctx, "Sales", "emp_000123")
	if err != nil {
		return err
	}
	if errA != nil || !errors.Is(errB, partition.ErrChanged) {
		return fmt.Errorf("editors: %v and %v, want one write and one changed value", errA, errB)
	}
	fmt.Fprintf(w, "two editors on one version: the first wrote, the second found it changed (%s); stored: %s with a %d-byte photo\n",
		store.Code(errB), after.Name, len(after.Photo))

	// The value shrinks: its extra rows go in the same transaction.
	small := Employee{Name: after.Name, Days: map[string]any{"Day000": int32(1)}}
	if _, err := employees.Put(ctx, "Sales", "emp_000123", &small, after.ETag); err != nil {
		return err
	}
	s, err = employees.Read(ctx, "Sales", "emp_000123")
	if err != nil {
		return err
	}
	n, err := count(ctx, st.Table(table), "Sales")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "shrunk to %d properties: %d row, version %d; the partition holds %d rows with the plain entity\n", len(s.Value.Days)+1, s.Rows, s.Version, n)

	// A value one transaction cannot carry is refused before anything is sent.
	huge := employee("Too Big", 5<<20)
	_, err = employees.Put(ctx, "Sales", "emp_000124", &huge, "")
	var tl *wide.TooLargeError
	if !errors.As(err, &tl) {
		return fmt.Errorf("a 5 MiB photo: %v, want a TooLargeError", err)
	}
	fmt.Fprintf(w, "a 5 MiB photo is refused (%s): %s\n", store.Code(err), strings.SplitN(tl.Err.Message, ";", 2)[0])

	// Listing finds the values by their headers; Delete removes one.
	grace := employee("Grace Hopper", 0)
	if _, err := employees.Put(ctx, "Sales", "emp_000125", &grace, ""); err != nil {
		return err
	}
	var ids []string
	for id, err := range employees.IDs(ctx, "Sales") {
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	fmt.Fprintf(w, "values in partition Sales: %s\n", strings.Join(ids, ", "))
	if err := employees.Delete(ctx, "Sales", "emp_000125", store.ETagAny); err != nil {
		return err
	}
	if _, _, err := employees.Get(ctx, "Sales", "emp_000125"); !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("get after delete: %v", err)
	}
	fmt.Fprintln(w, "emp_000125 deleted: not found")
	return nil
}

// count counts the rows of a partition.
func count(ctx context.Context, tbl store.Table, pk string) (int, error) {
	n := 0
	for _, err := range store.All(ctx, tbl, store.Query{Filter: filter.PK.Eq(pk).String(), Select: []string{"RowKey"}}) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}
