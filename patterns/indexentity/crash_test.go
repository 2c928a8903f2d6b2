package indexentity

import (
	"context"

	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/partition"
	"github.com/tablekit/tablekit/store"
)

// crash is what a crashStore panics with: the process dies at that
// request.
type crash struct{}

// crashStore wraps a store and "crashes" the process (panics with
// crash{}) at its budget-th request, counting every table, queue and
// container request; budget 0 never crashes. Odd-numbered crashes come
// after the request reached the store, even-numbered ones before, so
// crashes land on both sides of every kind of request.
type crashStore struct {
	store.Store
	calls, budget, hits atomic.Int64
}

func (c *crashStore) do(f func()) {
	n := c.calls.Add(1)
	if b := c.budget.Load(); b == 0 || n != b {
		f()
		return
	}
	c.hits.Add(1)
	if n%2 == 0 {
		panic(crash{})
	}
	f()
	panic(crash{})
}

func (c *crashStore) Table(name string) store.Table {
	return &crashTable{Table: c.Store.Table(name), c: c}
}
func (c *crashStore) Queue(name string) store.Queue {
	return &crashQueue{Queue: c.Store.Queue(name), c: c}
}
func (c *crashStore) Container(name string) store.Container {
	return &crashContainer{Container: c.Store.Container(name), c: c}
}

type crashTable struct {
	store.Table
	c *crashStore
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
	store.Queue
	c *crashStore
}

func (q *crashQueue) Put(ctx context.Context, b []byte, o *store.PutOptions) (m store.Message, err error) {
	q.c.do(func() { m, err = q.Queue.Put(ctx, b, o) })
	return
}
func (q *crashQueue) Get(ctx context.Context, n int, v time.Duration) (m []store.Message, err error) {
	q.c.do(func() { m, err = q.Queue.Get(ctx, n, v) })
	return
}

// Update crashes like the rest, except a heartbeat's (no body), which runs
// on a goroutine of its own: a crash there is the worker's next request's.
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
	store.Container
	c *crashStore
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

// survive runs f and reports whether it crashed (any other panic goes
// on).
func survive(f func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	f()
	return false
}

// crashCounts add up the schedules of a run.
type crashCounts struct {
	schedules, crashes, operations, lost, duplicated, stale, poisoned int
}

// runCrashSchedule is one seeded schedule on an eventual placement: a
// writer inserts, renames and deletes a few employees of two departments
// while the process crashes at one random request (the writer's, or the
// worker's that runs now and then), restarts with a fresh engine and
// Table, and goes on; then the worker and the sweeper run to quiet,
// restarting after any crash still to come. Every list must then match
// the entities exactly, and nothing may be poisoned.
func runCrashSchedule(t *testing.T, e env, p Placement, seed uint64, writes int) crashCounts {
	c := crashCounts{schedules: 1}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0xc4a5))
	cs := &crashStore{Store: e.b.Store}
	f := newFixture(t, e, p, Options{Attempts: 32}, cs)
	f.eo.Concurrency = 1 // one message at a time: a crash stops the whole worker
	if e.clock == nil {
		// Real time: hidden messages and unsent outbox rows come back
		// after a second.
		f.eo.Visibility, f.eo.SweepAfter = time.Second, time.Second
	}
	f.open(t, cs)
	restart := func() {
		c.crashes++
		f.open(t, cs)
	}
	names := []string{"Jones", "Smith", "Brown", ""}
	people := 4
	dept := func(i int) string { return []string{"Sales", "Marketing"}[i%2] }
	cs.budget.Store(int64(1 + r.IntN(12*writes)))
	for range writes {
		i := r.IntN(people)
		name := names[r.IntN(len(names))]
		remove := r.IntN(4) == 0
		c.operations++
		if survive(func() {
			v, err := f.x.Get(ctx, dept(i), idOf(i))
			switch {
			case err != nil:
				_ = f.x.Insert(ctx, &Employee{Dept: dept(i), ID: idOf(i), Last: name})
			case remove:
				_ = f.x.Delete(ctx, &v)
			default:
				v.Last = name
				_ = f.x.Update(ctx, &v)
			}
		}) {
			restart()
		}
		if r.IntN(3) == 0 && survive(func() { _, _ = f.eng.ProcessOnce(ctx) }) {
			restart()
		}
	}
	// Quiesce: worker and sweeper through the crashing store until the
	// queue and the outbox are empty.
	ob, err := partition.NewOutbox(e.b.Store.Table(f.table), nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; ; round++ {
		if round == 200 {
			t.Fatalf("seed %d: the engine did not quiesce", seed)
		}
		if survive(func() {
			for {
				n, _ := f.eng.ProcessOnce(ctx)
				if n == 0 {
					break
				}
			}
		}) {
			restart()
			continue
		}
		left := 0
		for _, err := range ob.Scan(ctx, partition.ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			left++
		}
		visible, err := e.b.Store.Queue(f.eo.Queue).Peek(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 && len(visible) == 0 {
			break
		}
		if e.clock != nil {
			e.pass(3*f.eo.Visibility + time.Minute)
		} else {
			time.Sleep(150 * time.Millisecond) // poll: the hidden message or the old row is back soon
		}
		if survive(func() { _, _ = f.eng.Sweep(ctx, f.table) }) {
			restart()
		}
	}
	cs.budget.Store(0)
	k := f.check(t)
	c.lost, c.duplicated, c.stale = k.lost, k.duplicated, k.stale
	if poisoned, err := f.eng.Poisoned(ctx, 32); err != nil || len(poisoned) != 0 {
		c.poisoned = len(poisoned)
		t.Errorf("seed %d: poison queue holds %+v (%v)", seed, poisoned, err)
	}
	return c
}

// TestCrashAtEveryStep: seeded schedules on the two eventual placements
// in which the writer or the worker stops at a random request, before or
// after it reaches the store (between the entity's commit and the
// queueing, between a list's read and its write, after the write and
// before the message's delete, mid-sweep), and a fresh process carries
// on. Every list ends exactly as the entities are.
func TestCrashAtEveryStep(t *testing.T) {
	for _, p := range []Placement{SeparatePartition, InBlobs} {
		t.Run(p.String(), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				schedules, writes := 200, 8
				if e.clock == nil {
					schedules, writes = 12, 5
				}
				if testing.Short() {
					schedules = min(schedules, 20)
				}
				if raceDetector && e.clock != nil {
					schedules = 100
				}
				var total crashCounts
				for seed := range schedules {
					c := runCrashSchedule(t, e, p, uint64(seed)+1, writes)
					total.schedules += c.schedules
					total.crashes += c.crashes
					total.operations += c.operations
					total.lost += c.lost
					total.duplicated += c.duplicated
					total.stale += c.stale
					total.poisoned += c.poisoned
					if t.Failed() {
						t.Fatalf("seed %d failed", seed+1)
					}
				}
				t.Logf("schedules %d, crashes injected %d, operations %d: lost %d, duplicated %d, stale %d (poisoned %d)",
					total.schedules, total.crashes, total.operations, total.lost, total.duplicated, total.stale, total.poisoned)
				if total.crashes == 0 {
					t.Fatal("no crash was injected")
				}
			})
		})
	}
}
