// Command primitives shows core/partition, the primitives every
// pattern package builds on: a fenced transaction that writes an employee,
// its unique email index copy and an outbox message together; a
// concurrent writer refused by the fence; a taken email refused by name; a
// commit whose answer is lost, resolved through the fence; a consistent
// read; and an outbox drain. It runs on memstore by default; pass -conn
// (or set TABLEKIT_CONN) to run it against Azurite or Azure.
//
//	go run ./examples/primitives
//	go run ./examples/primitives -conn "$TABLEKIT_AZURITE_CONN"
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/store"
)

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "Primitives", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fmt.Println("on", name)
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("primitives on %s: %v", name, err)
	}
}

// lossy passes every request to the table, except that it loses the
// answer to the next transaction once armed, after the service applied it.
type lossy struct {
	store.Table
	armed atomic.Bool
}

func (l *lossy) Transact(ctx context.Context, a []store.Action) ([]store.ActionResult, error) {
	res, err := l.Table.Transact(ctx, a)
	if err == nil && l.armed.CompareAndSwap(true, false) {
		return nil, &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true,
			Source: store.SourceTransport, Message: "the connection broke before the answer came"}
	}
	return res, err
}

// employee returns an employee row and its unique email index row.
func employee(id, name, email string) (store.Entity, store.Entity) {
	return store.Entity{RowKey: "empid_" + id, Properties: map[string]any{"Name": name, "Email": email}},
		store.Entity{RowKey: "email_" + email, Properties: map[string]any{"ID": id}}
}

// run is the whole walkthrough; it deletes the table it creates.
func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.Background(), table); err == nil {
			err = derr
		}
	}()
	tbl := &lossy{Table: st.Table(table)}
	p, err := partition.New(tbl, "Sales", nil)
	if err != nil {
		return err
	}

	// 1. One transaction: the employee, its index copy, an outbox message.
	tx, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	emp, idx := employee("000123", "Ada", "ada@contoso.com")
	if err := errors.Join(tx.Insert("employee", emp), tx.Insert("index email", idx)); err != nil {
		return err
	}
	if _, err := tx.Outbox(partition.Message{Topic: "employee-added", Body: []byte("000123")}); err != nil {
		return err
	}
	fmt.Fprintf(w, "budget left in the transaction: %d rows\n", tx.Free().Rows)
	res, err := tx.Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "committed version %d: employee, email index and outbox message together\n", res.Version)

	// 2. Two writers begin from the same version; the fence lets one win.
	a, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	b, err := p.Begin(ctx)
	if err != nil {
		return err
	}
	e1, i1 := employee("000124", "Grace", "grace@contoso.com")
	e2, i2 := employee("000125", "Alan", "alan@contoso.com")
	if err := errors.Join(a.Insert("employee", e1), a.Insert("index email", i1), b.Insert("employee", e2), b.Insert("index email", i2)); err != nil {
		return err
	}
	if _, err := a.Commit(ctx); err != nil {
		return err
	}
	_, err = b.Commit(ctx)
	var conflict *partition.ConflictError
	if !errors.As(err, &conflict) {
		return fmt.Errorf("the second writer was not refused: %v", err)
	}
	fmt.Fprintf(w, "second writer refused: another writer committed after version %d\n", conflict.Version)

	// 3. A taken email: the error names the index row.
	tx, err = p.Begin(ctx)
	if err != nil {
		return err
	}
	e3, i3 := employee("000126", "Ada B.", "ada@contoso.com")
	if err := errors.Join(tx.Insert("employee", e3), tx.Insert("index email", i3)); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	var dup *partition.DuplicateError
	if !errors.As(err, &dup) {
		return fmt.Errorf("the taken email was not refused: %v", err)
	}
	fmt.Fprintf(w, "refused: %s %s is taken\n", dup.Label, dup.RowKey)

	// 4. The answer to a commit is lost after it applied: one read of the
	// fence settles it, nothing is sent twice.
	tx, err = p.Begin(ctx)
	if err != nil {
		return err
	}
	e4, i4 := employee("000127", "Edsger", "edsger@contoso.com")
	if err := errors.Join(tx.Insert("employee", e4), tx.Insert("index email", i4)); err != nil {
		return err
	}
	tbl.armed.Store(true)
	res, err = tx.Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "answer lost, commit recovered through the fence: %v (version %d)\n", res.Recovered, res.Version)

	// 5. A consistent read of the partition: data rows only.
	snap, err := p.Read(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read %d rows at version %d in %d request(s)\n", len(snap.Rows), snap.Fence.Version, snap.Requests)

	// 6. Drain the outbox: claim, deliver, remove.
	ob, err := partition.NewOutbox(tbl, nil)
	if err != nil {
		return err
	}
	for row, err := range ob.Scan(ctx, partition.ScanOptions{}) {
		if err != nil {
			return err
		}
		claimed, err := ob.Claim(ctx, row, "worker-1", time.Minute)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "delivered %s %q written at version %d\n", claimed.Topic, claimed.Body, claimed.Version)
		if err := ob.Remove(ctx, claimed); err != nil {
			return err
		}
	}
	return nil
}
