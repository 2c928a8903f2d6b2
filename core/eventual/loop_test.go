package eventual_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// lateStore hands out the source table through lateTable; every other
// table, queue and container is the inner store's.
type lateStore struct {
	store.Store
	src string
	tbl *lateTable
}

func (s *lateStore) Table(name string) store.Table {
	if name == s.src {
		return s.tbl
	}
	return s.Store.Table(name)
}

// lateTable refuses its first transaction as throttled (503, nothing
// applied) while the request, delayed in the network, reaches the
// service just before the next transaction.
type lateTable struct {
	store.Table
	mu   sync.Mutex
	n    int
	held []store.Action
}

func (l *lateTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	l.mu.Lock()
	n := l.n
	l.n++
	l.mu.Unlock()
	switch n {
	case 0:
		l.held = actions
		return nil, store.Errorf(store.CodeServerBusy, 503, "injected: busy")
	case 1:
		if _, err := l.Table.Transact(ctx, l.held); err != nil {
			return nil, err
		}
	}
	return l.Table.Transact(ctx, actions)
}

// TestWriteRecoversASendReportedFailed: a source commit the store
// reported not applied that lands after all is found in the fence's
// writer history by the next attempt and returned as applied, not
// written again; the operation blob of the attempt that landed is kept
// (and that of the attempt that did not is removed), and the operation
// runs once.
func TestWriteRecoversASendReportedFailed(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		src, dst := e.B.NewTable(t, "lsrc"), e.B.NewTable(t, "ldst")
		st := &lateStore{Store: e.B.Store, src: src, tbl: &lateTable{Table: e.B.Store.Table(src)}}
		o := opts(e, "late")
		eng := eventualtest.NewEngine(t, st, o)
		big := make([]byte, 1<<20) // an operation too large for an outbox row: it goes to a blob
		calls := 0
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			calls++
			if err := tx.Upsert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Calls": int64(calls)}}, store.Replace); err != nil {
				return err
			}
			return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"Calls": int64(calls)}}),
				eventual.PutBlob("ops"+e.Names, "b", big))
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Recovered || res.Version != 1 || calls != 2 {
			t.Fatalf("Write: %+v after %d calls; want version 1 recovered after 2", res, calls)
		}
		row, err := e.B.Store.Table(src).Get(ctx, "p", "r", nil)
		if err != nil || row.Properties["Calls"] != int64(1) {
			t.Fatalf("the source row: %v, %v; want the first call's", row.Properties, err)
		}
		page, err := e.B.Store.Container(o.Container).List(ctx, store.BlobListOptions{Prefix: "op-"})
		if err != nil || len(page.Blobs) != 1 {
			t.Fatalf("operation blobs: %+v, %v; want the one of the attempt that landed", page.Blobs, err)
		}
		eventualtest.Drain(t, e, &eng, o, st, src)
		cp, err := e.B.Store.Table(dst).Get(ctx, "copy", "r", nil)
		if err != nil || cp.Properties["Calls"] != int64(1) {
			t.Fatalf("the copy: %v, %v; want the first call's", cp.Properties, err)
		}
		if b, _, err := e.B.Store.Container("ops"+e.Names).Get(ctx, "b"); err != nil || len(b) != len(big) {
			t.Fatalf("the blob the operation puts: %d bytes, %v", len(b), err)
		}
	})
}
