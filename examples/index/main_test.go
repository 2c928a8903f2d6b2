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

const wantOutput = `inserted 4 employees, each with its 2 index copies in one transaction: 12 rows
by email jun@contoso.com: emp_000152 Jun 555-0102 (one point read)
by last name Hall: Don (don@contoso.com), Ann (ann@contoso.com)
emails from d to k: don@contoso.com, jun@contoso.com
don@contoso.com after the change: not found; donald@contoso.com finds emp_000123
Ken to ann@contoso.com: refused, email "ann@contoso.com" is taken
deleted Jun with his copies: 9 rows left
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

func TestIndexOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(3)), "EmployeesIndexed")
}

func TestIndexOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("EmployeesIndexed%d", time.Now().UnixNano()%1_000_000_000))
}
