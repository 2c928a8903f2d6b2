package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `inserted 4 employees, each with its head row and 2 index copies in one transaction: 16 rows
by email jun@contoso.com: emp_000152 Jun 555-0102 (one point read)
by last name Hall: Don (don@contoso.com), Ann (ann@contoso.com)
emails from d to k: don@contoso.com, jun@contoso.com
don@contoso.com after the change: not found; donald@contoso.com finds emp_000123
Ken to ann@contoso.com: refused, email "ann@contoso.com" is taken
deleted Jun with his copies: 13 rows left (his head row stays, saying he is gone)
`

func TestIndexOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(3)), "EmployeesIndexed", wantOutput, run)
}

func TestIndexOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "EmployeesIndexed")
	exampletest.Run(t, st, table, wantOutput, run)
}
