package memstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// faultOnce injects f into the first operation op and nothing else; the
// read-backs of a resolution get getFault.
func faultOnce(op memstore.Operation, f, getFault error) memstore.FaultFunc {
	var used atomic.Bool
	return func(o memstore.Operation, _ string) error {
		if o == op && used.CompareAndSwap(false, true) {
			return f
		}
		if o == memstore.OpGet {
			return getFault
		}
		return nil
	}
}

// TestLostAnswersResolve: every write kind, with its answer lost after it
// took effect or failed with a 500 before, reports what happened: done
// (with the stored ETag) or not done (ErrTransient, never
// ErrUnknownOutcome); a 503 is a refusal; a failed read-back leaves the
// outcome unknown. Idempotent writes (an upsert, an update with If-Match
// *) are sent again instead and succeed. The stored data is what the
// outcome says.
func TestLostAnswersResolve(t *testing.T) {
	type write struct {
		name string
		op   memstore.Operation
		do   func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error)
		// applied reports whether the stored row shows the write.
		applied func(e store.Entity, found bool) bool
	}
	props := func(v string) map[string]any { return map[string]any{"V": v} }
	writes := []write{
		{"Insert", memstore.OpInsert, func(ctx context.Context, tbl store.Table, _ store.ETag) (store.ETag, error) {
			return tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "new", Properties: props("new")})
		}, nil},
		{"UpdateMergeETag", memstore.OpUpdate, func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error) {
			return tbl.Update(ctx, store.Entity{PartitionKey: "p", RowKey: "old", Properties: props("changed")}, store.Merge, etag)
		}, nil},
		{"UpdateReplaceAny", memstore.OpUpdate, func(ctx context.Context, tbl store.Table, _ store.ETag) (store.ETag, error) {
			return tbl.Update(ctx, store.Entity{PartitionKey: "p", RowKey: "old", Properties: props("changed")}, store.Replace, store.ETagAny)
		}, nil},
		{"UpsertReplace", memstore.OpUpsert, func(ctx context.Context, tbl store.Table, _ store.ETag) (store.ETag, error) {
			return tbl.Upsert(ctx, store.Entity{PartitionKey: "p", RowKey: "old", Properties: props("changed")}, store.Replace)
		}, nil},
		{"DeleteETag", memstore.OpDelete, func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error) {
			return "", tbl.Delete(ctx, "p", "old", etag)
		}, nil},
		{"DeleteAny", memstore.OpDelete, func(ctx context.Context, tbl store.Table, _ store.ETag) (store.ETag, error) {
			return "", tbl.Delete(ctx, "p", "old", store.ETagAny)
		}, nil},
		{"Transact", memstore.OpTransact, func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error) {
			res, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "new", Properties: props("new")}},
				{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "old"}, IfMatch: etag},
			})
			if err != nil {
				return "", err
			}
			return res[0].ETag, nil
		}, nil},
	}
	faults := []struct {
		name     string
		fault    error
		getFault error
		// want: "done", "not done" (transient), "throttled", "unknown"
		want string
	}{
		{"applied then 500", memstore.AfterApply(memstore.InternalError()), nil, "done"},
		{"applied then timeout", memstore.AfterApply(memstore.OperationTimedOut()), nil, "done"},
		{"applied then lost", memstore.AfterApply(memstore.ResponseLost()), nil, "done"},
		{"500 before", memstore.InternalError(), nil, "not done"},
		{"lost before", memstore.ResponseLost(), nil, "not done"},
		{"503 before", memstore.ServerBusy(), nil, "throttled"},
		{"applied then lost, read-back fails", memstore.AfterApply(memstore.ResponseLost()), memstore.InternalError(), "unknown"},
		{"lost before, read-back fails", memstore.ResponseLost(), memstore.ResponseLost(), "unknown"},
	}
	for _, w := range writes {
		for _, f := range faults {
			want := f.want
			if (w.name == "UpdateReplaceAny" || w.name == "UpsertReplace") && want != "throttled" {
				// Idempotent: a lost answer is followed by a resend.
				want = "done"
			}
			t.Run(w.name+"/"+f.name, func(t *testing.T) {
				var faultsOn atomic.Bool
				inner := faultOnce(w.op, f.fault, f.getFault)
				st := memstore.New(memstore.WithFaults(func(op memstore.Operation, table string) error {
					if !faultsOn.Load() {
						return nil
					}
					return inner(op, table)
				}))
				ctx := t.Context()
				if err := st.CreateTable(ctx, "faults"); err != nil {
					t.Fatal(err)
				}
				tbl := st.Table("faults")
				etag, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "old", Properties: props("old")})
				if err != nil {
					t.Fatal(err)
				}
				faultsOn.Store(true)
				got, err := w.do(ctx, tbl, etag)
				faultsOn.Store(false)

				old, oldErr := tbl.Get(ctx, "p", "old", nil)
				_, newErr := tbl.Get(ctx, "p", "new", nil)
				changed := oldErr != nil || old.ETag != etag || newErr == nil
				switch want {
				case "done":
					if err != nil {
						t.Fatalf("got %v, want success: the write was applied", err)
					}
					if !changed {
						t.Fatal("reported done, but the rows are unchanged")
					}
					if w.name != "DeleteETag" && w.name != "DeleteAny" {
						if got == "" {
							t.Fatal("done without an ETag")
						}
						rk := "old"
						if w.name == "Insert" || w.name == "Transact" {
							rk = "new"
						}
						if stored, _ := tbl.Get(ctx, "p", rk, nil); got != stored.ETag {
							t.Fatalf("ETag %s, stored %s", got, stored.ETag)
						}
					}
				case "not done", "throttled":
					if err == nil || errors.Is(err, store.ErrUnknownOutcome) {
						t.Fatalf("got %v, want a definite failure", err)
					}
					if !errors.Is(err, store.ErrTransient) {
						t.Fatalf("got %v, want it to match ErrTransient: nothing was applied", err)
					}
					if (want == "throttled") != errors.Is(err, store.ErrThrottled) {
						t.Fatalf("got %v: ErrThrottled is for a 503 only", err)
					}
					if changed {
						t.Fatal("reported not done, but the rows changed")
					}
				case "unknown":
					if !errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrThrottled) {
						t.Fatalf("got %v, want an unknown outcome", err)
					}
				}
			})
		}
	}
}

// TestContextErrors: a nil context is refused by tablekit's own checks; a
// done one fails as canceled or past its deadline, before anything is
// applied.
func TestContextErrors(t *testing.T) {
	st := memstore.New()
	if err := st.CreateTable(t.Context(), "faults"); err != nil {
		t.Fatal(err)
	}
	tbl := st.Table("faults")
	e := store.Entity{PartitionKey: "p", RowKey: "r"}
	//lint:ignore SA1012 the nil context is the point of the test
	_, err := tbl.Insert(nil, e) //nolint:staticcheck
	if !errors.Is(err, store.ErrInvalidInput) || store.SourceOf(err) != store.SourceClient {
		t.Fatalf("nil context: %v (source %v), want a client-side InvalidInput", err, store.SourceOf(err))
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = tbl.Insert(ctx, e)
	if !errors.Is(err, context.Canceled) || store.Code(err) != store.CodeCanceled || errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) {
		t.Fatalf("canceled: %v, want Canceled matching context.Canceled, not unknown", err)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), 0)
	defer dcancel()
	if _, err = tbl.Get(dctx, "p", "r", nil); !errors.Is(err, context.DeadlineExceeded) || store.Code(err) != store.CodeDeadlineExceeded {
		t.Fatalf("deadline: %v", err)
	}
	if _, err := tbl.Get(t.Context(), "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the canceled insert was applied: %v", err)
	}
}
