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

func wantOutput(prefix string) string {
	return strings.ReplaceAll(`signed in 5 users a day for 40 days: 40 tables, {p}20261013 to {p}20261121
created ahead of time: [{p}20261122 {p}20261123]
user2's sign-ins from 11-19 to 11-21: 3, from 3 day tables in order
retention 30 days, horizon 2026-10-23 10:00: a dry run would delete 10 tables ({p}20261013 to {p}20261022)
deleted 10 tables holding 50 sign-ins, one DeleteTable request each; 32 tables kept
a late sign-in of 2026-10-18 is refused: periods: period is past the retention horizon
`, "{p}", prefix)
}

func runOn(t *testing.T, st store.Store, prefix string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(t.Context(), &out, st, prefix); err != nil {
		t.Fatal(err)
	}
	if want := wantOutput(prefix); out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	page, err := st.ListTables(t.Context(), store.ListTablesOptions{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tables) != 0 {
		t.Fatalf("tables left behind: %v", page.Tables)
	}
}

func TestPeriodsOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(3)), "DemoLogins")
}

func TestPeriodsOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("DemoLogins%d", time.Now().UnixNano()%1_000_000))
}
