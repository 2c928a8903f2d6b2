package store

import (
	"context"
	"sync/atomic"
)

// Instrumentation seam. tablekit's instrumentation (store/meter,
// store/tkotel) wraps a store with store/intercept; two small hooks let
// the layers above and below the wrapper tell it what they do:
//
//   - higher layers (the mapper, the bulk writer, Resolve and the
//     backends' settling of lost answers, the patterns) start an Operation
//     on the Observer of the table or store they use (Observe), so a trace
//     shows a repository write, a bulk load or a worker's step around the
//     requests it made;
//   - backends report each try of a request (store/driver's ReportTry),
//     and the wrapper counts them against the call that made them.
//
// Observe costs one check when no instrumentation is installed: a table
// that is not wrapped has no Observer.

// Operation describes one operation of a layer above the store: a
// repository write, a bulk load, a lost answer's resolution, a pattern's
// step.
type Operation struct {
	// Name names the operation, as "package.Operation": "mapper.Insert",
	// "store.Bulk", "store.Resolve", "eventual.Step".
	Name string
	// Table is the table it works on, if one.
	Table string
	// Batch is the number of rows or actions it writes, if it is known
	// when it starts.
	Batch int
}

// Observer receives the operations of the layers above a store. Start
// returns the context the operation runs in (its requests are children of
// it) and what to call when it ends.
type Observer interface {
	Start(ctx context.Context, op Operation) (context.Context, Finisher)
}

// Finisher ends an operation that an Observer started.
type Finisher interface {
	// Finish ends the operation with its error (nil for success) and, for
	// a bulk load or a query, the rows it handled (0 when not counted).
	Finish(err error, rows int)
}

// ObserverOf returns the Observer of a store, table, queue or container
// wrapped by tablekit's instrumentation, or nil.
func ObserverOf(v any) Observer {
	if o, ok := v.(interface{ Observer() Observer }); ok {
		return o.Observer()
	}
	return nil
}

// nameOf is the name of t, or "" for a nil table.
func nameOf(t Table) string {
	if t == nil {
		return ""
	}
	return t.Name()
}

type nopFinisher struct{}

func (nopFinisher) Finish(error, int) {}

// Observe starts op on the Observer of v (ObserverOf), or else on the
// Observer of ctx (WithObserver), and returns the context to run it in and
// its Finisher. Without an Observer it returns ctx and a Finisher that
// does nothing, at the cost of a type check and, once an Observer was put
// in some context, a context lookup.
func Observe(ctx context.Context, v any, op Operation) (context.Context, Finisher) {
	if o := ObserverOf(v); o != nil {
		return o.Start(ctx, op)
	}
	if ctxObservers.Load() {
		if o, _ := ctx.Value(observerKey{}).(Observer); o != nil {
			return o.Start(ctx, op)
		}
	}
	return ctx, nopFinisher{}
}

// ctxObservers is set once an Observer was put in a context.
var ctxObservers atomic.Bool

type observerKey struct{}

// WithObserver returns ctx carrying o, for the operations a backend
// starts below a wrapper on tables of its own (the read-back of a lost
// answer, store/driver's Settle): Observe finds o there when the table
// has none.
func WithObserver(ctx context.Context, o Observer) context.Context {
	ctxObservers.Store(true)
	return context.WithValue(ctx, observerKey{}, o)
}
