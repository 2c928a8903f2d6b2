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

const wantOutput = `appended 200 claims of emp000123, one every 15 minutes from 2026-11-20 08:00
latest 3, one query with $top=3:
  2026-11-22 09:55  written by .NET   99.00
  2026-11-22 09:45  parking           24.00
  2026-11-22 09:30  hotel             23.00
since 04:00: 25 claims
paged back in time: 4 pages of up to 64, 201 claims, the oldest at 2026-11-20 08:00
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

func TestLogtailOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(7)), "ExpenseClaims")
}

func TestLogtailOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("ExpenseClaims%d", time.Now().UnixNano()%1_000_000_000))
}
