package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// Fault is a fault the suite injects into one request to a backend.
type Fault int

const (
	// FaultNone lets the request through.
	FaultNone Fault = iota
	// FaultBusy: the service refuses the request with 503 ServerBusy
	// before doing any work.
	FaultBusy
	// FaultInternalBefore: the service answers 500 InternalError without
	// applying the request.
	FaultInternalBefore
	// FaultLostBefore: the connection breaks before the request reaches
	// the service.
	FaultLostBefore
	// FaultInternalAfter: the service applies the request, then its
	// answer is replaced by a 500 InternalError.
	FaultInternalAfter
	// FaultLostAfter: the service applies the request, then the
	// connection breaks before the answer arrives.
	FaultLostAfter
	numFaults
)

var faultNames = [...]string{"None", "Busy", "InternalBefore", "LostBefore", "InternalAfter", "LostAfter"}

// String names the fault.
func (f Fault) String() string {
	if f >= 0 && f < numFaults {
		return faultNames[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Applied reports whether the service applies a write under f.
func (f Fault) Applied() bool {
	return f == FaultNone || f == FaultInternalAfter || f == FaultLostAfter
}

// Request describes one request to a fault schedule.
type Request struct {
	// Write is set for a request that changes data (anything but a read).
	Write bool
}

// Schedule decides the fault of each request. It is called concurrently.
type Schedule func(Request) Fault

// faultsTests runs the outcome tests: every write kind under every
// fault, and randomized fault schedules, for entities and for appends to
// append blobs.
func (s *suite) faultsTests(t *testing.T) {
	if s.h.Faults == nil {
		t.Skip("storetest: Harness.Faults is nil: this backend cannot inject faults")
	}
	s.faultMatrix(t)
	s.run(t, "RandomSchedules", s.randomSchedules)
	s.appendFaultsTests(t)
}

// writeKind is one kind of write the fault matrix exercises: it runs on a
// table holding the row "old" (ETag etag) and reports the ETag it got.
type writeKind struct {
	name string
	// do runs the write.
	do func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error)
	// row is the row the write changes.
	row string
	// idempotent writes are resent after a lost answer.
	idempotent bool
	// applied tells from the stored row (nil when absent) whether the
	// write took effect.
	applied func(row *store.Entity) bool
}

func faultWriteKinds() []writeKind {
	val := func(v string) map[string]any { return map[string]any{"V": v} }
	newRow := store.Entity{PartitionKey: "p", RowKey: "new", Properties: val("new")}
	changed := store.Entity{PartitionKey: "p", RowKey: "old", Properties: val("changed")}
	hasV := func(v string) func(*store.Entity) bool {
		return func(e *store.Entity) bool { return e != nil && e.Properties["V"] == v }
	}
	gone := func(e *store.Entity) bool { return e == nil }
	single := []struct {
		name   string
		action func(etag store.ETag) store.Action
		row    string
		idem   bool
		check  func(*store.Entity) bool
	}{
		{"Insert", func(store.ETag) store.Action { return store.Action{Kind: store.ActionInsert, Entity: newRow} }, "new", false, hasV("new")},
		{"UpdateMergeETag", func(e store.ETag) store.Action {
			return store.Action{Kind: store.ActionUpdateMerge, Entity: changed, IfMatch: e}
		}, "old", false, hasV("changed")},
		{"UpdateReplaceETag", func(e store.ETag) store.Action {
			return store.Action{Kind: store.ActionUpdateReplace, Entity: changed, IfMatch: e}
		}, "old", false, hasV("changed")},
		{"UpdateMergeAny", func(store.ETag) store.Action {
			return store.Action{Kind: store.ActionUpdateMerge, Entity: changed, IfMatch: store.ETagAny}
		}, "old", true, hasV("changed")},
		{"UpdateReplaceAny", func(store.ETag) store.Action {
			return store.Action{Kind: store.ActionUpdateReplace, Entity: changed, IfMatch: store.ETagAny}
		}, "old", true, hasV("changed")},
		{"UpsertMerge", func(store.ETag) store.Action { return store.Action{Kind: store.ActionUpsertMerge, Entity: changed} }, "old", true, hasV("changed")},
		{"UpsertReplace", func(store.ETag) store.Action { return store.Action{Kind: store.ActionUpsertReplace, Entity: changed} }, "old", true, hasV("changed")},
		{"DeleteETag", func(e store.ETag) store.Action {
			return store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "old"}, IfMatch: e}
		}, "old", false, gone},
		{"DeleteAny", func(store.ETag) store.Action {
			return store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "old"}, IfMatch: store.ETagAny}
		}, "old", false, gone},
	}
	var kinds []writeKind
	for _, w := range single {
		kinds = append(kinds, writeKind{name: w.name, row: w.row, idempotent: w.idem, applied: w.check,
			do: func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error) {
				return doSingle(ctx, tbl, w.action(etag))
			}})
		kinds = append(kinds, writeKind{name: "Transaction" + w.name, row: w.row, idempotent: w.idem, applied: w.check,
			do: func(ctx context.Context, tbl store.Table, etag store.ETag) (store.ETag, error) {
				res, err := tbl.Transact(ctx, []store.Action{w.action(etag)})
				if err != nil {
					return "", err
				}
				return res[0].ETag, nil
			}})
	}
	return kinds
}

// doSingle runs one action through the single-operation API.
func doSingle(ctx context.Context, tbl store.Table, a store.Action) (store.ETag, error) {
	e := a.Entity
	switch a.Kind {
	case store.ActionInsert:
		return tbl.Insert(ctx, e)
	case store.ActionUpdateMerge:
		return tbl.Update(ctx, e, store.Merge, a.IfMatch)
	case store.ActionUpdateReplace:
		return tbl.Update(ctx, e, store.Replace, a.IfMatch)
	case store.ActionUpsertMerge:
		return tbl.Upsert(ctx, e, store.Merge)
	case store.ActionUpsertReplace:
		return tbl.Upsert(ctx, e, store.Replace)
	case store.ActionDelete:
		return "", tbl.Delete(ctx, e.PartitionKey, e.RowKey, a.IfMatch)
	}
	return "", fmt.Errorf("storetest: unknown action kind %v", a.Kind)
}

// faultMatrix: every write kind, alone and as a transaction, under every
// fault, with the final stored data and the reported outcome checked:
//
//   - applied then answered 500 or lost: done, with the stored ETag (never
//     "failed" for a write that happened, never sent twice);
//   - refused with 500 or lost before it reached the service: not done
//     (store.ErrTransient, never ErrUnknownOutcome), nothing changed; an
//     idempotent write may have been resent and done;
//   - refused with 503: done after a resend, or not done matching
//     store.ErrThrottled.
func (s *suite) faultMatrix(t *testing.T) {
	for _, w := range faultWriteKinds() {
		for f := FaultBusy; f < numFaults; f++ {
			s.run(t, "Outcome/"+w.name+"/"+f.String(), func(t *testing.T) {
				var armed, used atomic.Bool
				st := s.h.Faults(t, func(r Request) Fault {
					if armed.Load() && r.Write && used.CompareAndSwap(false, true) {
						return f
					}
					return FaultNone
				})
				tbl := s.newTableOn(t, st)
				ctx := t.Context()
				etag := mustInsert(t, tbl, store.Entity{PartitionKey: "p", RowKey: "old", Properties: map[string]any{"V": "old"}})
				armed.Store(true)
				got, err := w.do(ctx, tbl, etag)
				armed.Store(false)
				if !used.Load() {
					t.Fatal("the fault was never injected: the write sent no request")
				}
				row := readRow(t, tbl, w.row)
				applied := w.applied(row)
				oldRow := readRow(t, tbl, "old")
				unchanged := oldRow != nil && oldRow.ETag == etag && readRow(t, tbl, "new") == nil
				switch {
				case f.Applied() || (w.idempotent && f != FaultBusy):
					if err != nil {
						t.Fatalf("got %v; the write was applied (or safely resent), so it must report done", err)
					}
				case f == FaultBusy:
					if err != nil && !errors.Is(err, store.ErrThrottled) {
						t.Fatalf("got %v; a 503 must be reported as throttled or retried", err)
					}
				default:
					if !errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrUnknownOutcome) {
						t.Fatalf("got %v; a write refused before it was applied must be reported not done (ErrTransient)", err)
					}
				}
				if err == nil {
					if !applied {
						t.Fatalf("reported done, but the stored row %v does not show the write", row)
					}
					if row != nil && got != row.ETag {
						t.Fatalf("reported ETag %s, stored %s: the write was applied twice or the ETag is not the write's", got, row.ETag)
					}
				} else if !unchanged {
					t.Fatalf("reported %v, but the data changed", err)
				}
			})
		}
	}
}

// newTableOn creates a table for one subtest on st.
func (s *suite) newTableOn(t *testing.T, st store.Store) store.Table {
	t.Helper()
	name := s.names.next()
	if err := st.CreateTable(t.Context(), name); err != nil {
		t.Fatalf("CreateTable(%q): %v", name, err)
	}
	s.dropTableLater(t, st, name)
	return st.Table(name)
}

// readRow reads a row of partition "p", nil when it is absent.
func readRow(t testing.TB, tbl store.Table, rk string) *store.Entity {
	t.Helper()
	e, err := tbl.Get(context.Background(), "p", rk, nil)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %q back: %v", rk, err)
	}
	return &e
}
