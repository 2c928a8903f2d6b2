package azstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// TestLostResponseIsNotReplayed proves what docs/azure.md promises for a
// write whose response is lost (the server read the request, then the
// connection dropped): an Insert is not replayed, since the service may
// have applied it, and comes back as an error with no service code that
// wraps the transport error and does not claim to be transient; an Upsert,
// which is idempotent, is retried and succeeds.
func TestLostResponseIsNotReplayed(t *testing.T) {
	cases := []struct {
		name     string
		op       func(tbl store.Table) error
		requests int32
		ok       bool
	}{
		{"Insert", func(tbl store.Table) error { _, err := tbl.Insert(context.Background(), entity("p", "r")); return err }, 1, false},
		{"Delete", func(tbl store.Table) error { return tbl.Delete(context.Background(), "p", "r", store.ETagAny) }, 1, false},
		{"Upsert", func(tbl store.Table) error {
			_, err := tbl.Upsert(context.Background(), entity("p", "r"), store.Replace)
			return err
		}, 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 0 {
					// The request was read; drop the connection before answering.
					conn, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Errorf("hijack: %v", err)
						return
					}
					_ = conn.Close()
					return
				}
				w.Header().Set("ETag", `W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
				w.WriteHeader(204)
			})
			err := tc.op(f.sharedKeyStore(t).Table("tbl"))
			if got := f.count.Load(); got != tc.requests {
				t.Errorf("%d requests reached the server, want %d", got, tc.requests)
			}
			if tc.ok {
				if err != nil {
					t.Errorf("got %v, want the retry to succeed", err)
				}
				return
			}
			var se *store.Error
			if !errors.As(err, &se) {
				t.Fatalf("got %T %v, want a *store.Error", err, err)
			}
			if se.Code != "" || se.Status != 0 || se.Err == nil {
				t.Errorf("got code %q status %d wrapping %v; want no code, status 0 and the transport error", se.Code, se.Status, se.Err)
			}
			for _, s := range []error{store.ErrThrottled, store.ErrNotFound, store.ErrAlreadyExists, store.ErrInvalidInput} {
				if errors.Is(err, s) {
					t.Errorf("errors.Is(%v, %v) = true: the outcome of a lost write is unknown", err, s)
				}
			}
			if msg := fmt.Sprint(err); msg == "" {
				t.Error("empty error message")
			}
		})
	}
}
