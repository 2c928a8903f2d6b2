package eventual_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// gatedStore holds each queue Put until the test lets it through (gate),
// or refuses it (refuse), and records for every request whether it came
// detached (eventual.Detached) and whether a receive came while a Put was
// held.
type gatedStore struct {
	store.Store
	gate   chan struct{} // a held Put waits until it is closed
	refuse bool          // Puts fail instead of waiting

	mu       sync.Mutex
	held     int                     // Puts waiting at the gate
	detached map[string]map[bool]int // request -> Detached -> count
	early    int                     // receives while a Put was held
	puts     []error                 // each Put's context's error as it went on
	deadline bool                    // every Put had a deadline
	expired  int                     // Puts whose context ended at the gate
}

func (g *gatedStore) note(ctx context.Context, op string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.detached == nil {
		g.detached = map[string]map[bool]int{}
	}
	if g.detached[op] == nil {
		g.detached[op] = map[bool]int{}
	}
	g.detached[op][eventual.Detached(ctx)]++
	if op == "Queue.Get" && g.held > 0 {
		g.early++
	}
}

func (g *gatedStore) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	op := c.EntityOp()
	g.note(ctx, op)
	if op == "Queue.Put" && !g.refuseOrHold(ctx) {
		return errors.New("gatedStore: the queue refuses the message")
	}
	return do(ctx)
}

// refuseOrHold holds a Put at the gate until it opens; false when Puts
// are refused, or the Put's context ended at the gate.
func (g *gatedStore) refuseOrHold(ctx context.Context) bool {
	g.mu.Lock()
	if g.refuse {
		g.mu.Unlock()
		return false
	}
	g.held++
	gate := g.gate
	g.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		// The put's bound ended it first: it was not made.
		g.mu.Lock()
		g.held--
		g.expired++
		g.mu.Unlock()
		return false
	}
	_, dl := ctx.Deadline()
	g.mu.Lock()
	g.held--
	g.puts = append(g.puts, ctx.Err())
	g.deadline = len(g.puts) == 1 && dl || g.deadline && dl
	g.mu.Unlock()
	return true
}

func (g *gatedStore) Table(name string) store.Table {
	return storetest.WrapTable(g.Store.Table(name), g.hook)
}

func (g *gatedStore) Queue(name string) store.Queue {
	return storetest.WrapQueue(g.Store.Queue(name), g.hook)
}

func (g *gatedStore) counts(op string) map[bool]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[bool]int{}
	for k, v := range g.detached[op] {
		out[k] = v
	}
	return out
}

// TestWriteReturnsBeforeItsMessage: Write returns once its transaction
// committed, with its message still held at the queue; the message is
// queued on the engine's goroutine, in a context marked Detached that the
// caller's cancellation does not reach. Flush waits for it (and gives up
// with its ctx), ProcessOnce waits for it before receiving (a receive
// never comes while it is held), and the operation then completes.
func TestWriteReturnsBeforeItsMessage(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		src, dst := e.B.NewTable(t, "nsrc"), e.B.NewTable(t, "ndst")
		g := &gatedStore{Store: e.B.Store, gate: make(chan struct{})}
		o := opts(e, "nudge")
		eng := eventualtest.NewEngine(t, g, o)
		wctx, cancel := context.WithCancel(ctx)
		res, err := eng.Write(wctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"N": int64(1)}}); err != nil {
				return err
			}
			return tx.Then(wctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"N": int64(1)}}))
		})
		// Write returned while its message is held at the gate: it did not
		// wait for the message. The caller is done with its context.
		cancel()
		if err != nil || len(res.Outbox) != 1 {
			t.Fatalf("write: %+v, %v", res, err)
		}
		if m, err := e.B.Store.Queue(o.Queue).Peek(ctx, 1); err != nil || len(m) != 0 {
			t.Fatalf("the queue holds %d messages (%v) before the held message went through", len(m), err)
		}
		if c := g.counts("Table.Transact"); c[true] != 0 || c[false] != 1 {
			t.Fatalf("the commit: %v requests by detachment, want one not detached", c)
		}
		// Flush and ProcessOnce wait for the held message: with a context
		// that has ended they give up with its error, and no receive is made.
		done, stop := context.WithCancel(ctx)
		stop()
		if err := eng.Flush(done); !errors.Is(err, context.Canceled) {
			t.Fatalf("Flush with a held message and an ended context: %v", err)
		}
		if n, err := eng.ProcessOnce(done); n != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("ProcessOnce with a held message and an ended context: %d, %v", n, err)
		}
		if c := g.counts("Queue.Get"); c[false]+c[true] != 0 {
			t.Fatalf("ProcessOnce received (%v) while the write's message was held", c)
		}
		close(g.gate)
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if c := g.counts("Queue.Put"); c[true] != 1 || c[false] != 0 {
			t.Fatalf("the message: %v requests by detachment, want one detached", c)
		}
		g.mu.Lock()
		perr, deadline := g.puts[0], g.deadline
		g.mu.Unlock()
		if perr != nil {
			t.Fatalf("the message's context ended with the caller's: %v", perr)
		}
		if !deadline {
			t.Fatal("the message's request has no deadline")
		}
		if m, err := e.B.Store.Queue(o.Queue).Peek(ctx, 1); err != nil || len(m) != 1 {
			t.Fatalf("after Flush the queue holds %d messages (%v), want the write's", len(m), err)
		}
		if n, err := eng.ProcessOnce(ctx); n != 1 || err != nil {
			t.Fatalf("ProcessOnce after the message went through: %d, %v", n, err)
		}
		got, err := e.B.Store.Table(dst).Get(ctx, "copy", "r", nil)
		if err != nil || got.Properties[eventual.VersionProperty] != res.Version {
			t.Fatalf("the copy: %v, %v; want version %d", got.Properties, err, res.Version)
		}
		g.mu.Lock()
		early := g.early
		g.mu.Unlock()
		if early != 0 {
			t.Fatalf("%d receives came while the write's message was held", early)
		}
	})
}

// TestUnsentMessageIsSwept: a queue that refuses the write's message
// fails neither Write nor Flush (the outbox row is the operation's
// record); the queue stays empty, and Sweep queues the row once it is
// SweepAfter old, after which the operation completes.
func TestUnsentMessageIsSwept(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		src, dst := e.B.NewTable(t, "usrc"), e.B.NewTable(t, "udst")
		g := &gatedStore{Store: e.B.Store, refuse: true}
		o := opts(e, "unsent")
		eng := eventualtest.NewEngine(t, g, o)
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
				return err
			}
			return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r"}))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Flush(ctx); err != nil {
			t.Fatalf("Flush after a refused message: %v", err)
		}
		if c := g.counts("Queue.Put"); c[true] != 1 {
			t.Fatalf("the message was tried %v times by detachment, want once detached", c)
		}
		if n, err := eng.ProcessOnce(ctx); n != 0 || err != nil {
			t.Fatalf("ProcessOnce with the message refused: %d, %v", n, err)
		}
		g.mu.Lock()
		g.refuse = false
		g.gate = make(chan struct{})
		close(g.gate) // Puts go through from now on
		g.mu.Unlock()
		eventualtest.Drain(t, e, &eng, o, g, src)
		got, err := e.B.Store.Table(dst).Get(ctx, "copy", "r", nil)
		if err != nil || got.Properties[eventual.VersionProperty] != res.Version {
			t.Fatalf("the copy: %v, %v; want version %d", got.Properties, err, res.Version)
		}
		if c := g.counts("Queue.Put"); c[false] == 0 {
			t.Fatalf("the sweep queued nothing: %v", c)
		}
	})
}

// TestWorkerJobFlushesWhenItStops: the worker job of Engine.Jobs, when
// its context ends, waits for the messages of the writes that returned
// before it returns, so that a program that stops its runner and exits
// does not leave them to a sweep. Here the message is held at the queue
// until its StepTimeout ends it: the job returns only after that.
func TestWorkerJobFlushesWhenItStops(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := t.Context()
	src, dst := e.B.NewTable(t, "jsrc"), e.B.NewTable(t, "jdst")
	g := &gatedStore{Store: e.B.Store, gate: make(chan struct{})}
	o := opts(e, "jobflush")
	o.StepTimeout = 200 * time.Millisecond
	eng := eventualtest.NewEngine(t, g, o)
	jobs, err := eng.Jobs([]string{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
		if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
			return err
		}
		return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r"}))
	}); err != nil {
		t.Fatal(err)
	}
	stopped, stop := context.WithCancel(ctx)
	stop()
	if err := jobs[0].Run(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("the worker job: %v", err)
	}
	g.mu.Lock()
	held, expired := g.held, g.expired
	g.mu.Unlock()
	if held != 0 || expired != 1 {
		t.Fatalf("when the worker job returned, %d puts of the message were held at the queue and %d had ended there; want 0 and 1 (the job waits for the message)", held, expired)
	}
}
