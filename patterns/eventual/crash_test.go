package eventual_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/store"
)

// crash is what a crashStore panics with: the process dies at that call.
type crash struct{}

// crashStore wraps a store and makes the process "crash" (panic with
// crash{}) at the budget-th request, counted over every table, queue and
// container call; a budget of 0 never crashes. The request itself is not
// made when the crash comes before it, and is made when it comes after
// (half the crashes each, by parity), so crashes land before and after
// every kind of write.
type crashStore struct {
	store.Store
	calls  atomic.Int64
	budget atomic.Int64
	hits   atomic.Int64
}

// tick counts a call; before reports whether to crash before the call,
// and the returned func crashes after it when due.
func (c *crashStore) tick() (before bool, after func()) {
	n := c.calls.Add(1)
	b := c.budget.Load()
	if b == 0 || n != b {
		return false, func() {}
	}
	c.hits.Add(1)
	if n%2 == 0 {
		return true, nil
	}
	return false, func() { panic(crash{}) }
}

func (c *crashStore) do(f func()) {
	before, after := c.tick()
	if before {
		panic(crash{})
	}
	f()
	after()
}

func (c *crashStore) Table(name string) store.Table {
	return &crashTable{c: c, Table: c.Store.Table(name)}
}
func (c *crashStore) Queue(name string) store.Queue {
	return &crashQueue{c: c, Queue: c.Store.Queue(name)}
}
func (c *crashStore) Container(name string) store.Container {
	return &crashContainer{c: c, Container: c.Store.Container(name)}
}

type crashTable struct {
	c *crashStore
	store.Table
}

func (t *crashTable) Get(ctx context.Context, pk, rk string, o *store.GetOptions) (e store.Entity, err error) {
	t.c.do(func() { e, err = t.Table.Get(ctx, pk, rk, o) })
	return
}
func (t *crashTable) Insert(ctx context.Context, e store.Entity) (tag store.ETag, err error) {
	t.c.do(func() { tag, err = t.Table.Insert(ctx, e) })
	return
}
func (t *crashTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (tag store.ETag, err error) {
	t.c.do(func() { tag, err = t.Table.Update(ctx, e, m, im) })
	return
}
func (t *crashTable) Upsert(ctx context.Context, e store.Entity, m store.UpdateMode) (tag store.ETag, err error) {
	t.c.do(func() { tag, err = t.Table.Upsert(ctx, e, m) })
	return
}
func (t *crashTable) Delete(ctx context.Context, pk, rk string, im store.ETag) (err error) {
	t.c.do(func() { err = t.Table.Delete(ctx, pk, rk, im) })
	return
}
func (t *crashTable) Query(ctx context.Context, q store.Query) (p store.Page, err error) {
	t.c.do(func() { p, err = t.Table.Query(ctx, q) })
	return
}
func (t *crashTable) Transact(ctx context.Context, a []store.Action) (r []store.ActionResult, err error) {
	t.c.do(func() { r, err = t.Table.Transact(ctx, a) })
	return
}

type crashQueue struct {
	c *crashStore
	store.Queue
}

func (q *crashQueue) Put(ctx context.Context, b []byte, o *store.PutOptions) (m store.Message, err error) {
	q.c.do(func() { m, err = q.Queue.Put(ctx, b, o) })
	return
}
func (q *crashQueue) Get(ctx context.Context, n int, v time.Duration) (m []store.Message, err error) {
	q.c.do(func() { m, err = q.Queue.Get(ctx, n, v) })
	return
}

// Update crashes like the rest, except a heartbeat's (no body), which
// runs on a goroutine of its own: a crash there is the same as a crash at
// the worker's next call.
func (q *crashQueue) Update(ctx context.Context, id, pop string, b []byte, v time.Duration) (m store.Message, err error) {
	if b == nil {
		return q.Queue.Update(ctx, id, pop, b, v)
	}
	q.c.do(func() { m, err = q.Queue.Update(ctx, id, pop, b, v) })
	return
}
func (q *crashQueue) DeleteMessage(ctx context.Context, id, pop string) (err error) {
	q.c.do(func() { err = q.Queue.DeleteMessage(ctx, id, pop) })
	return
}

type crashContainer struct {
	c *crashStore
	store.Container
}

func (k *crashContainer) Put(ctx context.Context, n string, d []byte, o *store.BlobPutOptions) (p store.BlobProps, err error) {
	k.c.do(func() { p, err = k.Container.Put(ctx, n, d, o) })
	return
}
func (k *crashContainer) Get(ctx context.Context, n string) (d []byte, p store.BlobProps, err error) {
	k.c.do(func() { d, p, err = k.Container.Get(ctx, n) })
	return
}
func (k *crashContainer) DeleteBlob(ctx context.Context, n string, im store.ETag) (err error) {
	k.c.do(func() { err = k.Container.DeleteBlob(ctx, n, im) })
	return
}

// survive runs f, turning a crash into crashed = true (any other panic
// goes on).
func survive(f func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); ok {
				crashed = true
				return
			}
			panic(r)
		}
	}()
	f()
	return false
}
