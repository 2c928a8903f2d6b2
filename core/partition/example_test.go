package partition_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// Employee is a mapped type for the examples.
type Employee struct {
	Dept  string `table:",pk"`
	RK    string `table:",rk"`
	Name  string
	Email string
}

// An employee and its email index copy are written in one transaction
// with an outbox message; a consistent read returns the data rows only.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	p, err := partition.New(st.Table("Employees"), "Sales", nil)
	if err != nil {
		panic(err)
	}

	tx, err := p.Begin(ctx) // reads the fence: version 0, no row yet
	if err != nil {
		panic(err)
	}
	emp, _ := mapper.Encode(&Employee{Dept: "Sales", RK: "empid_000123", Name: "Ada", Email: "ada@contoso.com"})
	idx := store.Entity{RowKey: "email_ada@contoso.com", Properties: map[string]any{"ID": "000123"}}
	_ = tx.Insert("employee", emp)
	_ = tx.Insert("index email", idx)
	_, _ = tx.Outbox(partition.Message{Topic: "employee-added", Body: []byte("000123")})
	res, err := tx.Commit(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("committed version", res.Version)

	snap, err := p.Read(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, e := range snap.Rows {
		fmt.Println(e.RowKey)
	}
	fmt.Println("read version", snap.Fence.Version, "in", snap.Requests, "request")
	// Output:
	// committed version 1
	// email_ada@contoso.com
	// empid_000123
	// read version 1 in 1 request
}

// A read-modify-write over several rows: read the partition, compute,
// commit on top of what was read; when another writer got there first,
// read again.
func ExamplePartition_BeginAt() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Stock")
	p, _ := partition.New(st.Table("Stock"), "warehouse-1", nil)
	seed, _ := p.Begin(ctx)
	_ = seed.Insert("shelf", store.Entity{RowKey: "shelf_a", Properties: map[string]any{"Units": int64(10)}})
	_ = seed.Insert("shelf", store.Entity{RowKey: "shelf_b", Properties: map[string]any{"Units": int64(0)}})
	_, _ = seed.Commit(ctx)

	move := func(units int64) error {
		for {
			snap, err := p.Read(ctx, nil)
			if err != nil {
				return err
			}
			a, b := snap.Rows[0], snap.Rows[1]
			tx, err := p.BeginAt(snap.Fence)
			if err != nil {
				return err
			}
			a.Properties["Units"] = a.Properties["Units"].(int64) - units
			b.Properties["Units"] = b.Properties["Units"].(int64) + units
			_ = tx.Upsert("from", a, store.Replace)
			_ = tx.Upsert("to", b, store.Replace)
			_, err = tx.Commit(ctx)
			if errors.Is(err, partition.ErrConflict) {
				continue // someone changed the partition after our read
			}
			return err
		}
	}
	if err := move(3); err != nil {
		panic(err)
	}
	snap, _ := p.Read(ctx, nil)
	fmt.Println(snap.Rows[0].Properties["Units"], snap.Rows[1].Properties["Units"])
	// Output: 7 3
}

// Errors name the row that failed and what it means: here a unique index
// copy whose value another employee holds.
func ExampleDuplicateError() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	p, _ := partition.New(st.Table("Employees"), "Sales", nil)
	add := func(id, email string) error {
		tx, err := p.Begin(ctx)
		if err != nil {
			return err
		}
		_ = tx.Insert("employee", store.Entity{RowKey: "empid_" + id})
		_ = tx.Insert("index email", store.Entity{RowKey: "email_" + email, Properties: map[string]any{"ID": id}})
		_, err = tx.Commit(ctx)
		return err
	}
	_ = add("000123", "ada@contoso.com")
	err := add("000124", "ada@contoso.com")
	var dup *partition.DuplicateError
	if errors.As(err, &dup) {
		fmt.Printf("%s taken: %s\n", dup.Label, dup.RowKey)
	}
	// Output: index email taken: email_ada@contoso.com
}

// The transaction budget: the fence and the tail take 2 of the 100
// actions, and a row that does not fit is refused before anything is
// sent.
func ExampleTxn_Free() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Things")
	p, _ := partition.New(st.Table("Things"), "p", nil)
	tx, _ := p.Begin(ctx)
	fmt.Println("rows free:", tx.Free().Rows)
	_, _ = tx.Outbox(partition.Message{Topic: "audit"})
	fmt.Println("rows free after an outbox row:", tx.Free().Rows)
	for i := 0; tx.Free().Rows > 0; i++ {
		_ = tx.Insert("item", store.Entity{RowKey: fmt.Sprintf("r%02d", i)})
	}
	err := tx.Insert("item", store.Entity{RowKey: "one-more"})
	fmt.Println(errors.Is(err, mapper.ErrBatchFull))
	fmt.Println(err)
	// Output:
	// rows free: 98
	// rows free after an outbox row: 97
	// true
	// batch is full: partition "p": row "item": InvalidInput (400): row "one-more" would be row 99: a transaction holds 100 actions, 2 of them taken by the fence and the tail, so at most 98 rows (data and outbox)
}

// A drainer finds claimable outbox rows, claims one for a while, delivers
// it and removes it.
func ExampleOutbox() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Orders")
	tbl := st.Table("Orders")
	p, _ := partition.New(tbl, "customer-7", nil)
	tx, _ := p.Begin(ctx)
	_ = tx.Insert("order", store.Entity{RowKey: "order_1"})
	_, _ = tx.Outbox(partition.Message{Topic: "order-placed", Body: []byte(`{"order":1}`)})
	_, _ = tx.Commit(ctx)

	ob, _ := partition.NewOutbox(tbl, nil)
	for row, err := range ob.Scan(ctx, partition.ScanOptions{}) {
		if err != nil {
			panic(err)
		}
		claimed, err := ob.Claim(ctx, row, "worker-1", time.Minute)
		if err != nil {
			continue // another drainer has it
		}
		fmt.Printf("deliver %s %s from version %d\n", claimed.Topic, claimed.Body, claimed.Version)
		if err := ob.Remove(ctx, claimed); err != nil {
			panic(err)
		}
	}
	left, _ := ob.Pending(ctx, "customer-7")
	fmt.Println("left:", len(left))
	// Output:
	// deliver order-placed {"order":1} from version 1
	// left: 0
}

// A query of your own over a fenced partition includes DataCond, so it
// never decodes the fence, the tail or an outbox row as data.
func ExampleDataCond() {
	ctx := context.Background()
	st := memstore.New()
	_ = st.CreateTable(ctx, "Employees")
	tbl := st.Table("Employees")
	p, _ := partition.New(tbl, "Sales", nil)
	tx, _ := p.Begin(ctx)
	emp, _ := mapper.Encode(&Employee{Dept: "Sales", RK: "empid_000123", Name: "Ada"})
	_ = tx.Insert("employee", emp)
	_, _ = tx.Commit(ctx)

	page, _ := tbl.Query(ctx, store.Query{Filter: partition.DataCond("Sales").String()})
	for _, e := range page.Entities {
		var v Employee
		if err := mapper.Decode(e, &v); err != nil {
			panic(err)
		}
		fmt.Println(v.RK, v.Name)
	}
	// Output: empid_000123 Ada
}
