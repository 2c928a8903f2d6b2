package azstore

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestIfMatchGoesOutAsReceived proves an ETag is sent as If-Match byte for
// byte as the service gave it (W/"datetime'...'" with its %3A escapes),
// never unescaped or quoted again, by single updates and deletes and in
// every sub-request of a transaction, and that "*" stays "*".
func TestIfMatchGoesOutAsReceived(t *testing.T) {
	const etag = `W/"datetime'2024-02-26T20%3A27%3A43.6698791Z'"`
	var mu sync.Mutex
	var got, batches []string
	rec := newRecorder(t)
	inner := rec.srv.Config.Handler
	rec.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		if strings.HasSuffix(r.URL.Path, "$batch") {
			batches = append(batches, string(b))
		} else {
			got = append(got, r.Method+" "+r.Header.Get("If-Match"))
		}
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		inner.ServeHTTP(w, r)
	})
	tbl := rec.store(t).Table("tbl")
	ctx := t.Context()
	e := store.Entity{PartitionKey: "p", RowKey: "r"}
	if _, err := tbl.Update(ctx, e, store.Merge, etag); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Update(ctx, e, store.Replace, store.ETagAny); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, "p", "r", etag); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Transact(ctx, []store.Action{
		{Kind: store.ActionUpdateReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}, IfMatch: etag},
		{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "b"}, IfMatch: etag},
	}); err != nil {
		t.Fatal(err)
	}
	// Sub-requests are parsed here, on the test goroutine.
	for _, b := range batches {
		for _, s := range subRequestParts(t, b) {
			got = append(got, s.method+" "+s.ifMatch)
		}
	}
	want := []string{"PATCH " + etag, "PUT *", "DELETE " + etag, "PUT " + etag, "DELETE " + etag}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("If-Match sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
