package eventual_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/patterns/eventual"
	"github.com/tablekit/tablekit/store"
)

// TestCustomStep: a custom step committed with its source write reaches
// its handler with the operation's source, version and data; a step
// whose handler no engine registered is retried and then poisoned with
// an error naming it; a name that is empty, too long or taken is refused.
func TestCustomStep(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ctx := t.Context()
		st := e.b.Store
		src := e.b.NewTable(t, "custom")
		o := e.opts("custom")
		o.MaxReceives = 2
		eng := newEngine(t, st, o)
		var mu sync.Mutex
		var got []eventual.Operation
		var data []string
		if err := eng.Handle("count", func(_ context.Context, op eventual.Operation, s eventual.Step) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, op)
			data = append(data, string(s.Data))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		res, err := eng.Write(ctx, src, "p", func(tx *eventual.Tx) error {
			if err := tx.Insert("row", store.Entity{RowKey: "r"}); err != nil {
				return err
			}
			return tx.Then(ctx, "r", eventual.Custom("count", []byte("hello")))
		})
		if err != nil {
			t.Fatal(err)
		}
		drain(t, e, eng, o, st, src)
		mu.Lock()
		if len(got) != 1 || got[0].Version != res.Version || got[0].Source == nil || got[0].Source.RowKey != "r" || data[0] != "hello" {
			t.Fatalf("handler saw %+v with %q; want one call for row r at version %d with data hello", got, data, res.Version)
		}
		mu.Unlock()

		// A handler nobody registered: retried, then poisoned naming it.
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.Custom("missing", nil)}}); err != nil {
			t.Fatal(err)
		}
		for range o.MaxReceives + 1 {
			if _, err := eng.ProcessOnce(ctx); err != nil {
				t.Fatal(err)
			}
			e.pass(1200 * time.Millisecond)
		}
		p, err := eng.Poisoned(ctx, 32)
		if err != nil || len(p) != 1 || !strings.Contains(p[0].Attempts[0].Error, `no handler "missing"`) {
			t.Fatalf("poison queue: %+v, %v; want the step naming its missing handler", p, err)
		}

		for name, fn := range map[string]eventual.StepFunc{
			"":                       func(context.Context, eventual.Operation, eventual.Step) error { return nil },
			strings.Repeat("h", 257): func(context.Context, eventual.Operation, eventual.Step) error { return nil },
			"count":                  func(context.Context, eventual.Operation, eventual.Step) error { return nil },
			"nilfunc":                nil,
		} {
			if err := eng.Handle(name, fn); !errors.Is(err, store.ErrInvalidInput) {
				t.Errorf("Handle(%.10q...): %v, want InvalidInput", name, err)
			}
		}
		if err := eng.Submit(ctx, eventual.Operation{Steps: []eventual.Step{eventual.Custom("", nil)}}); !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("a custom step without a handler name: %v, want InvalidInput", err)
		}
	})
}
