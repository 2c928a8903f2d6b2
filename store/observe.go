package store

import (
	"context"
	"errors"
	"sync/atomic"
)

// Instrumentation seam. tablekit's instrumentation (store/meter,
// store/tkotel) wraps a store with store/intercept; two small hooks here
// let the layers above and below the wrapper tell it what they do:
//
//   - higher layers (the mapper, the bulk writer, Resolve and Settle, the
//     patterns) start an Operation on the Observer of the table or store
//     they use (Observe), so a trace shows a repository write, a bulk load
//     or a worker's step around the requests it made;
//   - backends report each try of a request (ReportTry): azstore from its
//     HTTP pipeline, once per HTTP request, retries included; memstore
//     where its engine plays the service. The wrapper counts them against
//     the call that made them.
//
// Both cost one check when no instrumentation is installed: a table that
// is not wrapped has no Observer, and ReportTry returns at once until a
// TryObserver is first installed in the process.

// Operation describes one operation of a layer above the store: a
// repository write, a bulk load, a lost answer's resolution, a pattern's
// step.
type Operation struct {
	// Name names the operation, as "package.Operation": "mapper.Insert",
	// "store.Bulk", "store.Settle", "eventual.Step".
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
// answer, Settle): Observe finds o there when the table has none.
func WithObserver(ctx context.Context, o Observer) context.Context {
	ctxObservers.Store(true)
	return context.WithValue(ctx, observerKey{}, o)
}

// Try is one request a backend sent to the service: one HTTP request,
// each retry a try of its own.
type Try struct {
	// Status is the HTTP status of the answer; 0 when no answer came (a
	// failed connection, a lost answer).
	Status int
}

// TryObserver is told of every try a backend makes for the calls made
// with a context it was installed in (WithTryObserver). It is called
// concurrently.
type TryObserver interface {
	ObserveTry(t Try)
}

// tryObservers is set once a TryObserver is installed: until then
// ReportTry does nothing.
var tryObservers atomic.Bool

type tryKey struct{}

type tryNode struct {
	o      TryObserver
	parent *tryNode
}

// WithTryObserver returns ctx with o told of each try a backend makes
// for calls made with it, after any observer ctx already has.
func WithTryObserver(ctx context.Context, o TryObserver) context.Context {
	tryObservers.Store(true)
	parent, _ := ctx.Value(tryKey{}).(*tryNode)
	return context.WithValue(ctx, tryKey{}, &tryNode{o: o, parent: parent})
}

// ReportTry tells the TryObservers of ctx of one try with the answer's
// HTTP status (0 for none). Backends call it once per request sent.
func ReportTry(ctx context.Context, status int) {
	if !tryObservers.Load() {
		return
	}
	n, _ := ctx.Value(tryKey{}).(*tryNode)
	for ; n != nil; n = n.parent {
		n.o.ObserveTry(Try{Status: status})
	}
}

// ReportTryErr reports the try of a request that ended with err (nil for
// a success, taken as 200), for a backend that plays the service: an
// error tablekit raised before sending (SourceClient) or a context that
// ended before the request left is no try and is not reported.
func ReportTryErr(ctx context.Context, err error) {
	if !tryObservers.Load() {
		return
	}
	status, sent := TryStatus(err)
	if sent {
		ReportTry(ctx, status)
	}
}

// TryStatus returns the HTTP status a request that ended with err was
// answered with (200 for nil, 0 when no answer came), and whether the
// request was sent at all.
func TryStatus(err error) (status int, sent bool) {
	if err == nil {
		return 200, true
	}
	var se *Error
	if !errors.As(err, &se) {
		return 0, true
	}
	if se.Source == SourceClient {
		return 0, false
	}
	if (se.Code == CodeCanceled || se.Code == CodeDeadlineExceeded || se.Code == CodeConnectionFailed) && !se.Unknown {
		return 0, false
	}
	return se.Status, true
}
