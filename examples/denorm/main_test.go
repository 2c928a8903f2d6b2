package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `Don joins, before the worker:
  department Sales   budget 250000, manager "" ""
  department Support budget  90000, manager "" ""
  team east, region East, lead "Don Hall"
after the worker:
  department Sales   budget 250000, manager "Don Hall" "555-0100"
  department Support budget  90000, manager "" ""
  team east, region East, lead "Don Hall"
Don moves to Support with a new phone:
  department Sales   budget 250000, manager "" ""
  department Support budget  90000, manager "Don Hall" "555-0199"
  team east, region East, lead "Don Hall"
Ann as lead of team east: refused true (denorm: relation lead: target Staff%[1]s ("Sales", "team_east") holds the copy of ("Sales", "emp_000123"), which still maps to it; ("Sales", "emp_000124") maps to it too: do not retry, change one of them)
Don leaves:
  department Sales   budget 250000, manager "" ""
  department Support budget  90000, manager "" ""
  team east, region East, lead ""
poison queue: 0 messages
`

// TestDenorm runs the walkthrough on memstore and on Azurite.
func TestDenorm(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		suffix := fmt.Sprint(time.Now().UnixNano() % 1_000_000)
		var out bytes.Buffer
		if err := run(t.Context(), &out, b.Store, suffix); err != nil {
			t.Fatal(err)
		}
		if got, w := out.String(), fmt.Sprintf(want, suffix); got != w {
			t.Fatalf("output:\n%s\nwant:\n%s", got, w)
		}
	})
}
