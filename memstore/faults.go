package memstore

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// ServerBusy is the fault of a throttled request: the service refused it
// before doing any work (503 ServerBusy).
func ServerBusy() error {
	return store.Errorf(store.CodeServerBusy, 503, "injected fault: the server is busy")
}

// InternalError is the fault of a request the service failed with a 500
// InternalError; for a write, the outcome is unknown to the client.
func InternalError() error {
	return store.Errorf(store.CodeInternalError, 500, "injected fault: the server encountered an internal error")
}

// OperationTimedOut is the fault of a request that timed out on the
// service (500 OperationTimedOut); for a write, the outcome is unknown.
func OperationTimedOut() error {
	return store.Errorf(store.CodeOperationTimedOut, 500, "injected fault: the operation could not be completed within the permitted time")
}

// ResponseLost is the fault of a request whose answer never arrived (a
// reset connection, a client timeout); for a write, the outcome is
// unknown.
func ResponseLost() error {
	e := store.Errorf(store.CodeResponseLost, 0, "injected fault: the connection closed before the answer arrived")
	e.Source = store.SourceTransport
	return e
}

// AfterApply wraps a fault so that the operation takes effect first and
// then the caller gets err instead of its answer: the service did the
// work and the answer was lost.
func AfterApply(err error) error {
	if err == nil {
		return nil
	}
	return &appliedFault{err: err}
}

type appliedFault struct{ err error }

func (f *appliedFault) Error() string { return f.err.Error() + " (after the operation was applied)" }
func (f *appliedFault) Unwrap() error { return f.err }

// faultFor asks the schedule about one operation and splits its answer:
// before fails the operation now; after fails it once it took effect.
func (s *Store) faultFor(op Operation, table string) (before, after error) {
	if s.opts.faults == nil {
		return nil, nil
	}
	err := s.opts.faults(op, table)
	var af *appliedFault
	if errors.As(err, &af) {
		return nil, af.err
	}
	return err, nil
}

// fault returns the fault of an operation that changes no entity data (a
// read, or a table operation): its error, applied or not.
func (s *Store) fault(op Operation, table string) error {
	before, after := s.faultFor(op, table)
	if before != nil {
		return before
	}
	return after
}

// seenByClient is a write's fault as a client sees it: a 500, a 502, a
// 504 or a lost answer leaves the outcome unknown, whether the fault came
// before or after the write took effect; other errors (a 503, a 4xx) are
// refusals and pass unchanged.
func seenByClient(err error) error {
	var se *store.Error
	if !errors.As(err, &se) {
		// Not a service error: the client cannot know what happened.
		return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport,
			Message: "no answer from the service", Err: err}
	}
	if driver.AmbiguousStatus(se.Status) || se.Code == store.CodeResponseLost || se.Code == store.CodeOperationTimedOut || se.Code == store.CodeInternalError {
		c := *se
		c.Unknown = true
		return &c
	}
	return err
}

// idempotentAttempts is how often an idempotent write is sent at most
// while its answer keeps getting lost, as azstore's retry policy resends
// idempotent requests.
const idempotentAttempts = 4

// send runs a checked write (one action, or a transaction) through the
// fault schedule as a client of the service would see it: apply runs the
// write on the table. An idempotent write whose answer is lost is sent
// again; any other is resolved by reading its rows back (driver.Settle),
// never sent twice.
func (h *tableHandle) send(ctx context.Context, op Operation, actions []store.Action, apply func(*table) ([]store.ActionResult, error)) ([]store.ActionResult, error) {
	idempotent := store.Idempotent(actions)
	var unknown error // the first lost answer: a later refusal does not undo it
	for attempt := 1; ; attempt++ {
		results, err := h.sendOnce(ctx, op, actions, apply)
		if err == nil {
			return results, nil
		}
		if errors.Is(err, store.ErrUnknownOutcome) && unknown == nil {
			unknown = err
		}
		if unknown == nil {
			return nil, err
		}
		again := errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient)
		if idempotent && again && attempt < idempotentAttempts {
			continue
		}
		// The read-back is what a client does next, with a context of its
		// own if the caller's is done.
		return driver.Settle(context.WithoutCancel(ctx), h, actions, unknown)
	}
}

// sendOnce sends the write once: its fault before or after it applies, or
// the throughput model's refusal before it applies. Each is one request
// (driver.ReportTry).
func (h *tableHandle) sendOnce(ctx context.Context, op Operation, actions []store.Action, apply func(*table) ([]store.ActionResult, error)) ([]store.ActionResult, error) {
	results, err := h.try(ctx, op, actions, apply)
	driver.ReportTryErr(ctx, err)
	return results, err
}

func (h *tableHandle) try(ctx context.Context, op Operation, actions []store.Action, apply func(*table) ([]store.ActionResult, error)) ([]store.ActionResult, error) {
	t, before, after, err := h.beginWrite(ctx, op)
	if err != nil {
		return nil, err
	}
	if before != nil {
		return nil, seenByClient(before)
	}
	if err := h.s.admitWrite(h.name, actions); err != nil {
		return nil, err
	}
	results, err := apply(t)
	if err != nil || after == nil {
		return results, err
	}
	return nil, seenByClient(after)
}
