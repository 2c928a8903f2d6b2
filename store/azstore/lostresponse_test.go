package azstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/store"
)

// hangUp reads the request and closes the connection without answering.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// TestLostAnswersAreReadBack proves what docs/azure.md promises for a
// write whose answer is lost (the server read the request, then the
// connection dropped): a non-idempotent write is never sent again; its
// rows are read back, and the read-back decides. An idempotent upsert is
// resent instead. When the read-back fails too, the outcome is reported
// unknown: ResponseLost, matching store.ErrUnknownOutcome and nothing
// that says "retry" or "failed".
func TestLostAnswersAreReadBack(t *testing.T) {
	stored := `{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Int64","A":"1"}`
	cases := []struct {
		name string
		op   func(tbl store.Table) error
		// readBack answers the GET of the read-back: the row, 404, or a
		// hang-up (the read-back fails).
		readBack string
		methods  string
		want     string // "done", "not done", "unknown"
	}{
		{"Insert/applied", func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, "row", "POST GET", "done"},
		{"Insert/not applied", func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, "404", "POST GET", "not done"},
		{"Insert/read-back fails", func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, "hangup", "POST GET", "unknown"},
		{"Delete/applied", func(tbl store.Table) error { return tbl.Delete(context.Background(), "p", "r", store.ETagAny) }, "404", "DELETE GET", "done"},
		{"Delete/not applied", func(tbl store.Table) error { return tbl.Delete(context.Background(), "p", "r", store.ETagAny) }, "row", "DELETE GET", "not done"},
		{"UpdateETag/not applied", func(tbl store.Table) error {
			// The row still has the ETag the update was conditional on.
			_, err := tbl.Update(context.Background(), store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int64(2)}}, store.Merge, `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
			return err
		}, "row", "PATCH GET", "not done"},
		{"Upsert", func(tbl store.Table) error {
			_, err := tbl.Upsert(context.Background(), entity("p", "r"), store.Replace)
			return err
		}, "", "PUT PUT", "done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var methods []string
			f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
				mu.Lock()
				methods = append(methods, r.Method)
				mu.Unlock()
				if n == 0 {
					hangUp(t, w)
					return
				}
				w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
				if r.Method != http.MethodGet {
					w.WriteHeader(204)
					return
				}
				switch tc.readBack {
				case "row":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, stored)
				case "404":
					odataError(w, 404, store.CodeResourceNotFound, "The specified resource does not exist.")
				default:
					hangUp(t, w)
				}
			})
			st := f.sharedKeyStore(t)
			err := tc.op(st.Table("tbl"))
			mu.Lock()
			got := strings.Join(methods, " ")
			mu.Unlock()
			// A failed read-back is retried by the read's own policy.
			if tc.readBack == "hangup" {
				got = strings.Join(strings.Fields(got)[:2], " ")
			}
			if got != tc.methods {
				t.Errorf("requests %q, want %q: a write that may have been applied is never sent again", got, tc.methods)
			}
			switch tc.want {
			case "done":
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
			case "not done":
				if !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) || store.Code(err) != store.CodeResponseLost {
					t.Fatalf("got %v, want ResponseLost resolved as not applied (ErrTransient)", err)
				}
				if !strings.Contains(err.Error(), "not applied") {
					t.Errorf("message %q does not say it was not applied", err)
				}
			case "unknown":
				var se *store.Error
				if !errors.As(err, &se) || se.Code != store.CodeResponseLost || se.Status != 0 || !se.Unknown || se.Source != store.SourceTransport {
					t.Fatalf("got %v, want ResponseLost, status 0, Unknown, from the transport", err)
				}
				for _, s := range []error{store.ErrThrottled, store.ErrTransient, store.ErrNotFound, store.ErrAlreadyExists, store.ErrInvalidInput} {
					if errors.Is(err, s) {
						t.Errorf("errors.Is(%v, %v) = true: the outcome of a lost write is unknown", err, s)
					}
				}
				if strings.Contains(err.Error(), "(0)") {
					t.Errorf("message %q prints a status 0", err)
				}
			}
		})
	}
}

// TestRefusedConnectionFailsFast: a connection that is refused is not
// retried through the whole backoff schedule (it took 13 s), and says that
// nothing was applied.
func TestRefusedConnectionFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	st, err := NewWithSharedKey("acct", devAccountKey, Endpoints{Table: "http://" + addr + "/acct"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = st.Table("tbl").Insert(context.Background(), entity("p", "r"))
	took := time.Since(start)
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.CodeConnectionFailed || se.Unknown || se.Source != store.SourceTransport {
		t.Fatalf("got %v, want ConnectionFailed, not unknown, from the transport", err)
	}
	if !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("got %v: a request that never connected was not applied and may be retried", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "nothing was applied") || !strings.Contains(msg, addr) || strings.Contains(msg, "(0)") {
		t.Fatalf("message %q: want it to say nothing was applied and name %s", msg, addr)
	}
	// Not a timing assertion of the code under test's speed: a bound far
	// above one attempt and far below the old backoff schedule (13 s).
	if took > 5*time.Second {
		t.Fatalf("a refused connection took %v: it is being retried", took)
	}
}

// TestContextEndsSayWhetherSent: a context canceled before the request
// left fails as Canceled with nothing applied; one that ends while the
// server holds the request fails as DeadlineExceeded with the outcome
// unknown for a write, and as a plain deadline for a read. Both match the
// context's own error.
func TestContextEndsSayWhetherSent(t *testing.T) {
	release := make(chan struct{})
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		<-release
		w.WriteHeader(204)
	})
	defer close(release)
	tbl := f.sharedKeyStore(t).Table("tbl")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tbl.Insert(ctx, entity("p", "r"))
	if !errors.Is(err, context.Canceled) || store.Code(err) != store.CodeCanceled || errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "nothing was applied") {
		t.Fatalf("canceled before sending: %v", err)
	}
	if f.count.Load() != 0 {
		t.Fatal("a request was sent on a canceled context")
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()
	_, err = tbl.Insert(dctx, entity("p", "r"))
	if !errors.Is(err, context.DeadlineExceeded) || store.Code(err) != store.CodeDeadlineExceeded || !errors.Is(err, store.ErrUnknownOutcome) || !strings.Contains(err.Error(), "may have been applied") {
		t.Fatalf("deadline after sending a write: %v", err)
	}
	if errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrThrottled) {
		t.Fatalf("deadline after sending: %v must not invite a retry", err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer rcancel()
	_, err = tbl.Get(rctx, "p", "r", nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("deadline on a read: %v", err)
	}
	//lint:ignore SA1012 the nil context is the point of the test
	if _, err := tbl.Insert(nil, entity("p", "r")); !errors.Is(err, store.ErrInvalidInput) || store.SourceOf(err) != store.SourceClient { //nolint:staticcheck
		t.Fatalf("nil context: %v", err)
	}
}

// TestPerTryTimeoutIsNotResent: with Options.Retry.TryTimeout, a write
// whose try times out while the server holds it is not sent again (the
// bulk writer used to see 101 batches for 100 inserts); it is read back.
func TestPerTryTimeoutIsNotResent(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		if n == 0 {
			time.Sleep(300 * time.Millisecond) // past the try timeout
			w.WriteHeader(204)
			return
		}
		odataError(w, 404, store.CodeResourceNotFound, "The specified resource does not exist.")
	})
	st, err := NewWithSharedKey("acct", devAccountKey, Endpoints{Table: f.srv.URL + "/acct"},
		&Options{Retry: policy.RetryOptions{TryTimeout: 100 * time.Millisecond, RetryDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Table("tbl").Insert(context.Background(), entity("p", "r"))
	mu.Lock()
	got := strings.Join(methods, " ")
	mu.Unlock()
	if got != "POST GET" {
		t.Fatalf("requests %q: want the insert once, then a read-back", got)
	}
	if store.Code(err) != store.CodeResponseLost || !errors.Is(err, store.ErrTransient) {
		t.Fatalf("got %v: want ResponseLost, resolved as not applied", err)
	}
}

// TestTruncatedBatchAnswerIsReadBack: a 202 batch answer cut short (the
// service processed the batch, then the connection broke) is not an
// InternalError to retry: the transaction's rows are read back, and here
// they show it applied.
func TestTruncatedBatchAnswerIsReadBack(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		methods = append(methods, r.Method)
		mu.Unlock()
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_1")
			w.Header().Set("Content-Length", "4096")
			w.WriteHeader(202)
			fmt.Fprint(w, "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_2\r\n\r\n--changes")
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
			hangUp(t, w)
			return
		}
		rk := "a"
		if strings.Contains(r.URL.Path, "RowKey='b'") {
			rk = "b"
		}
		w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"PartitionKey":"p","RowKey":%q,"A@odata.type":"Edm.Int64","A":"1"}`, rk)
	})
	res, err := f.sharedKeyStore(t).Table("tbl").Transact(context.Background(), []store.Action{
		{Kind: store.ActionInsert, Entity: entity("p", "a")},
		{Kind: store.ActionInsert, Entity: entity("p", "b")},
	})
	if err != nil || len(res) != 2 || res[0].ETag == "" {
		t.Fatalf("got %v, %v: want the transaction read back as applied", res, err)
	}
	mu.Lock()
	got := strings.Join(methods, " ")
	mu.Unlock()
	if got != "POST GET GET" {
		t.Fatalf("requests %q: want the batch once, then one read per row", got)
	}
}
