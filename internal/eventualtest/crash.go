package eventualtest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Crash is what a CrashStore panics with: the process dies at that call.
type Crash struct{}

// CrashStore wraps a store and makes the process "crash" (panic with
// Crash{}) at the At-th request, counted over every table, queue and
// container call; At 0 never crashes. With After false the request is not
// made; with After true it is made (and reaches the store) and the crash
// comes before its answer is seen. Arm sets both for the next crash.
type CrashStore struct {
	store.Store
	calls atomic.Int64
	at    atomic.Int64
	after atomic.Bool
	hits  atomic.Int64

	mu     sync.Mutex
	points map[string]int // "before Transact", "after DeleteMessage", ...
}

// Arm schedules a crash at the n-th request from now (n >= 1), before or
// after it reaches the store; Arm(0, _) disarms.
func (c *CrashStore) Arm(n int64, after bool) {
	c.after.Store(after)
	if n <= 0 {
		c.at.Store(0)
		return
	}
	c.at.Store(c.calls.Load() + n)
}

// ArmAt schedules a crash at the n-th request counted from the store's
// first, before the request when n is even and after it when n is odd,
// so that a seeded random n lands crashes on both sides of every kind of
// request; a request already made never crashes. It is Arm for a test
// that draws one number per crash.
func (c *CrashStore) ArmAt(n int64) {
	c.after.Store(n%2 == 1)
	if n <= c.calls.Load() {
		c.at.Store(0)
		return
	}
	c.at.Store(n)
}

// Armed reports whether a crash is still to come.
func (c *CrashStore) Armed() bool { return c.at.Load() != 0 }

// Crashes counts the crashes so far.
func (c *CrashStore) Crashes() int64 { return c.hits.Load() }

// Points returns how many crashes came at each point: "before" or
// "after" and the request ("Table.Transact", "Queue.Put",
// "Queue.DeleteMessage", ...).
func (c *CrashStore) Points() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.points))
	for k, v := range c.points {
		out[k] = v
	}
	return out
}

// Calls counts the requests so far.
func (c *CrashStore) Calls() int64 { return c.calls.Load() }

func (c *CrashStore) do(name string, f func()) {
	n := c.calls.Add(1)
	if at := c.at.Load(); at == 0 || n != at || !c.at.CompareAndSwap(at, 0) {
		f()
		return
	}
	c.hits.Add(1)
	point := "before " + name
	if c.after.Load() {
		f()
		point = "after " + name
	}
	c.mu.Lock()
	if c.points == nil {
		c.points = map[string]int{}
	}
	c.points[point]++
	c.mu.Unlock()
	panic(Crash{})
}

// Table wraps the table.
func (c *CrashStore) Table(name string) store.Table {
	return &crashTable{c: c, Table: c.Store.Table(name)}
}

// Queue wraps the queue.
func (c *CrashStore) Queue(name string) store.Queue {
	return &crashQueue{c: c, Queue: c.Store.Queue(name)}
}

// Container wraps the container.
func (c *CrashStore) Container(name string) store.Container {
	return &crashContainer{c: c, Container: c.Store.Container(name)}
}

type crashTable struct {
	c *CrashStore
	store.Table
}

func (t *crashTable) Get(ctx context.Context, pk, rk string, o *store.GetOptions) (e store.Entity, err error) {
	t.c.do("Table.Get", func() { e, err = t.Table.Get(ctx, pk, rk, o) })
	return
}
func (t *crashTable) Insert(ctx context.Context, e store.Entity) (tag store.ETag, err error) {
	t.c.do("Table.Insert", func() { tag, err = t.Table.Insert(ctx, e) })
	return
}
func (t *crashTable) Update(ctx context.Context, e store.Entity, m store.UpdateMode, im store.ETag) (tag store.ETag, err error) {
	t.c.do("Table.Update", func() { tag, err = t.Table.Update(ctx, e, m, im) })
	return
}
func (t *crashTable) Upsert(ctx context.Context, e store.Entity, m store.UpdateMode) (tag store.ETag, err error) {
	t.c.do("Table.Upsert", func() { tag, err = t.Table.Upsert(ctx, e, m) })
	return
}
func (t *crashTable) Delete(ctx context.Context, pk, rk string, im store.ETag) (err error) {
	t.c.do("Table.Delete", func() { err = t.Table.Delete(ctx, pk, rk, im) })
	return
}
func (t *crashTable) Query(ctx context.Context, q store.Query) (p store.Page, err error) {
	t.c.do("Table.Query", func() { p, err = t.Table.Query(ctx, q) })
	return
}
func (t *crashTable) Transact(ctx context.Context, a []store.Action) (r []store.ActionResult, err error) {
	t.c.do("Table.Transact", func() { r, err = t.Table.Transact(ctx, a) })
	return
}

type crashQueue struct {
	c *CrashStore
	store.Queue
}

func (q *crashQueue) Put(ctx context.Context, b []byte, o *store.PutOptions) (m store.Message, err error) {
	q.c.do("Queue.Put", func() { m, err = q.Queue.Put(ctx, b, o) })
	return
}
func (q *crashQueue) Get(ctx context.Context, n int, v time.Duration) (m []store.Message, err error) {
	q.c.do("Queue.Get", func() { m, err = q.Queue.Get(ctx, n, v) })
	return
}

// Update crashes like the rest, except a heartbeat's (no body), which
// runs on a goroutine of its own: a crash there equals one at the
// worker's next call.
func (q *crashQueue) Update(ctx context.Context, id, pop string, b []byte, v time.Duration) (m store.Message, err error) {
	if b == nil {
		return q.Queue.Update(ctx, id, pop, b, v)
	}
	q.c.do("Queue.Update", func() { m, err = q.Queue.Update(ctx, id, pop, b, v) })
	return
}
func (q *crashQueue) DeleteMessage(ctx context.Context, id, pop string) (err error) {
	q.c.do("Queue.DeleteMessage", func() { err = q.Queue.DeleteMessage(ctx, id, pop) })
	return
}

type crashContainer struct {
	c *CrashStore
	store.Container
}

func (k *crashContainer) Put(ctx context.Context, n string, d []byte, o *store.BlobPutOptions) (p store.BlobProps, err error) {
	k.c.do("Blob.Put", func() { p, err = k.Container.Put(ctx, n, d, o) })
	return
}
func (k *crashContainer) Get(ctx context.Context, n string) (d []byte, p store.BlobProps, err error) {
	k.c.do("Blob.Get", func() { d, p, err = k.Container.Get(ctx, n) })
	return
}
func (k *crashContainer) DeleteBlob(ctx context.Context, n string, im store.ETag) (err error) {
	k.c.do("Blob.DeleteBlob", func() { err = k.Container.DeleteBlob(ctx, n, im) })
	return
}

// Survive runs f, turning a crash into crashed = true; any other panic
// goes on.
func Survive(f func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(Crash); ok {
				crashed = true
				return
			}
			panic(r)
		}
	}()
	f()
	return false
}

// KeyPoints are the crash points a crash test must reach: after the
// source transaction (before its message is queued), before the
// queueing, after a guarded write of a step, before and after the
// message delete.
var KeyPoints = []string{"after Table.Transact", "before Queue.Put", "after Table.Update", "after Table.Delete",
	"before Queue.DeleteMessage", "after Queue.DeleteMessage"}

// AddPoints adds c's crash points to into.
func (c *CrashStore) AddPoints(into map[string]int) {
	for k, v := range c.Points() {
		into[k] += v
	}
}
