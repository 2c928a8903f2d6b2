package eventual_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// pausingStore holds the first insert into one table until released, so
// that another operation can run in between.
type pausingStore struct {
	store.Store
	table   string
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

// Table wraps the table with storetest's kit, which keeps its typed
// lane: the first insert (in either lane) waits for release.
func (p *pausingStore) Table(name string) store.Table {
	t := p.Store.Table(name)
	if name != p.table {
		return t
	}
	return storetest.WrapTable(t, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.EntityOp() == "Table.Insert" {
			p.once.Do(func() {
				close(p.reached)
				<-p.release
			})
		}
		return do(ctx)
	})
}

// TestUpsertAfterLaterDeleteLeavesNoOrphan: an upsert step finds no copy
// and a source it may copy; before its insert lands, the source is
// deleted and the delete's step runs, finding nothing to delete. The
// upsert's check after its insert sees the source gone and removes its
// copy: no copy outlives its source.
func TestUpsertAfterLaterDeleteLeavesNoOrphan(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		src := e.B.NewTable(t, "osrc")
		dst := e.B.NewTable(t, "odst")
		ps := &pausingStore{Store: e.B.Store, table: dst, reached: make(chan struct{}), release: make(chan struct{})}
		eng := eventualtest.NewEngine(t, ps, opts(e, "orphan"))
		ref := &eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			return tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		up := eventual.Operation{Source: ref, Version: res.Version,
			Steps: []eventual.Step{eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"Name": "a"}})}}
		if err := eng.Submit(ctx, up); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := eng.ProcessOnce(ctx); done <- err }()
		<-ps.reached // the upsert checked the source and is about to insert

		res, err = eng.Write(ctx, src, "p", func(tx *eventual.Tx) error { return tx.Delete("row", "r", store.ETagAny) })
		if err != nil {
			t.Fatal(err)
		}
		del := eventual.Operation{Source: ref, Version: res.Version, SourceDeleted: true,
			Steps: []eventual.Step{eventual.Delete(dst, "copy", "r")}}
		if err := eng.Submit(ctx, del); err != nil {
			t.Fatal(err)
		}
		if n, err := eng.ProcessOnce(ctx); err != nil || n != 1 {
			t.Fatalf("the delete: %d messages, %v", n, err)
		}
		close(ps.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := e.B.Store.Table(dst).Get(ctx, "copy", "r", nil); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the copy outlived its source: %v", err)
		}
	})
}
