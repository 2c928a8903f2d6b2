package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

const wantOutput = `inserted Sales/000123
read Ada Lovelace, age 36, salary 185000, hired 2021-03-01
updated with its ETag; a stale ETag is refused: UpdateConditionNotSatisfied
transaction inserted 6 employees
  Sales/000124 Employee 124 (24)
  Sales/000125 Employee 125 (25)
  Sales/000126 Employee 126 (26)
deleted; reading it again: not found = true
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
	// The walkthrough cleans up after itself.
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

func TestQuickstartOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(3)), "Quickstart")
}

func TestQuickstartOnAzurite(t *testing.T) {
	conn := azuritetest.Conn(t)
	st, backend, err := open(conn)
	if err != nil || backend != "azure" {
		t.Fatalf("open: %v (%s)", err, backend)
	}
	runOn(t, st, fmt.Sprintf("Quickstart%d", time.Now().UnixNano()%1_000_000_000))
}

func TestQuickstartFailsCleanlyOnAnExistingTable(t *testing.T) {
	st := memstore.New()
	if err := st.CreateTable(context.Background(), "Taken"); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), &bytes.Buffer{}, st, "Taken")
	if store.Code(err) != store.CodeTableAlreadyExists {
		t.Fatalf("run on an existing table: %v, want TableAlreadyExists", err)
	}
}
