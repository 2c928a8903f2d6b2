package driver

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/tablekit/tablekit/store"
)

// The report of tries. A backend reports each request it sends to the
// service (ReportTry): azstore from its HTTP pipeline, once per HTTP
// request, retries included; memstore where its engine plays the service
// (ReportTryErr). A wrapper that counts or traces requests (store/meter,
// store/tkotel) installs a TryObserver in the context of the call it
// wraps and learns what the call cost. Reporting costs one atomic load
// until a TryObserver is first installed in the process.

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
// error tablekit raised before sending (store.SourceClient) or a context
// that ended before the request left is no try and is not reported.
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
	var se *store.Error
	if !errors.As(err, &se) {
		return 0, true
	}
	if se.Source == store.SourceClient {
		return 0, false
	}
	if (se.Code == store.CodeCanceled || se.Code == store.CodeDeadlineExceeded || se.Code == store.CodeConnectionFailed) && !se.Unknown {
		return 0, false
	}
	return se.Status, true
}
