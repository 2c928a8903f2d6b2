// Command quickstart shows tablekit's store contract end to end: create a
// table, insert, read, update with an ETag, query a key range, run a
// transaction and delete. It runs on memstore by default; pass -conn (or set
// TABLEKIT_CONN) to run the same program against Azurite or Azure.
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

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

func main() {
	conn := flag.String("conn", os.Getenv("TABLEKIT_CONN"), "storage connection string (Azurite or Azure); empty runs on memstore")
	table := flag.String("table", "Quickstart", "table name to use (created and deleted)")
	flag.Parse()

	st, backend, err := open(*conn)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("quickstart on %s: %v", backend, err)
	}
}

// run is the whole walkthrough; it cleans up the table it creates.
func run(ctx context.Context, w io.Writer, st store.Store, name string) (err error) {
	if err := st.CreateTable(ctx, name); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), name); err == nil {
			err = derr
		}
	}()
	t := st.Table(name)

	// Insert: typed values map to EDM types (int64 -> Edm.Int64, time.Time -> Edm.DateTime).
	hired := time.Date(2021, 3, 1, 9, 0, 0, 0, time.UTC)
	etag, err := t.Insert(ctx, store.Entity{PartitionKey: "Sales", RowKey: "000123", Properties: map[string]any{
		"Name": "Ada Lovelace", "Age": int32(36), "Salary": int64(185000), "Hired": hired,
	}})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "inserted Sales/000123")

	// Read it back.
	e, err := t.Get(ctx, "Sales", "000123", nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read %s, age %d, salary %d\n", e.Properties["Name"], e.Properties["Age"], e.Properties["Salary"])

	// Update with the ETag we read: optimistic concurrency.
	e.Properties["Age"] = int32(37)
	newTag, err := t.Update(ctx, e, store.Merge, etag)
	if err != nil {
		return err
	}
	// A second update with the stale ETag fails with 412.
	_, err = t.Update(ctx, e, store.Merge, etag)
	if !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("stale ETag: want a precondition failure, got %v", err)
	}
	fmt.Fprintf(w, "updated with ETag; stale ETag refused: %s\n", store.Code(err))
	_ = newTag

	// A transaction: up to 100 writes to one partition, all or nothing.
	var actions []store.Action
	for i := 124; i < 130; i++ {
		actions = append(actions, store.Action{Kind: store.ActionInsert, Entity: store.Entity{
			PartitionKey: "Sales", RowKey: fmt.Sprintf("%06d", i),
			Properties: map[string]any{"Name": fmt.Sprintf("Employee %d", i), "Age": int32(20 + i%40)},
		}})
	}
	if _, err := t.Transact(ctx, actions); err != nil {
		return err
	}
	fmt.Fprintf(w, "transaction inserted %d entities\n", len(actions))

	// Query a row range with an escaped, typed filter, following every page.
	f := filter.And(filter.PK.Eq("Sales"), filter.RK.Ge("000124"), filter.RK.Lt("000127"))
	q := store.Query{Filter: f.String(), Select: []string{"Name"}}
	for {
		page, err := t.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range page.Entities {
			fmt.Fprintf(w, "  %s/%s %s\n", e.PartitionKey, e.RowKey, e.Properties["Name"])
		}
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}

	// Delete unconditionally.
	if err := t.Delete(ctx, "Sales", "000123", store.ETagAny); err != nil {
		return err
	}
	_, err = t.Get(ctx, "Sales", "000123", nil)
	fmt.Fprintf(w, "deleted; reading it again: not found = %v\n", errors.Is(err, store.ErrNotFound))
	return nil
}

// open returns memstore, or the Azure backend when a connection string is given.
func open(conn string) (store.Store, string, error) {
	if conn == "" {
		return memstore.New(), "memstore", nil
	}
	st, err := openAzure(conn)
	return st, "azure", err
}
