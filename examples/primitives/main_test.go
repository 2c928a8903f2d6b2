package main

import (
	"bytes"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

const wantOutput = `budget left in the transaction: 95 rows
committed version 1: employee, email index and outbox message together
second writer refused: another writer committed after version 1
refused: index email email_ada@contoso.com is taken
answer lost, commit recovered through the fence: true (version 3)
read 6 rows at version 3 in 1 request(s)
delivered employee-added "000123" written at version 1
`

// The walkthrough prints the same lines on memstore and on Azurite, and
// deletes its table.
func TestRun(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		table := "Primitives" + b.Name
		var out bytes.Buffer
		if err := run(t.Context(), &out, b.Store, table); err != nil {
			t.Fatal(err)
		}
		if out.String() != wantOutput {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), wantOutput)
		}
		page, err := b.Store.ListTables(t.Context(), store.ListTablesOptions{Prefix: table})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tables) != 0 {
			t.Fatalf("tables left behind: %v", page.Tables)
		}
	})
}
