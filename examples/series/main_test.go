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

const wantOutput = `8 writers added 200 messages at once: 200 counted, 200 writes applied, none lost
the day in one read of 1 entity: [0 0 0 0 0 0 0 0 0 34 34 33 33 33 33 0 0 0 0 0 0 0 0 0]
a year of daily values: 365 slots in 2 entities, read back in order: first week [0 10 20 30 40 50 60]
24 frames of 60,000 bytes: 2 entities of at most 1 MiB
a 70,000-byte value is refused (PropertyValueTooLarge), the series unchanged at version 1
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

func TestSeriesOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(5)), "MessageCounts")
}

func TestSeriesOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t))
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("MessageCounts%d", time.Now().UnixNano()%1_000_000_000))
}
