package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// faultyStore returns a memstore whose fault schedule is f (nil faults
// nothing), and a table of it.
func faultyStore(t *testing.T, f *atomic.Pointer[memstore.FaultFunc]) (*memstore.Store, store.Table) {
	t.Helper()
	st := memstore.New(memstore.WithFaults(func(op memstore.Operation, table string) error {
		if fn := f.Load(); fn != nil {
			return (*fn)(op, table)
		}
		return nil
	}))
	if err := st.CreateTable(t.Context(), "bulk"); err != nil {
		t.Fatal(err)
	}
	return st, st.Table("bulk")
}

// every faults every n-th Transact with err (AfterApply'd when applied).
func every(n int, err error) *memstore.FaultFunc {
	var k atomic.Int64
	f := memstore.FaultFunc(func(op memstore.Operation, _ string) error {
		if op == memstore.OpTransact && k.Add(1)%int64(n) == 0 {
			return err
		}
		return nil
	})
	return &f
}

func rows(pk string, n int, props map[string]any) []store.Action {
	acts := make([]store.Action, n)
	for i := range acts {
		acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%04d", i), Properties: props}}
	}
	return acts
}

// TestBulkAppliedThen500IsWritten: 1,000 inserts whose every transaction
// is applied and then answered 500 are reported written, in 10
// transactions: the writer resolves instead of resending (which would have
// reported 1,000 failures with EntityAlreadyExists after 1,010 sends).
func TestBulkAppliedThen500IsWritten(t *testing.T) {
	var faults atomic.Pointer[memstore.FaultFunc]
	_, tbl := faultyStore(t, &faults)
	faults.Store(every(1, memstore.AfterApply(memstore.InternalError())))
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(t.Context(), rows("p", 1000, map[string]any{"A": int32(1)}))
	if err != nil || res.Written != 1000 || res.Failed != 0 || res.Unknown != 0 || res.Batches != 10 {
		t.Fatalf("written %d failed %d unknown %d batches %d: %v; want 1,000 written in 10", res.Written, res.Failed, res.Unknown, res.Batches, err)
	}
	for i, o := range res.Outcomes {
		if o.Attempts != 1 || o.ETag == "" {
			t.Fatalf("write %d: %+v; want one send and the stored ETag", i, o)
		}
	}
	faults.Store(nil)
	got, err := tbl.Get(t.Context(), "p", "r0999", nil)
	if err != nil || got.ETag != res.Outcomes[999].ETag {
		t.Fatalf("stored %v, %v; outcome ETag %s", got.ETag, err, res.Outcomes[999].ETag)
	}
}

// TestBulkNotAppliedThen500IsResent: a transaction refused with a 500
// before it took effect is read back, found not applied, and sent again.
func TestBulkNotAppliedThen500IsResent(t *testing.T) {
	var faults atomic.Pointer[memstore.FaultFunc]
	_, tbl := faultyStore(t, &faults)
	var n atomic.Int64
	f := memstore.FaultFunc(func(op memstore.Operation, _ string) error {
		if op == memstore.OpTransact && n.Add(1) == 1 {
			return memstore.OperationTimedOut()
		}
		return nil
	})
	faults.Store(&f)
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{Sleep: noSleep}).Write(t.Context(), rows("p", 50, nil))
	if err != nil || res.Written != 50 || res.Outcomes[0].Attempts != 2 {
		t.Fatalf("written %d, attempts %d: %v; want all written on the second send", res.Written, res.Outcomes[0].Attempts, err)
	}
}

func noSleep(context.Context, time.Duration) error { return nil }

// TestBulkAppliedDeletesAreNotResent: 100 unconditional deletes applied
// and answered 500, and another writer re-inserting one of the rows
// before the writer looks: the writer must not send the deletes again
// (that would delete the other writer's row). It reports what the
// read-back can tell: here the rows disagree, so the outcome is unknown,
// and the re-inserted row survives.
func TestBulkAppliedDeletesAreNotResent(t *testing.T) {
	var faults atomic.Pointer[memstore.FaultFunc]
	st, tbl := faultyStore(t, &faults)
	ctx := t.Context()
	if _, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(ctx, rows("p", 100, nil)); err != nil {
		t.Fatal(err)
	}
	var deletes []store.Action
	for i := range 100 {
		deletes = append(deletes, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i)}, IfMatch: store.ETagAny})
	}
	var sends atomic.Int64
	// The read-back reads rows in parallel: a sync.Once holds every read
	// until the other writer's row is back, whichever read comes first.
	var reinsert sync.Once
	f := memstore.FaultFunc(func(op memstore.Operation, _ string) error {
		switch op {
		case memstore.OpTransact:
			sends.Add(1)
			return memstore.AfterApply(memstore.InternalError())
		case memstore.OpGet:
			// Another writer puts row 7 back before the read-back.
			reinsert.Do(func() {
				if _, err := st.Table("bulk").Insert(context.Background(), store.Entity{PartitionKey: "p", RowKey: "r0007", Properties: map[string]any{"Owner": "other"}}); err != nil {
					t.Errorf("re-insert: %v", err)
				}
			})
		}
		return nil
	})
	faults.Store(&f)
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{Sleep: noSleep}).Write(ctx, deletes)
	faults.Store(nil)
	if sends.Load() != 1 {
		t.Fatalf("the delete transaction was sent %d times; once is all that is safe", sends.Load())
	}
	if got, gerr := tbl.Get(ctx, "p", "r0007", nil); gerr != nil || got.Properties["Owner"] != "other" {
		t.Fatalf("the other writer's row is gone: %v", gerr)
	}
	if res.Written+res.Failed+res.Unknown != 100 || res.Unknown != 100 || !errors.Is(err, store.ErrUnknownOutcome) {
		t.Fatalf("written %d failed %d unknown %d: %v; want 100 unknown", res.Written, res.Failed, res.Unknown, err)
	}
	for _, o := range res.Outcomes {
		if !o.Unknown || !errors.Is(o.Err, store.ErrUnknownOutcome) {
			t.Fatalf("outcome %+v: want unknown", o)
		}
	}
}

// TestBulkConditionalWritesAppliedThenLost: ETag updates and ETag deletes
// applied and then lost are reported written (not 412 or 404 from a
// resend of the writer's own success).
func TestBulkConditionalWritesAppliedThenLost(t *testing.T) {
	for _, kind := range []store.ActionKind{store.ActionUpdateReplace, store.ActionUpdateMerge, store.ActionDelete} {
		t.Run(kind.String(), func(t *testing.T) {
			var faults atomic.Pointer[memstore.FaultFunc]
			_, tbl := faultyStore(t, &faults)
			ctx := t.Context()
			ins, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(ctx, rows("p", 150, map[string]any{"V": int32(1)}))
			if err != nil {
				t.Fatal(err)
			}
			acts := make([]store.Action, 150)
			for i := range acts {
				acts[i] = store.Action{Kind: kind, IfMatch: ins.Outcomes[i].ETag, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%04d", i), Properties: map[string]any{"V": int32(2)}}}
			}
			faults.Store(every(1, memstore.AfterApply(memstore.ResponseLost())))
			res, err := store.NewBulkWriter(tbl, store.BulkOptions{}).Write(ctx, acts)
			faults.Store(nil)
			if err != nil || res.Written != 150 {
				t.Fatalf("written %d failed %d unknown %d: %v", res.Written, res.Failed, res.Unknown, err)
			}
			for i, o := range res.Outcomes {
				got, gerr := tbl.Get(ctx, "p", fmt.Sprintf("r%04d", i), nil)
				if kind == store.ActionDelete {
					if !errors.Is(gerr, store.ErrNotFound) {
						t.Fatalf("row %d not deleted: %v", i, gerr)
					}
					continue
				}
				if gerr != nil || got.Properties["V"] != int32(2) || got.ETag != o.ETag || o.Attempts != 1 {
					t.Fatalf("row %d: %v %v; outcome %+v", i, got, gerr, o)
				}
			}
		})
	}
}

// TestBulkIdempotentBatchIsResent: an upsert-only transaction whose
// outcome stays unknown is safe to send again, and is; a transaction with
// an insert in it is not, and is reported unknown.
func TestBulkIdempotentBatchIsResent(t *testing.T) {
	lost := &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Message: "no answer"}
	for _, tc := range []struct {
		name  string
		kind  store.ActionKind
		sends int
	}{
		{"upserts", store.ActionUpsertReplace, 2},
		{"inserts", store.ActionInsert, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acts := rows("p", 10, map[string]any{"V": int32(3)})
			for i := range acts {
				acts[i].Kind = tc.kind
			}
			f := &fakeTable{fail: func(n int, _ []store.Action) error {
				if n == 0 {
					return lost
				}
				return nil
			}}
			res, err := store.NewBulkWriter(f, store.BulkOptions{Sleep: noSleep}).Write(t.Context(), acts)
			if len(f.calls) != tc.sends {
				t.Fatalf("sent %d times, want %d", len(f.calls), tc.sends)
			}
			if tc.sends == 2 && (err != nil || res.Written != 10) {
				t.Fatalf("written %d: %v", res.Written, err)
			}
			if tc.sends == 1 && (res.Unknown != 10 || !errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient)) {
				t.Fatalf("unknown %d: %v", res.Unknown, err)
			}
		})
	}
}

// lostAfterCancel is the hook of a table whose transactions are applied,
// and then the caller's context is canceled before the answer arrives:
// the backend reports an unknown outcome, as azstore does.
func lostAfterCancel(cancel context.CancelFunc) storetest.Hook {
	return func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.Op != "Table.Transact" {
			return do(ctx)
		}
		if err := do(ctx); err != nil {
			return err
		}
		cancel()
		return store.ContextError(context.Canceled, true, true, "transaction")
	}
}

// TestBulkCancelAfterSendResolves: a transaction applied before the
// context was canceled is read back and reported written, not "never
// sent"; the writes never sent fail with context.Canceled.
func TestBulkCancelAfterSendResolves(t *testing.T) {
	st := memstore.New()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := st.CreateTable(ctx, "bulk"); err != nil {
		t.Fatal(err)
	}
	tbl := storetest.WrapTable(st.Table("bulk"), lostAfterCancel(cancel))
	res, err := store.NewBulkWriter(tbl, store.BulkOptions{Concurrency: 1}).Write(ctx, rows("p", 250, nil))
	if res.Written != 100 || res.Failed != 150 || res.Unknown != 0 {
		t.Fatalf("written %d failed %d unknown %d; want the first transaction written and the rest unsent", res.Written, res.Failed, res.Unknown)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(res.Outcomes[249].Err, context.Canceled) || res.Outcomes[249].Attempts != 0 {
		t.Fatalf("%v / %+v: want the unsent writes to fail with context.Canceled", err, res.Outcomes[249])
	}
}

// TestBulkProgressPanicIsReturned: a panic in Progress is recovered (no
// crash from a worker goroutine), stops the work and comes back as an
// error.
func TestBulkProgressPanicIsReturned(t *testing.T) {
	st := memstore.New()
	if err := st.CreateTable(t.Context(), "bulk"); err != nil {
		t.Fatal(err)
	}
	calls := 0
	w := store.NewBulkWriter(st.Table("bulk"), store.BulkOptions{Concurrency: 1, Progress: func(store.BulkProgress) {
		calls++
		panic("boom")
	}})
	res, err := w.Write(t.Context(), rows("p", 300, nil))
	if !errors.Is(err, store.ErrProgressPanicked) || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error %v, want it to wrap ErrProgressPanicked and name the panic", err)
	}
	if calls != 1 || res.Written != 100 || res.Failed != 200 || !errors.Is(res.Outcomes[299].Err, store.ErrProgressPanicked) {
		t.Fatalf("%d calls, written %d failed %d, last %v; want one call, the first transaction written, the rest unsent", calls, res.Written, res.Failed, res.Outcomes[299].Err)
	}
}

// TestBulkRefusesNilContext.
func TestBulkRefusesNilContext(t *testing.T) {
	st := memstore.New()
	//lint:ignore SA1012 the nil context is the point of the test
	_, err := store.NewBulkWriter(st.Table("bulk"), store.BulkOptions{}).Write(nil, rows("p", 1, nil)) //nolint:staticcheck
	if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "context is nil") {
		t.Fatalf("got %v", err)
	}
}

// TestBulkProgressInterval: with an interval, Progress is called at most
// once per interval (on the injected clock), and the final counts always
// arrive.
func TestBulkProgressInterval(t *testing.T) {
	st := memstore.New()
	if err := st.CreateTable(t.Context(), "bulk"); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	var reports []store.BulkProgress
	w := store.NewBulkWriter(st.Table("bulk"), store.BulkOptions{
		Concurrency:      1,
		ProgressInterval: time.Second,
		Now: func() time.Time {
			now = now.Add(300 * time.Millisecond) // each transaction takes 300 ms
			return now
		},
		Progress: func(p store.BulkProgress) { reports = append(reports, p) },
	})
	res, err := w.Write(t.Context(), rows("p", 2000, nil))
	if err != nil || res.Batches != 20 {
		t.Fatal(res.Batches, err)
	}
	if len(reports) < 4 || len(reports) > 8 || reports[len(reports)-1].Written != 2000 {
		t.Fatalf("%d reports for 20 transactions at one a second of 300 ms each, last %+v", len(reports), reports[len(reports)-1])
	}
	if _, err := store.NewBulkWriter(st.Table("bulk"), store.BulkOptions{ProgressInterval: -time.Second}).Write(t.Context(), rows("q", 1, nil)); !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("negative interval: %v", err)
	}
}
