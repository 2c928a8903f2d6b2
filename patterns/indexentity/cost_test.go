package indexentity

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// countStore counts the requests made through it, each a billable
// storage transaction.
type countStore struct {
	store.Store
	mu sync.Mutex
	n  int
}

func (c *countStore) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *countStore) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

func (c *countStore) Table(name string) store.Table {
	return &countTable{Table: c.Store.Table(name), c: c}
}
func (c *countStore) Queue(name string) store.Queue {
	return &countQueue{Queue: c.Store.Queue(name), c: c}
}
func (c *countStore) Container(name string) store.Container {
	return &countContainer{Container: c.Store.Container(name), c: c}
}

type countTable struct {
	store.Table
	c *countStore
}

func (t *countTable) Get(ctx context.Context, pk, rk string, o *store.GetOptions) (store.Entity, error) {
	t.c.add()
	return t.Table.Get(ctx, pk, rk, o)
}
func (t *countTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	t.c.add()
	return t.Table.Insert(ctx, e)
}
func (t *countTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (store.ETag, error) {
	t.c.add()
	return t.Table.Update(ctx, e, m, im)
}
func (t *countTable) Upsert(ctx context.Context, e store.Entity, m store.UpdateMode) (store.ETag, error) {
	t.c.add()
	return t.Table.Upsert(ctx, e, m)
}
func (t *countTable) Delete(ctx context.Context, pk, rk string, im store.ETag) error {
	t.c.add()
	return t.Table.Delete(ctx, pk, rk, im)
}
func (t *countTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	t.c.add()
	return t.Table.Query(ctx, q)
}
func (t *countTable) Transact(ctx context.Context, a []store.Action) ([]store.ActionResult, error) {
	t.c.add()
	return t.Table.Transact(ctx, a)
}

type countQueue struct {
	store.Queue
	c *countStore
}

func (q *countQueue) Put(ctx context.Context, b []byte, o *store.PutOptions) (store.Message, error) {
	q.c.add()
	return q.Queue.Put(ctx, b, o)
}
func (q *countQueue) Get(ctx context.Context, n int, v time.Duration) ([]store.Message, error) {
	q.c.add()
	return q.Queue.Get(ctx, n, v)
}
func (q *countQueue) Update(ctx context.Context, id, pop string, b []byte, v time.Duration) (store.Message, error) {
	q.c.add()
	return q.Queue.Update(ctx, id, pop, b, v)
}
func (q *countQueue) DeleteMessage(ctx context.Context, id, pop string) error {
	q.c.add()
	return q.Queue.DeleteMessage(ctx, id, pop)
}

type countContainer struct {
	store.Container
	c *countStore
}

func (k *countContainer) Put(ctx context.Context, n string, d []byte, o *store.BlobPutOptions) (store.BlobProps, error) {
	k.c.add()
	return k.Container.Put(ctx, n, d, o)
}
func (k *countContainer) Get(ctx context.Context, n string) ([]byte, store.BlobProps, error) {
	k.c.add()
	return k.Container.Get(ctx, n)
}
func (k *countContainer) DeleteBlob(ctx context.Context, n string, im store.ETag) error {
	k.c.add()
	return k.Container.DeleteBlob(ctx, n, im)
}

// TestRequestsPerWrite counts the requests of one logical write on each
// placement, the figures docs/patterns/indexentity.md gives: the writer's
// (the entity's write with its lists, or with its intent) and, for the
// eventual placements, the worker's (one message received alone, its
// step, the outbox row and the message removed), and those of a lookup.
func TestRequestsPerWrite(t *testing.T) {
	type cost struct{ writer, worker int }
	want := map[Placement]map[string]cost{
		SamePartition: {"insert": {2, 0}, "move": {4, 0}, "unlisted change": {2, 0}, "delete": {3, 0}},
		// The worker's count includes its receive (a receive takes up to
		// 32 messages); an unlisted change queues nothing, and the worker
		// only looks.
		SeparatePartition: {"insert": {4, 8}, "move": {4, 10}, "unlisted change": {3, 1}, "delete": {4, 7}},
		InBlobs:           {"insert": {4, 8}, "move": {4, 10}, "unlisted change": {3, 1}, "delete": {4, 7}},
	}
	for _, p := range placements {
		t.Run(p.String(), func(t *testing.T) {
			ctx := t.Context()
			e := eventualtest.MemEnv()
			cs := &countStore{Store: e.B.Store}
			f := newFixture(t, e, p, Options{}, cs)
			worker := func() int {
				cs.take()
				if f.eng == nil {
					return 0
				}
				if _, err := f.eng.ProcessOnce(ctx); err != nil {
					t.Fatal(err)
				}
				return cs.take()
			}
			check := func(what string, write func() error) {
				t.Helper()
				cs.take()
				must(t, write())
				got := cost{writer: cs.take(), worker: worker()}
				if got != want[p][what] {
					t.Errorf("%s: %d requests by the writer, %d by the worker; want %d and %d", what, got.writer, got.worker, want[p][what].writer, want[p][what].worker)
				}
			}
			// A first employee, so that the list exists already.
			must(t, f.x.Insert(ctx, &Employee{Dept: "Sales", ID: idOf(0), Last: "Jones"}))
			f.drain(t)
			v := Employee{Dept: "Sales", ID: idOf(1), Last: "Jones"}
			check("insert", func() error { return f.x.Insert(ctx, &v) })
			v.Last = "Smith"
			check("move", func() error { return f.x.Update(ctx, &v) })
			v.First = "Bo"
			check("unlisted change", func() error { return f.x.Update(ctx, &v) })
			check("delete", func() error { return f.x.Delete(ctx, &v) })
			cs.take()
			if got := idsOf(collect(t, f.x.FindAll(ctx, f.scope("Sales"), "lastname", "Jones"))); len(got) != 1 {
				t.Fatalf("lookup: %v", got)
			}
			if n := cs.take(); n != 2 {
				t.Errorf("a lookup of one entity made %d requests, want 2 (the list, the entity)", n)
			}
		})
	}
}
