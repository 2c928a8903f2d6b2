package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `in Sales, through the department's list:
  found Jones: 000123 Don (Sales), 000152 Ann (Sales)
  found Smith: 000200 Bo (Sales)
in every department, through the global index:
  found Jones: 000007 Cy (Marketing), 000123 Don (Sales), 000152 Ann (Sales)
  found Smith: 000200 Bo (Sales)
Don Jones becomes Don Smith; Ann leaves
in Sales, through the department's list:
  after the changes, Jones: none
  after the changes, Smith: 000123 Don (Sales), 000200 Bo (Sales)
in every department, through the global index:
  after the changes, Jones: 000007 Cy (Marketing)
  after the changes, Smith: 000123 Don (Sales), 000200 Bo (Sales)
the Smiths of Sales: [("Sales", "000123") ("Sales", "000200")]
the Joneses' index rows, before the worker ran (FindAll left two out): [("Marketing", "000007") ("Sales", "000123") ("Sales", "000152")]
the Joneses, once the worker ran: [("Marketing", "000007")]
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
