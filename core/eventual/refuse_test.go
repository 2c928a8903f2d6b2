package eventual_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// TestThenNeedsARowOfTheTransaction: Then names the operation's source by
// its RowKey; a RowKey the transaction neither writes nor deletes is
// refused by Write before anything is sent, with an error naming it. The
// rows the transaction would have written are not written, no outbox row
// or message is left, and Drain has nothing to do.
func TestThenNeedsARowOfTheTransaction(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src, dst := e.B.NewTable(t, "tsrc"), e.B.NewTable(t, "tdst")
		o := opts(e, "then")
		eng := eventualtest.NewEngine(t, st, o)
		copyStep := eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"Name": "a"}})
		big := eventual.PutBlob("ops"+e.Names, "b", make([]byte, 70*1024)) // an operation that needs a blob
		for name, fn := range map[string]func(tx *eventual.Tx) error{
			"a row written, Then another": func(tx *eventual.Tx) error {
				if err := tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}}); err != nil {
					return err
				}
				return tx.Then(ctx, "ghost-row", copyStep)
			},
			"Then alone": func(tx *eventual.Tx) error { return tx.Then(ctx, "ghost-row", copyStep) },
			"Then before the write, of another row": func(tx *eventual.Tx) error {
				if err := tx.Then(ctx, "ghost-row", copyStep, big); err != nil {
					return err
				}
				return tx.Upsert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}}, store.Replace)
			},
			"the error of Then dropped": func(tx *eventual.Tx) error {
				_ = tx.Then(ctx, "ghost-row", copyStep)
				return tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}})
			},
		} {
			_, err := eng.Write(ctx, src, "p", fn)
			if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"ghost-row"`) {
				t.Errorf("%s: Write: %v; want InvalidInput naming the RowKey", name, err)
			}
			if _, err := st.Table(src).Get(ctx, "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: the source row was written: %v", name, err)
			}
		}
		ob, err := partition.NewOutbox(st.Table(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		for row, err := range ob.Scan(ctx, partition.ScanOptions{}) {
			t.Errorf("an outbox row was left: %+v, %v", row, err)
		}
		if m, err := st.Queue(o.Queue).Peek(ctx, 1); err != nil || len(m) != 0 {
			t.Errorf("a message was queued: %v, %v", m, err)
		}
		if page, err := st.Container(o.Container).List(ctx, store.BlobListOptions{Prefix: "op-"}); err != nil || len(page.Blobs) != 0 {
			t.Errorf("an operation blob was left: %+v, %v", page.Blobs, err)
		}
		// Then of a row the transaction writes, or deletes, still works.
		if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Then(ctx, "r", copyStep); err != nil { // Then may come first
				return err
			}
			return tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}})
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Delete("row", "r", store.ETagAny); err != nil {
				return err
			}
			return tx.Then(ctx, "r", eventual.Delete(dst, "copy", "r"))
		}); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, src)
	})
}

// TestDrainAndWorkFailWithoutTheQueue: with the queue missing (Setup
// never ran), Drain, Work and ProcessOnce fail at once with an error that
// names the queue and matches store.ErrNotFound (code QueueNotFound),
// instead of waiting for a queue that will never appear.
func TestDrainAndWorkFailWithoutTheQueue(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		o := opts(e, "nosetup")
		eng, err := o.New(e.B.Store) // no Setup
		if err != nil {
			t.Fatal(err)
		}
		for name, run := range map[string]func(ctx context.Context) error{
			"Drain": eng.Drain,
			"Work":  eng.Work,
			"ProcessOnce": func(ctx context.Context) error {
				_, err := eng.ProcessOnce(ctx)
				return err
			},
		} {
			// The deadline only keeps a regression from hanging the test.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			err := run(ctx)
			cancel()
			if !errors.Is(err, store.ErrNotFound) || store.Code(err) != store.CodeQueueNotFound || !strings.Contains(err.Error(), o.Queue) {
				t.Errorf("%s without the queue: %v; want QueueNotFound naming %s", name, err, o.Queue)
			}
		}
	})
}

// busyQueue refuses the first receives and peeks with 503 ServerBusy.
type busyQueue struct {
	store.Queue
	left *atomic.Int64
}

func (q busyQueue) Get(ctx context.Context, n int, v time.Duration) ([]store.Message, error) {
	if q.left.Add(-1) >= 0 {
		return nil, memstore.ServerBusy()
	}
	return q.Queue.Get(ctx, n, v)
}

func (q busyQueue) Peek(ctx context.Context, n int) ([]store.Message, error) {
	if q.left.Add(-1) >= 0 {
		return nil, memstore.ServerBusy()
	}
	return q.Queue.Peek(ctx, n)
}

type busyStore struct {
	store.Store
	left *atomic.Int64
}

func (s busyStore) Queue(name string) store.Queue {
	return busyQueue{Queue: s.Store.Queue(name), left: s.left}
}

// TestDrainWaitsOutTransientReceives: a receive or peek refused as
// transient (503 ServerBusy) is no reason to stop: Drain pauses and tries
// again, and drains the queue.
func TestDrainWaitsOutTransientReceives(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := t.Context()
	src, dst := e.B.NewTable(t, "bsrc"), e.B.NewTable(t, "bdst")
	left := &atomic.Int64{}
	st := busyStore{Store: e.B.Store, left: left}
	o := opts(e, "busy")
	var pauses atomic.Int64
	o.Sleep = func(context.Context, time.Duration) error { pauses.Add(1); return nil }
	eng := eventualtest.NewEngine(t, st, o)
	if _, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
		if err := tx.Insert("row", store.Entity{RowKey: "r", Properties: map[string]any{"Name": "a"}}); err != nil {
			return err
		}
		return tx.Then(ctx, "r", eventual.Upsert(dst, store.Entity{PartitionKey: "copy", RowKey: "r", Properties: map[string]any{"Name": "a"}}))
	}); err != nil {
		t.Fatal(err)
	}
	left.Store(3)
	if err := eng.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if _, err := e.B.Store.Table(dst).Get(ctx, "copy", "r", nil); err != nil || pauses.Load() < 3 {
		t.Fatalf("after 3 busy receives: the copy %v, %d pauses", err, pauses.Load())
	}
}

// TestNilInputsAreRefused: nil where the API wants a store, a function, a
// context, an engine or a transaction is refused with an error matching
// store.ErrInvalidInput, never a panic.
func TestNilInputsAreRefused(t *testing.T) {
	e := eventualtest.MemEnv()
	st := e.B.Store
	src := e.B.NewTable(t, "nsrc")
	o := opts(e, "nil")
	eng := eventualtest.NewEngine(t, st, o)
	var nilCtx context.Context
	var nilEng *eventual.Engine
	var zeroTx eventual.Tx
	op := eventual.Operation{Steps: []eventual.Step{eventual.Delete("Copies", "p", "r")}}
	cases := map[string]func() error{
		"New(nil store)": func() error { _, err := eventual.New(nil, o.Queue, &o.Options); return err },
		"New(typed nil store)": func() error {
			_, err := eventual.New((*memstore.Store)(nil), o.Queue, &o.Options)
			return err
		},
		"Write(nil fn)": func() error { _, err := eng.Write(t.Context(), src, "p", nil); return err },
		"Write(nil ctx)": func() error {
			_, err := eng.Write(nilCtx, src, "p", func(*eventual.Tx) error { return nil })
			return err
		},
		"Submit(nil ctx)":      func() error { return eng.Submit(nilCtx, op) },
		"Drain(nil ctx)":       func() error { return eng.Drain(nilCtx) },
		"Work(nil ctx)":        func() error { return eng.Work(nilCtx) },
		"ProcessOnce(nil ctx)": func() error { _, err := eng.ProcessOnce(nilCtx); return err },
		"Sweep(nil ctx)":       func() error { _, err := eng.Sweep(nilCtx, src); return err },
		"Setup(nil ctx)":       func() error { return eng.Setup(nilCtx) },
		"Poisoned(nil ctx)":    func() error { _, err := eng.Poisoned(nilCtx, 1); return err },
		"Redrive(nil ctx)":     func() error { _, err := eng.Redrive(nilCtx, 1); return err },
		"nil engine Setup":     func() error { return nilEng.Setup(t.Context()) },
		"nil engine Write": func() error {
			_, err := nilEng.Write(t.Context(), src, "p", func(*eventual.Tx) error { return nil })
			return err
		},
		"nil engine Submit":      func() error { return nilEng.Submit(t.Context(), op) },
		"nil engine Drain":       func() error { return nilEng.Drain(t.Context()) },
		"nil engine Work":        func() error { return nilEng.Work(t.Context()) },
		"nil engine ProcessOnce": func() error { _, err := nilEng.ProcessOnce(t.Context()); return err },
		"nil engine Sweep":       func() error { _, err := nilEng.Sweep(t.Context(), src); return err },
		"nil engine Poisoned":    func() error { _, err := nilEng.Poisoned(t.Context(), 1); return err },
		"nil engine Redrive":     func() error { _, err := nilEng.Redrive(t.Context(), 1); return err },
		"nil engine Handle": func() error {
			return nilEng.Handle("mine", eventual.StepHandler{Run: func(context.Context, eventual.Operation, eventual.Step) error { return nil }})
		},
		"Tx not from Write: Insert": func() error { return zeroTx.Insert("row", store.Entity{RowKey: "r"}) },
		"Tx not from Write: Update": func() error {
			return zeroTx.Update("row", store.Entity{RowKey: "r"}, store.Replace, store.ETagAny)
		},
		"Tx not from Write: Upsert": func() error { return zeroTx.Upsert("row", store.Entity{RowKey: "r"}, store.Replace) },
		"Tx not from Write: Delete": func() error { return zeroTx.Delete("row", "r", store.ETagAny) },
		"Tx not from Write: Then":   func() error { return zeroTx.Then(t.Context(), "r", op.Steps...) },
		"nil Tx: Then": func() error {
			var tx *eventual.Tx
			return tx.Then(t.Context(), "r", op.Steps...)
		},
		"Then(nil ctx)": func() error {
			_, err := eng.Write(t.Context(), src, "p", func(tx *eventual.Tx) error {
				if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
					return err
				}
				return tx.Then(nilCtx, "r", op.Steps...)
			})
			return err
		},
		"Ref.Read(nil store)": func() error {
			_, _, err := eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}.Read(t.Context(), nil)
			return err
		},
		"MovedPast(nil store)": func() error {
			_, err := eventual.MovedPast(t.Context(), nil, eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}, 1)
			return err
		},
		"Ref.Read(nil ctx)": func() error {
			_, _, err := eventual.Ref{Table: src, PartitionKey: "p", RowKey: "r"}.Read(nilCtx, st)
			return err
		},
	}
	for name, f := range cases {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = nil
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			err = f()
			if !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("%s: %v; want an error matching store.ErrInvalidInput", name, err)
			}
		}()
	}
	if v := eventual.VersionOf(nil); v != 0 {
		t.Errorf("VersionOf(nil) = %d", v)
	}
	var tx *eventual.Tx
	if v := tx.Version(); v != 0 {
		t.Errorf("a nil Tx's Version() = %d", v)
	}
	if s := nilEng.Store(); s != nil {
		t.Errorf("a nil engine's Store() = %v", s)
	}
	// Nothing of the refused writes landed.
	if _, err := st.Table(src).Get(t.Context(), "p", "r", nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused write wrote its row: %v", err)
	}
}
