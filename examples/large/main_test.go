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
	"github.com/tablekit/tablekit/store/azstore/azblobs"
)

const wantOutput = `put a 5242880-byte body and a 200000-byte scan: blobs 2, the entity under 1 KiB true; the body's blob is gzip
read back whole: body equal true, scan equal true
a listing reads the title only: "Q3 figures", body 0 bytes, no blob read
update to a short body: blobs left 1 (the scan's)
an update with the ETag read before that: refused (412), nothing written
a writer crashed (true) between its blob and its entity: no entity, blobs 2 (one orphan)
sweep now: young 2, removed 0 (the grace period protects writes in flight)
sweep two hours later, dry run: orphans found 1, referenced 1, removed 0
sweep two hours later: removed 1, blobs left 1
4 writers x 3 puts of one document: the last stands whole (body matches: true), blobs in all 2
a missing blob is an error naming the entity (reports, shared) and the property Body
keys too long for a blob name: refused (KeyValueTooLarge), blobs 1
`

func runOn(t *testing.T, st store.Store, table, container string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(t.Context(), &out, st, table, container); err != nil {
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
	if _, err := st.Container(container).List(t.Context(), store.BlobListOptions{}); store.Code(err) != store.CodeContainerNotFound {
		t.Fatalf("container %s was left behind: %v", container, err)
	}
}

func TestLargeOnMemstore(t *testing.T) {
	runOn(t, memstore.New(memstore.WithShortPages(5)), "LargeDocs", "large-docs")
}

func TestLargeOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t), azblobs.Service())
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	n := time.Now().UnixNano() % 1_000_000_000
	runOn(t, st, fmt.Sprintf("LargeDocs%d", n), fmt.Sprintf("large-docs-%d", n))
}
