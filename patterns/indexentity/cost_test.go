package indexentity

import (
	"context"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// countStore counts the requests made through it, each a billable
// storage transaction: those made on the engine's goroutine after the
// call that caused them returned (eventual.Detached: a write's message)
// apart.
type countStore struct {
	store.Store
	mu          sync.Mutex
	n, detached int
}

func (c *countStore) add(detached bool) {
	c.mu.Lock()
	if detached {
		c.detached++
	} else {
		c.n++
	}
	c.mu.Unlock()
}

// take returns the requests counted so far, and those of them that came
// detached, and starts again.
func (c *countStore) take() (n, detached int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, detached = c.n, c.detached
	c.n, c.detached = 0, 0
	return n, detached
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (c *countStore) Table(name string) store.Table {
	return storetest.WrapTable(c.Store.Table(name), c.hook)
}

// Queue wraps the queue.
func (c *countStore) Queue(name string) store.Queue {
	return storetest.WrapQueue(c.Store.Queue(name), c.hook)
}

// Container wraps the container.
func (c *countStore) Container(name string) store.Container {
	return storetest.WrapContainer(c.Store.Container(name), c.hook)
}

// hook counts the requests that read or write data, in either lane: the
// table's entity requests, the queue's messages, the container's blobs.
func (c *countStore) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	switch call.EntityOp() {
	case "Table.Get", "Table.Insert", "Table.Update", "Table.Upsert", "Table.Delete", "Table.Query", "Table.Transact",
		"Queue.Put", "Queue.Get", "Queue.Update", "Queue.DeleteMessage",
		"Container.Put", "Container.Get", "Container.DeleteBlob":
		c.add(eventual.Detached(ctx))
	}
	return do(ctx)
}

// TestRequestsPerWrite counts the requests of one logical write on each
// placement, the figures docs/patterns/indexentity.md gives: the writer's
// (the entity's write with its lists, or with its intent, made before the
// call returns), the message the engine queues after the call returned,
// and, for the eventual placements, the worker's (one message received
// alone, its step, the outbox row and the message removed), and those of
// a lookup.
func TestRequestsPerWrite(t *testing.T) {
	type cost struct{ writer, message, worker int }
	want := map[Placement]map[string]cost{
		SamePartition: {"insert": {2, 0, 0}, "move": {4, 0, 0}, "unlisted change": {2, 0, 0}, "delete": {3, 0, 0}},
		// The writer's count leaves out the fence's read: the engine
		// remembers the fence its last commit to the partition left. The
		// worker's count includes its receive (a receive takes up to 32
		// messages); an unlisted change queues nothing, and the worker
		// only looks.
		SeparatePartition: {"insert": {2, 1, 8}, "move": {2, 1, 10}, "unlisted change": {2, 0, 1}, "delete": {2, 1, 7}},
		InBlobs:           {"insert": {2, 1, 8}, "move": {2, 1, 10}, "unlisted change": {2, 0, 1}, "delete": {2, 1, 7}},
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
				n, _ := cs.take()
				return n
			}
			check := func(what string, write func() error) {
				t.Helper()
				cs.take()
				must(t, write())
				// The message is queued after the write returned, on the
				// engine's goroutine: Flush waits for it.
				if f.eng != nil {
					must(t, f.eng.Flush(ctx))
				}
				writer, message := cs.take()
				got := cost{writer: writer, message: message, worker: worker()}
				if got != want[p][what] {
					t.Errorf("%s: %d requests by the writer, %d after it returned, %d by the worker; want %d, %d and %d",
						what, got.writer, got.message, got.worker, want[p][what].writer, want[p][what].message, want[p][what].worker)
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
			if n, _ := cs.take(); n != 2 {
				t.Errorf("a lookup of one entity made %d requests, want 2 (the list, the entity)", n)
			}
		})
	}
}
