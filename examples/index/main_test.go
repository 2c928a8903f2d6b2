package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampletest"
	"github.com/tablekit/tablekit/memstore"
)

const wantOutput = `inserted 4 employees, each with its 2 index copies in one transaction: 14 rows (with the partition's fence and tail)
by email jun@contoso.com: 000152 Jun 555-0102 (one point read of the full copy)
by last name Hall: Don (don@contoso.com), Ann (ann@contoso.com) (the copies hold the first name only: each entity read from its row)
emails from d to k: don@contoso.com, jun@contoso.com
last names starting with K: Ken Kwok
don@contoso.com after the change: not found; donald@contoso.com finds 000123
Ken to ann@contoso.com: refused, email "ann@contoso.com" is taken
deleted Jun with his copies: 11 rows left
Check: 3 entities, clean true
`

func TestIndexOnMemstore(t *testing.T) {
	exampletest.Run(t, memstore.New(memstore.WithShortPages(3)), "EmployeesIndexed", wantOutput, run)
}

func TestIndexOnAzurite(t *testing.T) {
	st, table := exampletest.Azurite(t, "EmployeesIndexed")
	exampletest.Run(t, st, table, wantOutput, run)
}
