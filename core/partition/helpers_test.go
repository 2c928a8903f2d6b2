package partition_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// fast are Options without pauses between retries, so tests of races and
// lost answers run at the backend's speed.
func fast() *partition.Options {
	return &partition.Options{Backoff: func(int) time.Duration { return 0 }}
}

// newTable makes a fresh table on b.
func newTable(t *testing.T, b backendtest.Backend) store.Table {
	t.Helper()
	return b.Store.Table(b.NewTable(t, "part"))
}

// open returns partition pk of tbl, failing the test on error.
func open(t *testing.T, tbl store.Table, pk string, opts *partition.Options) *partition.Partition {
	t.Helper()
	p, err := partition.New(tbl, pk, opts)
	if err != nil {
		t.Fatalf("partition.New(%q): %v", pk, err)
	}
	return p
}

// row builds an entity with RowKey rk and properties given as name, value
// pairs.
func row(rk string, kv ...any) store.Entity {
	e := store.Entity{RowKey: rk, Properties: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Properties[kv[i].(string)] = kv[i+1]
	}
	return e
}

// begin starts a transaction, failing the test on error.
func begin(t *testing.T, p *partition.Partition) *partition.Txn {
	t.Helper()
	tx, err := p.Begin(context.Background())
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	return tx
}

// must fails the test on a non-nil error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// raw returns every row of partition pk as stored, reserved rows included,
// in RowKey order: what a query that forgets DataCond would see.
func raw(t *testing.T, tbl store.Table, pk string) []store.Entity {
	t.Helper()
	var out []store.Entity
	q := store.Query{Filter: filter.PK.Eq(pk).String()}
	for {
		page, err := tbl.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("query partition %q: %v", pk, err)
		}
		out = append(out, page.Entities...)
		if page.Continuation == "" {
			return out
		}
		q.Continuation = page.Continuation
	}
}

// dataKeys returns the RowKeys of the data rows of pk as stored, sorted.
func dataKeys(t *testing.T, tbl store.Table, pk string) []string {
	t.Helper()
	var ks []string
	for _, e := range raw(t, tbl, pk) {
		if !partition.IsReserved(e.RowKey) {
			ks = append(ks, e.RowKey)
		}
	}
	sort.Strings(ks)
	return ks
}

// versions returns the Version of the fence and of the tail as stored (0
// for a missing row).
func versions(t *testing.T, tbl store.Table, pk string) (fence, tail int64) {
	t.Helper()
	for _, rk := range []string{partition.FenceKey, partition.TailKey} {
		e, err := tbl.Get(context.Background(), pk, rk, nil)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("get %q: %v", rk, err)
		}
		v, _ := e.Properties["TkHeadVersion"].(int64)
		if rk == partition.FenceKey {
			fence = v
		} else {
			tail = v
		}
	}
	return fence, tail
}

// lostAnswer is the error a transport reports for a write whose answer
// never came back.
func lostAnswer() *store.Error {
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Message: "injected: the answer was lost",
		Unknown: true, Source: store.SourceTransport}
}

// hookTable wraps a table: before and after each Transact or Query it
// calls the hooks it has, so a test can lose answers, delay requests and
// race readers with writers.
type hookTable struct {
	store.Table
	mu sync.Mutex
	// transact, when set, runs instead of a plain pass-through for each
	// Transact call n (from 0): it gets the inner table to apply actions.
	transact func(ctx context.Context, n int, inner store.Table, actions []store.Action) ([]store.ActionResult, error)
	// afterPage, when set, runs after each page a Query returns (n from 0).
	afterPage func(n int)
	// update and delete, when set, replace Update and Delete.
	delete     func(ctx context.Context, inner store.Table, pk, rk string, ifMatch store.ETag) error
	update     func(ctx context.Context, inner store.Table, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error)
	nTx, nPage int
}

func (h *hookTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	h.mu.Lock()
	f, n := h.transact, h.nTx
	h.nTx++
	h.mu.Unlock()
	if f == nil {
		return h.Table.Transact(ctx, actions)
	}
	return f(ctx, n, h.Table, actions)
}

func (h *hookTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	page, err := h.Table.Query(ctx, q)
	h.mu.Lock()
	f, n := h.afterPage, h.nPage
	h.nPage++
	h.mu.Unlock()
	if err == nil && f != nil {
		f(n)
	}
	return page, err
}

func (h *hookTable) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	if h.update != nil {
		return h.update(ctx, h.Table, e, mode, ifMatch)
	}
	return h.Table.Update(ctx, e, mode, ifMatch)
}

func (h *hookTable) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	if h.delete != nil {
		return h.delete(ctx, h.Table, pk, rk, ifMatch)
	}
	return h.Table.Delete(ctx, pk, rk, ifMatch)
}
