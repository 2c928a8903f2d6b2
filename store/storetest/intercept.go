package storetest

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/intercept"
)

// The interception kit. A fault or crash test wraps a store, table, queue
// or container with WrapStore, WrapTable, WrapQueue or WrapContainer and a
// Hook: every request that does I/O passes through the hook, which
// decides what happens to it. The wrapper keeps every capability of what
// it wraps: a wrapped table is a store.TypedTable exactly when the inner
// table is one, so code that probes the lane (driver.Typed) takes the same
// lane under the hook as in production, and the typed requests (Write,
// GetInto, QueryInto) reach the hook like the others.
//
// The kit is package store/intercept, which tablekit's instrumentation
// (store/meter, store/tkotel) wraps stores with too; the names here are
// its names.
//
// A hook embedding a table (type faultTable struct{ store.Table }) hides
// the typed lane; the kit exists so that no test needs to.

// Call describes one request to a hook (intercept.Call).
type Call = intercept.Call

// Hook decides the fate of one request (intercept.Hook). do sends the
// request to the wrapped store and returns its error; the hook may
//   - pass: return do(ctx);
//   - fail before: return an error without calling do (the request
//     never reaches the store);
//   - apply then lose: call do, then return an error in place of its
//     answer;
//   - crash: panic before or after calling do;
//   - count, delay, or change the context it passes to do.
//
// When the hook returns nil the caller gets the store's answer; when it
// returns do's own error, the store's answer and error; any other error
// reaches the caller with zero results. It is called concurrently.
type Hook = intercept.Hook

// Pass is the hook that lets every request through.
func Pass(ctx context.Context, c Call, do func(context.Context) error) error {
	return intercept.Pass(ctx, c, do)
}

// Chain returns a hook that runs hooks in order, each around the next:
// the first sees the request first and the last calls the store.
func Chain(hooks ...Hook) Hook { return intercept.Chain(hooks...) }

// On returns a hook that runs h on the requests match accepts and lets
// the others through.
func On(match func(Call) bool, h Hook) Hook { return intercept.On(match, h) }

// WrapStore returns s with every request of its own, and of the tables,
// queues and containers it hands out, routed through h. Its tables keep
// the typed lane of s's tables (see WrapTable), and the result is a
// store.ACLStore exactly when s is one ("Store.GetAccessPolicy",
// "Store.SetAccessPolicy").
func WrapStore(s store.Store, h Hook) store.Store { return intercept.WrapStore(s, h) }

// WrapTable returns t with every request routed through h. The result is
// a store.TypedTable exactly when t is one; its typed requests reach h as
// "Table.Write", "Table.GetInto" and "Table.QueryInto". Name does no I/O
// and is not routed.
func WrapTable(t store.Table, h Hook) store.Table { return intercept.WrapTable(t, h) }

// WrapQueue returns q with every request but Name routed through h.
func WrapQueue(q store.Queue, h Hook) store.Queue { return intercept.WrapQueue(q, h) }

// WrapContainer returns c with every request but Name routed through h.
func WrapContainer(c store.Container, h Hook) store.Container {
	return intercept.WrapContainer(c, h)
}

// Faults returns a hook that injects the fault pick chooses for each
// request (see Fault.Do); pick is called concurrently.
func Faults(pick func(Call) Fault) Hook {
	return func(ctx context.Context, c Call, do func(context.Context) error) error {
		return pick(c).Do(ctx, c, do)
	}
}

// Do runs the request c under the fault f, as a client of the service
// sees it: the error of a fault that leaves a write's outcome unknown (a
// 500 or a lost answer, before or after the write applied) is marked
// Unknown, as SeenByClient does; FaultNone passes.
func (f Fault) Do(ctx context.Context, c Call, do func(context.Context) error) error {
	switch f {
	case FaultBusy:
		return SeenByClient(c, ServerBusy())
	case FaultInternalBefore:
		return SeenByClient(c, InternalError())
	case FaultLostBefore:
		return SeenByClient(c, ResponseLost())
	case FaultInternalAfter, FaultLostAfter:
		if err := do(ctx); err != nil {
			return err
		}
		if f == FaultInternalAfter {
			return SeenByClient(c, InternalError())
		}
		return SeenByClient(c, ResponseLost())
	}
	return do(ctx)
}

// ServerBusy is the error of a throttled request: the service refused it
// before doing any work (503 ServerBusy). It is memstore's fault of the
// same name.
func ServerBusy() error {
	return store.Errorf(store.CodeServerBusy, 503, "injected fault: the server is busy")
}

// InternalError is the error of a request the service failed with a 500
// InternalError; for a write, the outcome is unknown to the client.
func InternalError() error {
	return store.Errorf(store.CodeInternalError, 500, "injected fault: the server encountered an internal error")
}

// OperationTimedOut is the error of a request that timed out on the
// service (500 OperationTimedOut); for a write, the outcome is unknown.
func OperationTimedOut() error {
	return store.Errorf(store.CodeOperationTimedOut, 500, "injected fault: the operation could not be completed within the permitted time")
}

// ResponseLost is the error of a request whose answer never arrived (a
// reset connection, a client timeout); for a write, the outcome is
// unknown.
func ResponseLost() error {
	e := store.Errorf(store.CodeResponseLost, 0, "injected fault: the connection closed before the answer arrived")
	e.Source = store.SourceTransport
	return e
}

// SeenByClient is err as the client of request c sees it: for a write, a
// 500, 502 or 504, a timeout on the service or a lost answer leaves the
// outcome unknown (the *store.Error is marked Unknown, so it matches
// store.ErrUnknownOutcome), and an error that is not a *store.Error
// becomes a lost answer; a read's error and a refusal (503, 4xx) pass
// unchanged.
func SeenByClient(c Call, err error) error {
	if err == nil || !c.Write {
		return err
	}
	var se *store.Error
	if !errors.As(err, &se) {
		return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport,
			Message: "no answer from the service", Err: err}
	}
	if driver.AmbiguousStatus(se.Status) || se.Code == store.CodeResponseLost || se.Code == store.CodeOperationTimedOut || se.Code == store.CodeInternalError {
		u := *se
		u.Unknown = true
		return &u
	}
	return err
}
