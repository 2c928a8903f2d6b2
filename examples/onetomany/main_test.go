package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `Don Hall and 2 reviews in one transaction; Jun Cao (id 0001234) beside them
one range query: Don Hall (Account manager) with reviews 2024:4 2025:5 2026:5
add from a stale copy of the employee refused: true
deleted Don's family in one transaction: 3 rows left (Jun Cao's family, and Don's row with the family head's two properties alone)
`

func TestOnetomanyOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(3)), "EmployeeReviews", wantOutput, run)
}

func TestOnetomanyOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "EmployeeReviews")
	exampletest.Run(t, st, table, wantOutput, run)
}
