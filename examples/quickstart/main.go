// Command quickstart shows tablekit end to end on a typed repository:
// create a table, insert a struct, read it back, update it with its ETag,
// query a key range across every page, run a transaction and delete. It
// runs on memstore by default; pass -conn (or set TABLEKIT_CONN, or
// TABLEKIT_AZURITE_CONN as make azurite prints it) to run the same program
// against Azurite or Azure. It prints which backend it ran on.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -conn "$TABLEKIT_AZURITE_CONN"
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

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Employee is one row of the Employees table: the department is the
// PartitionKey, the zero-padded employee id the RowKey. Salary is an int64,
// so it is stored as Edm.Int64; Hired is stored as Edm.DateTime.
type Employee struct {
	Department string     `table:",pk"`
	ID         string     `table:",rk"`
	ETag       store.ETag `table:",etag"`
	Name       string
	Age        int32
	Salary     int64
	Hired      time.Time
}

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "Quickstart", "table to use (created, then deleted)")
	flag.Parse()

	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("quickstart on %s: %v", name, err)
	}
}

// run is the whole walkthrough; it deletes the table it creates.
func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = derr
		}
	}()
	repo := mapper.NewRepository[Employee](st, table)

	// Insert a struct; the ETag the service returns lands in the struct.
	ada := Employee{Department: "Sales", ID: "000123", Name: "Ada Lovelace", Age: 36,
		Salary: 185_000, Hired: time.Date(2021, 3, 1, 9, 0, 0, 0, time.UTC)}
	if err := repo.Insert(ctx, &ada); err != nil {
		return err
	}
	fmt.Fprintln(w, "inserted Sales/000123")

	got, err := repo.Get(ctx, "Sales", "000123")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read %s, age %d, salary %d, hired %s\n", got.Name, got.Age, got.Salary, got.Hired.Format(time.DateOnly))

	// Update with the ETag we read: optimistic concurrency by default.
	stale := got
	got.Age = 37
	if err := repo.Update(ctx, &got, store.Merge); err != nil {
		return err
	}
	stale.Age = 99
	err = repo.Update(ctx, &stale, store.Merge)
	if !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("update with a stale ETag: want a precondition failure, got %v", err)
	}
	fmt.Fprintf(w, "updated with its ETag; a stale ETag is refused: %s\n", store.Code(err))

	// A transaction: up to 100 writes to one partition, all or nothing.
	batch := repo.Partition("Sales").Batch()
	for i := 124; i < 130; i++ {
		e := Employee{Department: "Sales", ID: fmt.Sprintf("%06d", i), Name: fmt.Sprintf("Employee %d", i), Age: int32(20 + i%40)}
		if err := batch.Insert(&e); err != nil {
			return err
		}
	}
	if err := batch.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "transaction inserted %d employees\n", batch.Len())

	// A typed range query: field names and value types are checked when the
	// filter is built, and the iterator follows every continuation token.
	where := mapper.Where[Employee]("ID").Between("000124", "000127").And(mapper.Where[Employee]("Age").Ge(int32(20)))
	for e, err := range repo.Partition("Sales").Query(ctx, where) {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s/%s %s (%d)\n", e.Department, e.ID, e.Name, e.Age)
	}

	// Delete with the ETag, then check it is gone.
	if err := repo.Delete(ctx, &got); err != nil {
		return err
	}
	_, err = repo.Get(ctx, "Sales", "000123")
	fmt.Fprintf(w, "deleted; reading it again: not found = %v\n", errors.Is(err, store.ErrNotFound))
	return nil
}
