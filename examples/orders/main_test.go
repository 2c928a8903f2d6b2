package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `customer c42 and 5 orders in one partition
orders, newest first: o5 o4 o3 o2 o1
customer row: Ada of London
orders of 2026-03-03: o5 at 12:00, o4 at 03:00
order o3: shipped, total 30.00
the customer row read as an order is refused: true
`

// TestOrders runs the walkthrough on memstore and on Azurite.
func TestOrders(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		var out bytes.Buffer
		table := fmt.Sprintf("Orders%d", time.Now().UnixNano()%1_000_000_000)
		if err := run(t.Context(), &out, b.Store, table); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}
