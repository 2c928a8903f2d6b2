package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `Don joins, before the worker:
  department Sales     budget 250000, manager "" ""
  department Support   budget  90000, manager "" ""
  team east, region East, lead ""
  targets of 000123: Departments Sales (no copy); Teams east (no copy);
after the worker:
  department Sales     budget 250000, manager "Don Hall" "555-0100"
  department Support   budget  90000, manager "" ""
  team east, region East, lead "Don Hall"
Don moves to Support and Marketing, with a new phone:
  department Sales     budget 250000, manager "" ""
  department Support   budget  90000, manager "Don Hall" "555-0199"
  team east, region East, lead "Don Hall"
  targets of 000123: Departments Support (current); Departments Marketing (no copy); Teams east (current);
Marketing made, Don refreshed:
  department Marketing budget  40000, manager "Don Hall" "555-0199"
  department Sales     budget 250000, manager "" ""
  department Support   budget  90000, manager "Don Hall" "555-0199"
  team east, region East, lead "Don Hall"
Support's copy: map[ManagerName:Don Hall ManagerPhone:555-0199], from Sales/000123 at version 2, behind false; its source now: Don Hall, 555-0199
Don leaves:
  department Marketing budget  40000, manager "" ""
  department Sales     budget 250000, manager "" ""
  department Support   budget  90000, manager "" ""
  team east, region East, lead ""
check clean: true; poison queue: 0 messages
`

// TestDenorm runs the walkthrough on memstore and on Azurite.
func TestDenorm(t *testing.T) {
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
