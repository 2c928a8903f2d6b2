package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `appended 200 claims of emp000123, one every 15 minutes from 2026-11-20 08:00
latest 3, one query with $top=3:
  2026-11-22 09:55  written by .NET   99.00
  2026-11-22 09:45  parking           24.00
  2026-11-22 09:30  hotel             23.00
since 04:00: 25 claims
paged back in time: 4 pages of up to 64, 201 claims, the oldest at 2026-11-20 08:00
`

func TestLogtailOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(7)), "ExpenseClaims", wantOutput, run)
}

func TestLogtailOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "ExpenseClaims")
	exampletest.Run(t, st, table, wantOutput, run)
}
