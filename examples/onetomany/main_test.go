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

const wantOutput = `Don Hall and 2 reviews in one transaction; Jun Cao (id 0001234) beside them
one range query: Don Hall (Account manager) with reviews 2024:4 2025:5 2026:5
add from a stale copy of the employee refused: true
deleted Don's family in one transaction: 2 rows left (Jun Cao's family)
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

func TestOnetomanyOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(3)), "EmployeeReviews")
}

func TestOnetomanyOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("EmployeeReviews%d", time.Now().UnixNano()%1_000_000_000))
}
