package azstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestPercentKeysNeverTravelInEntityPaths proves every point operation on
// a key holding '%' goes out as a query or a $batch, never as a request
// whose path names the entity (which the service decodes twice).
func TestPercentKeysNeverTravelInEntityPaths(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "$batch"):
			changesetResponse(w, "HTTP/1.1 204 No Content\r\nContent-ID: 1\r\nETag: W/\"2\"\r\n\r\n")
		default:
			w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
			_, _ = io.WriteString(w, `{"value":[{"PartitionKey":"Metric%25","RowKey":"100%","odata.etag":"W/\"1\"","Timestamp":"2026-11-22T11:00:00.0000000Z","N":1}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: srv.URL + "/acct"}, &Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("tbl")
	ctx := t.Context()
	e := store.Entity{PartitionKey: "Metric%25", RowKey: "100%", Properties: map[string]any{"N": int32(2)}}
	got, err := tbl.Get(ctx, e.PartitionKey, e.RowKey, nil)
	if err != nil || got.PartitionKey != "Metric%25" || got.RowKey != "100%" || got.Properties["N"] != int32(1) {
		t.Fatalf("Get: %+v %v", got, err)
	}
	if tag, err := tbl.Update(ctx, e, store.Merge, `W/"1"`); err != nil || tag != `W/"2"` {
		t.Fatalf("Update: %q %v", tag, err)
	}
	if tag, err := tbl.Upsert(ctx, e, store.Replace); err != nil || tag != `W/"2"` {
		t.Fatalf("Upsert: %q %v", tag, err)
	}
	if err := tbl.Delete(ctx, e.PartitionKey, e.RowKey, store.ETagAny); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 4 {
		t.Fatalf("sent %d requests, want 4: %q", len(paths), paths)
	}
	for _, p := range paths {
		if strings.Contains(p, "PartitionKey=") && !strings.Contains(p, "$batch") && !strings.HasPrefix(p, "GET /acct/tbl()") {
			t.Errorf("request %q names the entity in its path", p)
		}
	}
	if !strings.HasPrefix(paths[0], "GET /acct/tbl()") {
		t.Errorf("Get went out as %q, want a query", paths[0])
	}
}

// TestPercentKeysOnAzurite runs every point operation on keys holding '%'
// against Azurite and checks what is stored, ETags and the errors a single
// operation reports.
func TestPercentKeysOnAzurite(t *testing.T) {
	st := azuriteStore(t)
	ctx := context.Background()
	name := fmt.Sprintf("pct%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), name) })
	tbl := st.Table(name)
	pk, rk := "Metric%25", "100%"
	tag, err := tbl.Insert(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(1), "S": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, pk, rk, &store.GetOptions{Select: []string{"N"}})
	if err != nil || got.ETag != tag || got.Properties["N"] != int32(1) || len(got.Properties) != 1 {
		t.Fatalf("Get: %+v %v (ETag %s)", got, err, tag)
	}
	tag2, err := tbl.Update(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(2)}}, store.Merge, tag)
	if err != nil || tag2 == tag {
		t.Fatalf("Update: %q %v", tag2, err)
	}
	_, err = tbl.Update(ctx, store.Entity{PartitionKey: pk, RowKey: rk}, store.Merge, tag)
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeUpdateConditionNotSatisfied || se.Index != -1 {
		t.Fatalf("stale Update: %v, want UpdateConditionNotSatisfied without an index", err)
	}
	if _, err := tbl.Upsert(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(3)}}, store.Replace); err != nil {
		t.Fatal(err)
	}
	got, err = tbl.Get(ctx, pk, rk, nil)
	if err != nil || got.Properties["N"] != int32(3) || got.Properties["S"] != nil {
		t.Fatalf("after replace: %+v %v", got.Properties, err)
	}
	if err := tbl.Delete(ctx, pk, rk, got.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, pk, rk, nil); store.Code(err) != store.CodeResourceNotFound {
		t.Fatalf("Get after delete: %v, want ResourceNotFound", err)
	}
	if err := tbl.Delete(ctx, pk, rk, store.ETagAny); !errors.As(err, &se) || se.Code != store.CodeResourceNotFound || se.Index != -1 {
		t.Fatalf("Delete of a missing entity: %v", err)
	}
}

func TestPathSafe(t *testing.T) {
	long := strings.Repeat("k", 120)
	cases := []struct {
		pk, rk string
		want   bool
	}{
		{"Sales", "000123", true},
		{"", "", true},
		{"100%", "r", false},
		{"p", "%25", false},
		{long, long, false}, // 240 characters of keys: the segment passes 255
		{long[:100], long[:100], true},
		{long[:110], long[:109], true},  // 9 + 27 + 219 = 255: the longest segment sent
		{long[:110], long[:110], false}, // 256

		{strings.Repeat("'", 50), strings.Repeat("'", 50), false}, // 100 quotes double and encode to 600
		{strings.Repeat("é", 40), "r", false},                     // 40 x 2 bytes x 3
	}
	for _, c := range cases {
		if got := pathSafe("tablename", c.pk, c.rk); got != c.want {
			t.Errorf("pathSafe(%d-byte pk, %d-byte rk) = %v, want %v", len(c.pk), len(c.rk), got, c.want)
		}
	}
}

// TestLongKeysOnAzurite writes, reads, updates and deletes an entity whose
// keys are too long for an entity path, through the detour.
func TestLongKeysOnAzurite(t *testing.T) {
	st := azuriteStore(t)
	ctx := context.Background()
	name := fmt.Sprintf("long%d", time.Now().UnixNano()%1e9)
	if err := st.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), name) })
	tbl := st.Table(name)
	pk, rk := strings.Repeat("p", 500), strings.Repeat("r'", 250) // Azurite stores keys up to 512 units
	if pathSafe(name, pk, rk) {
		t.Fatal("test premise: these keys must take the detour")
	}
	tag, err := tbl.Insert(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(1)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.Get(ctx, pk, rk, nil)
	if err != nil || got.ETag != tag || got.RowKey != rk {
		t.Fatalf("Get: %v (ETag %s, want %s)", err, got.ETag, tag)
	}
	if _, err := tbl.Update(ctx, store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(2)}}, store.Replace, tag); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, pk, rk, tag); store.Code(err) != store.CodeUpdateConditionNotSatisfied {
		t.Fatalf("Delete with the stale ETag: %v", err)
	}
	if err := tbl.Delete(ctx, pk, rk, store.ETagAny); err != nil {
		t.Fatal(err)
	}
}
