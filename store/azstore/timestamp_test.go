package azstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestTimestampPropertyIsNotSent: a property named Timestamp is accepted
// (the service answers such a write with 204 and keeps its own
// Timestamp) and left out of every request body, so that the stored
// entity cannot depend on how a server treats it. The other properties
// are sent.
func TestTimestampPropertyIsNotSent(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/$batch") {
			changesetResponse(w,
				"HTTP/1.1 204 No Content\r\nContent-ID: 1\r\nETag: W/\"e1\"\r\n\r\n",
				"HTTP/1.1 204 No Content\r\nContent-ID: 2\r\nETag: W/\"e2\"\r\n\r\n")
			return
		}
		w.Header().Set("ETag", `W/"e"`)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: srv.URL + "/acct", Queue: srv.URL + "/acct", Blob: srv.URL + "/acct"},
		&Options{Retry: fastRetry, Services: allServices()})
	if err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("tbl")
	fake := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	e := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int64(1), "Timestamp": fake}}
	ctx := context.Background()
	for _, w := range []func() error{
		func() error { _, err := tbl.Insert(ctx, e); return err },
		func() error { _, err := tbl.Update(ctx, e, store.Merge, store.ETagAny); return err },
		func() error { _, err := tbl.Upsert(ctx, e, store.Replace); return err },
		func() error {
			_, err := tbl.Transact(ctx, []store.Action{{Kind: store.ActionInsert, Entity: e}, {Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "s", Properties: e.Properties}}})
			return err
		},
	} {
		if err := w(); err != nil {
			t.Fatalf("write with a Timestamp property: %v", err)
		}
	}
	if _, ok := e.Properties["Timestamp"]; !ok {
		t.Fatal("the caller's map lost its Timestamp")
	}
	if len(bodies) != 4 {
		t.Fatalf("%d requests, want 4", len(bodies))
	}
	for i, b := range bodies {
		if strings.Contains(b, "Timestamp") || !strings.Contains(b, `"A"`) {
			t.Errorf("request %d sent %q: want A and no Timestamp", i, b)
		}
	}
}
