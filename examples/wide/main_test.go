package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

const wantOutput = `Ada Lovelace: 367 properties and a 150000-byte photo in 2 rows, written in one transaction
read back with one query of its rows: day 0 = 0, day 364 = 7 messages
two editors on one version: the first wrote, the second got a conflict (UpdateConditionNotSatisfied); stored: Ada King with a 150000-byte photo
shrunk to 2 properties: 1 row, version 3; the partition holds 2 rows with the plain entity
a 5 MiB photo is refused (RequestBodyTooLarge): the value's strings and binary values alone take at least 6990511 bytes of a transaction body (binary as base64): the service's limit is 4194304
values in partition Sales: emp_000123, emp_000125
emp_000125 deleted: not found
`

func runOn(t *testing.T, st store.Store, table string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(t.Context(), &out, st, table); err != nil {
		t.Fatal(err)
	}
	if out.String() != wantOutput {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), wantOutput)
	}
	page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: table})
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range page.Tables {
		if strings.EqualFold(ti.Name, table) {
			t.Fatalf("table %s was left behind", ti.Name)
		}
	}
}

func TestWideOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(5)), "WideEmployees")
}

func TestWideOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("WideEmployees%d", time.Now().UnixNano()%1_000_000_000))
}
