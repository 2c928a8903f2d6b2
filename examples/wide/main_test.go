package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `Ada Lovelace: 367 properties and a 150000-byte photo in 2 rows, written in one transaction
read back with one query of its rows: day 0 = 0, day 364 = 7 messages
two editors on one version: the first wrote, the second found it changed (UpdateConditionNotSatisfied); stored: Ada King with a 150000-byte photo
shrunk to 2 properties: 1 row, version 3; the partition holds 2 rows with the plain entity
a 5 MiB photo is refused (RequestBodyTooLarge): the value's strings and binary values alone take at least 6990511 bytes of a transaction body (binary as base64): the service's limit is 4194304
values in partition Sales: emp_000123, emp_000125
emp_000125 deleted: not found
`

func TestWideOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(5)), "WideEmployees", wantOutput, run)
}

func TestWideOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "WideEmployees")
	exampletest.Run(t, st, table, wantOutput, run)
}
