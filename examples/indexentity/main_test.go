package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `lists beside the employees, one transaction with each write, per department:
  found Jones: emp_000123 Don (Sales), emp_000152 Ann (Sales)
  Don Jones becomes Don Smith; Ann leaves
  after the changes, Jones: none
  after the changes, Smith: emp_000123 Don (Sales), emp_000200 Bo (Sales)
  the Smiths' list: [("Sales", "emp_000123") ("Sales", "emp_000200")]
lists in table LastNames, one partition per last name, through the engine:
  found Jones: emp_000007 Cy (Marketing), emp_000123 Don (Sales), emp_000152 Ann (Sales)
  Don Jones becomes Don Smith; Ann leaves
  after the changes, Jones: emp_000007 Cy (Marketing)
  after the changes, Smith: emp_000123 Don (Sales), emp_000200 Bo (Sales)
  the Smiths' list: [("Sales", "emp_000123") ("Sales", "emp_000200")]
lists in blobs of lastnames, one per last name, through the engine:
  found Jones: emp_000007 Cy (Marketing), emp_000123 Don (Sales), emp_000152 Ann (Sales)
  Don Jones becomes Don Smith; Ann leaves
  after the changes, Jones: emp_000007 Cy (Marketing)
  after the changes, Smith: emp_000123 Don (Sales), emp_000200 Bo (Sales)
  the Smiths' list: [("Sales", "emp_000123") ("Sales", "emp_000200")]
`

// TestIndexEntity runs the walk-through on memstore and on Azurite.
func TestIndexEntity(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		suffix := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
		var out bytes.Buffer
		if err := run(t.Context(), &out, b.Store, suffix); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Fatalf("output:\n%s\nwant:\n%s", got, want)
		}
	})
}
