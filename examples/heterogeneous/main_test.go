package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `one partition: a department, 2 employees written as version 1, 1 as version 2, a badge
  employee 000123: Hall, Don (555-0101)
  employee 000152: Cao, Jun (555-0102)
  employee 000155: Kwok, Ken (555-0103)
  badge badge-7 of 000155: lobby,floor 3
  department Sales, manager 000123
the version 1 program reading Ken's version 2 row: refused as another kind: true
upgrade: 2 old rows rewritten as version 2; a version 2 repository now reads 3 employees
`

func TestHeterogeneousOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(3)), "Departments", wantOutput, run)
}

func TestHeterogeneousOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "Departments")
	exampletest.Run(t, st, table, wantOutput, run)
}
