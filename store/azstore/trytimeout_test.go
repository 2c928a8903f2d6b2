package azstore

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestBlobTryTimeout: a blob request's tries are bounded by
// Options.BlobTryTimeout, not by the table requests' Retry.TryTimeout: a
// put the server holds past the blob bound is abandoned and reported
// unknown (sent once, never resent); with the blob bound off, the same
// put waits for its answer even though the table bound is shorter.
func TestBlobTryTimeout(t *testing.T) {
	var puts atomic.Int32
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, _ int) {
		if r.Method == http.MethodPut {
			puts.Add(1)
			time.Sleep(400 * time.Millisecond)
			w.Header().Set("ETag", `"0x1"`)
			w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	open := func(table, blob time.Duration) store.Container {
		retry := fastRetry
		retry.TryTimeout = table
		st, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: f.srv.URL + "/acct", Blob: f.srv.URL + "/acct"},
			&Options{Retry: retry, BlobTryTimeout: blob, Services: allServices()})
		if err != nil {
			t.Fatal(err)
		}
		return st.Container("photos")
	}
	cond := &store.BlobPutOptions{IfNoneMatchAny: true}

	_, err := open(-1, 50*time.Millisecond).Put(context.Background(), "a", []byte("x"), cond)
	if store.Code(err) != store.CodeResponseLost {
		t.Fatalf("put held past BlobTryTimeout: %v, want ResponseLost", err)
	}
	if n := puts.Load(); n != 1 {
		t.Fatalf("the abandoned put was sent %d times, want once", n)
	}

	puts.Store(0)
	if _, err := open(50*time.Millisecond, -1).Put(context.Background(), "b", []byte("x"), cond); err != nil {
		t.Fatalf("put with no blob bound and a short table bound: %v", err)
	}
	if n := puts.Load(); n != 1 {
		t.Fatalf("put sent %d times, want once", n)
	}
}
