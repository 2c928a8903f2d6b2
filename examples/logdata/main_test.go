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

const wantOutput = `3 servers logged 3000 requests from 14:50 to 15:10: 48 appends of up to 4 KiB into 12 blobs (6 rollovers at 24 KiB, 3 at the hour)
write cost: 48 appends + 12 creates = 60 requests, 50.0 records per request
the blobs of 15:00-16:00 (one listing):
  web/2026/11/24/15/web-1-00000003.log   24499 bytes
  web/2026/11/24/15/web-1-00000004.log    5972 bytes
  web/2026/11/24/15/web-2-00000003.log   24500 bytes
  web/2026/11/24/15/web-2-00000004.log    5972 bytes
  web/2026/11/24/15/web-3-00000003.log   24499 bytes
  web/2026/11/24/15/web-3-00000004.log    5973 bytes
requests from 15:04 to 15:06: 300, of which 6 failed:
  15:04:04.937 web-2 GET /items/704 500 50ms
  15:04:23.074 web-3 GET /items/719 500 66ms
  15:04:50.400 web-1 GET /items/742 500 57ms
  15:05:08.537 web-2 GET /items/757 500 73ms
  15:05:26.674 web-3 GET /items/772 500 89ms
  15:05:54.000 web-1 GET /items/795 500 80ms
a 5 MiB record: RequestBodyTooLarge (413)
appending to a block blob: InvalidBlobType (409)
an empty block: InvalidHeaderValue (400)
a writer id with a slash: writer id "web/1": character '/' at offset 3 is not allowed (ASCII letters, digits, '-', '_', '.')
`

func runOn(t *testing.T, st store.Store, container string) {
	t.Helper()
	var out bytes.Buffer
	if err := run(t.Context(), &out, st, container); err != nil {
		t.Fatal(err)
	}
	if out.String() != wantOutput {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), wantOutput)
	}
	_, err := st.Container(container).List(t.Context(), store.BlobListOptions{})
	if store.Code(err) != store.CodeContainerNotFound {
		t.Fatalf("container %s was left behind (List: %v)", container, err)
	}
}

func TestLogdataOnMemstore(t *testing.T) {
	runOn(t, memstore.New(), "weblogs")
}

func TestLogdataOnAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t), azblobs.Service())
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	runOn(t, st, fmt.Sprintf("weblogs%d", time.Now().UnixNano()%1_000_000_000))
}
