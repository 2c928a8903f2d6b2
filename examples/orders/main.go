// Command orders is an order service's data layer on tablekit: each
// customer's partition holds the customer row and its orders side by side
// (two kinds in one partition), orders newest first. It shows that a query
// of one kind never returns the other, reads an order by its key fields,
// lists one day's orders with a time range over inverted-tick keys, and
// updates an order with its ETag. It runs on memstore by default; pass
// -conn (or set TABLEKIT_CONN or TABLEKIT_AZURITE_CONN) to run it against
// Azurite or Azure.
//
//	go run ./examples/orders
//	go run ./examples/orders -conn "$TABLEKIT_AZURITE_CONN"
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
	"github.com/tablekit/tablekit/store"
)

// Customer is the row "customer" of the customer's partition.
type Customer struct {
	ID   string `table:",pk"`
	Row  string `table:",rk"`
	Name string
	City string
}

// TableKind: the customer row's RowKey is "customer".
func (Customer) TableKind() mapper.Kind { return mapper.Kind{Prefix: "customer"} }

// Order is one order, in its customer's partition, keyed
// order_<inverted ticks of Placed>_<ID> so the newest sorts first.
type Order struct {
	Customer string
	Placed   time.Time
	ID       string
	ETag     store.ETag `table:",etag"`
	Total    int64      // cents
	Status   string
}

// TableKind: orders' RowKeys start with "order_".
func (Order) TableKind() mapper.Kind { return mapper.Kind{Prefix: "order_"} }

// TableKeys computes the keys from the fields.
func (o Order) TableKeys() (pk, rk string, err error) {
	inv, err := keys.InvertedTicks(o.Placed)
	if err != nil {
		return "", "", err
	}
	return o.Customer, "order_" + inv + "_" + o.ID, nil
}

// SetTableKeys splits the keys back into the fields.
func (o *Order) SetTableKeys(pk, rk string) error {
	rest, ok := strings.CutPrefix(rk, "order_")
	inv, id, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 {
		return fmt.Errorf("RowKey %q is not an order key", rk)
	}
	placed, err := keys.ParseInvertedTicks(inv)
	if err != nil {
		return err
	}
	o.Customer, o.Placed, o.ID = pk, placed, id
	return nil
}

func main() {
	conn := backend.ConnFlag()
	table := flag.String("table", "Orders", "table to use (created, then deleted)")
	flag.Parse()
	st, name, err := backend.Open(backend.Choose(*conn))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, st, *table); err != nil {
		log.Fatalf("orders on %s: %v", name, err)
	}
}

// day is the simulated first day of orders, so every run prints the same.
var day = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func run(ctx context.Context, w io.Writer, st store.Store, table string) (err error) {
	if err := st.CreateTable(ctx, table); err != nil {
		return err
	}
	defer func() {
		if derr := st.DeleteTable(context.WithoutCancel(ctx), table); err == nil {
			err = derr
		}
	}()
	customers := mapper.NewRepository[Customer](st, table)
	orders := mapper.NewRepository[Order](st, table)

	if err := customers.Insert(ctx, &Customer{ID: "c42", Row: "customer", Name: "Ada", City: "London"}); err != nil {
		return err
	}
	for i := range 5 {
		o := Order{Customer: "c42", Placed: day.Add(time.Duration(i) * 9 * time.Hour), ID: fmt.Sprintf("o%d", i+1),
			Total: int64(1000 * (i + 1)), Status: "placed"}
		if err := orders.Insert(ctx, &o); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "customer c42 and 5 orders in one partition")

	// One partition, two kinds: each repository reads only its own.
	var ids []string
	for o, err := range orders.Partition("c42").Query(ctx) {
		if err != nil {
			return err
		}
		ids = append(ids, o.ID)
	}
	fmt.Fprintln(w, "orders, newest first:", strings.Join(ids, " "))
	for c, err := range customers.Partition("c42").Query(ctx) {
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "customer row: %s of %s\n", c.Name, c.City)
	}

	// One day's orders: a half-open time range over the newest-first keys.
	rng, err := keys.InvertedTicksRange("order_", day.AddDate(0, 0, 1), day.AddDate(0, 0, 2))
	if err != nil {
		return err
	}
	ids = ids[:0]
	for o, err := range orders.Partition("c42").Query(ctx, mapper.Where[Order]("RowKey").InRange(rng)) {
		if err != nil {
			return err
		}
		ids = append(ids, o.ID+" at "+o.Placed.Format("15:04"))
	}
	fmt.Fprintln(w, "orders of", day.AddDate(0, 0, 1).Format(time.DateOnly)+":", strings.Join(ids, ", "))

	// Read by the key fields, update with the ETag read.
	o, err := orders.GetByKey(ctx, &Order{Customer: "c42", Placed: day.Add(18 * time.Hour), ID: "o3"})
	if err != nil {
		return err
	}
	o.Status = "shipped"
	if err := orders.Update(ctx, &o, store.Merge); err != nil {
		return err
	}
	fmt.Fprintf(w, "order %s: %s, total %d.%02d\n", o.ID, o.Status, o.Total/100, o.Total%100)

	// Reading the customer row as an order is refused, naming the row.
	_, err = orders.Get(ctx, "c42", "customer")
	fmt.Fprintln(w, "the customer row read as an order is refused:", errors.Is(err, mapper.ErrWrongKind))
	return nil
}
