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

const wantOutput = `one partition: a department, 2 employees written as version 1, 1 as version 2, a badge
  employee 000123: Hall, Don (555-0101)
  employee 000152: Cao, Jun (555-0102)
  employee 000155: Kwok, Ken (555-0103)
  badge badge-7 of 000155: lobby,floor 3
  department Sales, manager 000123
the version 1 program reading Ken's version 2 row: refused as another kind: true
upgrade: 2 old rows rewritten as version 2; a version 2 repository now reads 3 employees
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

func TestHeterogeneousOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(3)), "Departments")
}

func TestHeterogeneousOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("Departments%d", time.Now().UnixNano()%1_000_000_000))
}
