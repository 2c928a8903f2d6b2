package eventual_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/store"
)

// TestCustomStepHandlers: a kind of step registered with Handle is
// checked before the source write and run by the worker with its
// operation's version; a built-in or repeated kind is refused; a step a
// worker has no handler for is not poisoned at once but left for a worker
// that has one.
func TestCustomStepHandlers(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := t.Context()
		st := e.B.Store
		src := e.B.NewTable(t, "hsrc")
		dst := e.B.NewTable(t, "hdst")
		o := opts(e, "hand")
		eng := eventualtest.NewEngine(t, st, o)
		stamp := eventual.StepHandler{
			Check: func(s eventual.Step) error {
				if len(s.Data) == 0 {
					return store.Errorf(store.CodeInvalidInput, 400, "stamp: no data")
				}
				return nil
			},
			Run: func(ctx context.Context, op eventual.Operation, s eventual.Step) error {
				row := store.Entity{PartitionKey: s.Entity.PartitionKey, RowKey: s.Entity.RowKey,
					Properties: map[string]any{"Note": string(s.Data), "From": op.Version}}
				_, err := st.Table(s.Table).Upsert(ctx, row, store.Replace)
				return err
			},
		}
		if err := eng.Handle("stamp", stamp); err != nil {
			t.Fatal(err)
		}
		for name, kind := range map[string]eventual.StepKind{"built-in": eventual.StepUpsert, "repeated": "stamp", "empty": ""} {
			if err := eng.Handle(kind, stamp); !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("%s kind: %v", name, err)
			}
		}
		write := func(eng *eventual.Engine, kind eventual.StepKind, data string) (int64, error) {
			res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
				if err := tx.Upsert("row", store.Entity{RowKey: "r"}, store.Replace); err != nil {
					return err
				}
				return tx.Then(ctx, "r", eventual.Custom(kind, dst, store.Entity{PartitionKey: "p", RowKey: "r"}, []byte(data)))
			})
			if err != nil {
				return 0, err
			}
			return res.Version, nil
		}
		if _, err := write(eng, "stamp", ""); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("a step its handler's Check refuses: %v", err)
		}
		if _, err := write(eng, "nobody", "x"); !errors.Is(err, eventual.ErrNoHandler) {
			t.Fatalf("a kind with no handler: %v", err)
		}
		// A worker without the handler leaves the message; one with it
		// runs the step.
		v, err := write(eng, "stamp", "hello")
		if err != nil {
			t.Fatal(err)
		}
		// The write's message is queued after Write returned; another
		// engine's ProcessOnce does not wait for it.
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		bare, err := o.New(st)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := bare.ProcessOnce(ctx); n != 1 || err != nil {
			t.Fatalf("bare worker: %d, %v", n, err)
		}
		if p, _ := bare.Poisoned(ctx, 32); len(p) != 0 {
			t.Fatalf("a missing handler poisoned the message at once: %+v", p)
		}
		e.Pass(1100 * time.Millisecond)
		eventualtest.Drain(t, e, &eng, o, st, src)
		got, err := st.Table(dst).Get(ctx, "p", "r", nil)
		if err != nil || got.Properties["Note"] != "hello" || got.Properties["From"] != v {
			t.Fatalf("the custom step: %v, %v; want hello from version %d", got.Properties, err, v)
		}
	})
}
