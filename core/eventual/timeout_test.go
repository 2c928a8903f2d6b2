package eventual_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// hangingStore makes the first reads of one table hang until their
// context ends, as a request the service never answers does.
type hangingStore struct {
	store.Store
	table string
	hangs atomic.Int64 // reads still to hang
	hung  atomic.Int64 // reads that hung
}

// Queue wraps the queue with storetest's kit: receives hang while the
// store has hangs left and its table is "" (a store that hangs receives,
// not reads).
func (h *hangingStore) Queue(name string) store.Queue {
	return storetest.WrapQueue(h.Store.Queue(name), func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.Op == "Queue.Get" && h.table == "" && h.hang() {
			<-ctx.Done()
			return ctx.Err()
		}
		return do(ctx)
	})
}

// Table wraps the table with storetest's kit, which keeps its typed lane:
// point reads (Get or GetInto) hang while the store has hangs left.
func (h *hangingStore) Table(name string) store.Table {
	t := h.Store.Table(name)
	if name != h.table {
		return t
	}
	return storetest.WrapTable(t, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if c.EntityOp() == "Table.Get" && h.hang() {
			<-ctx.Done()
			return ctx.Err()
		}
		return do(ctx)
	})
}

// hang takes one of the hangs left and counts it.
func (h *hangingStore) hang() bool {
	if h.hangs.Add(-1) >= 0 {
		h.hung.Add(1)
		return true
	}
	return false
}

// TestHungRequestsAreAbandoned: a step whose request is never answered is
// abandoned after Options.StepTimeout and tried again, so the operation
// completes instead of holding its message, kept hidden by the worker's
// heartbeat, for as long as the worker runs. Two hung tries are absorbed
// within one receive; four (every try of a receive) send the message
// back to the queue with the reason, and the next receive completes it.
func TestHungRequestsAreAbandoned(t *testing.T) {
	for _, hangs := range []int64{2, 4} {
		t.Run(map[int64]string{2: "two tries hang", 4: "every try of a receive hangs"}[hangs], func(t *testing.T) {
			eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
				ctx := t.Context()
				st := e.B.Store
				src, dst := e.B.NewTable(t, "hsrc"), e.B.NewTable(t, "hdst")
				hs := &hangingStore{Store: st, table: dst}
				o := opts(e, "hung")
				o.StepTimeout = 100 * time.Millisecond
				eng := eventualtest.NewEngine(t, hs, o)
				res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
					if err := tx.Upsert("row", store.Entity{RowKey: "r", Properties: map[string]any{"N": int64(1)}}, store.Replace); err != nil {
						return err
					}
					return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int64(1)}}))
				})
				if err != nil {
					t.Fatal(err)
				}
				hs.hangs.Store(hangs)
				// Without the bound this receive would never return; the
				// test's own deadline tells that apart from an error.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				n, err := eng.ProcessOnce(rctx)
				expired := rctx.Err() != nil
				cancel()
				if expired {
					t.Fatal("the receive ran until the test's deadline: the hung reads were not abandoned")
				}
				if err != nil || n != 1 {
					t.Fatalf("first receive: %d messages, %v", n, err)
				}
				_, gerr := st.Table(dst).Get(ctx, "p", "r", nil)
				switch {
				case hangs < 4 && gerr != nil:
					t.Fatalf("after %d hung tries the step should have completed in the same receive: %v", hangs, gerr)
				case hangs == 4 && !errors.Is(gerr, store.ErrNotFound):
					t.Fatalf("every try hung, yet the copy exists: %v", gerr)
				}
				eventualtest.Drain(t, e, &eng, o, st, src)
				got, err := st.Table(dst).Get(ctx, "p", "r", nil)
				if err != nil || got.Properties[eventual.VersionProperty] != res.Version {
					t.Fatalf("the copy: %v, %v; want version %d", got.Properties, err, res.Version)
				}
				if p, err := eng.Poisoned(ctx, 32); err != nil || len(p) != 0 {
					t.Fatalf("poison: %d messages, %v", len(p), err)
				}
				t.Logf("%s: %d reads hung and were abandoned after %s; the copy is at version %d, nothing poisoned",
					e.B.Name, hs.hung.Load(), o.StepTimeout, res.Version)
				if hs.hung.Load() != hangs {
					t.Fatalf("%d reads hung, want %d", hs.hung.Load(), hangs)
				}
			})
		})
	}
}

// TestHungReceiveIsAbandoned: a receive the service never answers is
// abandoned after Options.StepTimeout with an error that says so, and the
// next receive carries out the operation.
func TestHungReceiveIsAbandoned(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src, dst := e.B.NewTable(t, "rsrc"), e.B.NewTable(t, "rdst")
		hs := &hangingStore{Store: st}
		o := opts(e, "hungget")
		o.StepTimeout = 100 * time.Millisecond
		eng := eventualtest.NewEngine(t, hs, o)
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Upsert("row", store.Entity{RowKey: "r"}, store.Replace); err != nil {
				return err
			}
			return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "p", RowKey: "r"}))
		})
		if err != nil {
			t.Fatal(err)
		}
		hs.hangs.Store(1)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, rerr := eng.ProcessOnce(rctx)
		expired := rctx.Err() != nil
		cancel()
		if expired || n != 0 || !errors.Is(rerr, context.DeadlineExceeded) || !strings.Contains(rerr.Error(), "StepTimeout") {
			t.Fatalf("a hung receive: %d messages, %v (the test's deadline passed: %v)", n, rerr, expired)
		}
		eventualtest.Drain(t, e, &eng, o, st, src)
		got, err := st.Table(dst).Get(ctx, "p", "r", nil)
		if err != nil || got.Properties[eventual.VersionProperty] != res.Version {
			t.Fatalf("the copy: %v, %v", got.Properties, err)
		}
		t.Logf("%s: the hung receive was abandoned (%v); the next one carried the operation out", e.B.Name, rerr)
	})
}

// TestStepTimeoutOption: a negative StepTimeout is refused, naming it.
func TestStepTimeoutOption(t *testing.T) {
	e := eventualtest.MemEnv()
	o := opts(e, "opt")
	o.StepTimeout = -time.Second
	if _, err := o.New(e.B.Store); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "StepTimeout") {
		t.Fatalf("a negative StepTimeout: %v", err)
	}
}

// failingPeekQueue refuses every peek, counting them, and cancels the
// test's context after 1,000 (a loop that never pauses).
type failingPeekQueue struct {
	peeks  *atomic.Int64
	cancel context.CancelFunc
}

func (q failingPeekQueue) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	if c.Op != "Queue.Peek" {
		return do(ctx)
	}
	if q.peeks.Add(1) >= 1000 {
		q.cancel()
	}
	return store.Errorf(store.CodeServerBusy, 503, "peek refused")
}

type failingPeekStore struct {
	store.Store
	q failingPeekQueue
}

// Queue wraps the queue with storetest's kit.
func (s failingPeekStore) Queue(name string) store.Queue {
	return storetest.WrapQueue(s.Store.Queue(name), s.q.hook)
}

// TestDrainPacesFailingPeeks: Drain looks at an empty queue once more
// before it stops; when that look fails, it waits PollInterval before the
// next round, as after a failed receive, instead of spinning.
func TestDrainPacesFailingPeeks(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var peeks, sleeps atomic.Int64
	st := failingPeekStore{Store: e.B.Store, q: failingPeekQueue{peeks: &peeks, cancel: cancel}}
	o := opts(e, "peek")
	o.Sleep = func(ctx context.Context, d time.Duration) error {
		if sleeps.Add(1) >= 5 {
			cancel()
		}
		return ctx.Err()
	}
	eng := eventualtest.NewEngine(t, st, o)
	err := eng.Drain(ctx)
	t.Logf("Drain: %v after %d failed peeks and %d pauses", err, peeks.Load(), sleeps.Load())
	if !errors.Is(err, context.Canceled) || peeks.Load() > sleeps.Load()+1 {
		t.Fatalf("Drain: %v after %d failed peeks and %d pauses: want a pause after each failed peek", err, peeks.Load(), sleeps.Load())
	}
}
