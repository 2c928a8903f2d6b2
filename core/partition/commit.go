package partition

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/store"
)

// Result is the outcome of a commit that applied.
type Result struct {
	// Version is the partition version the commit created.
	Version int64
	// ETags holds the new ETag of each data row, in the order added (""
	// for a delete). It is nil when Recovered: the answer that carried
	// them was lost.
	ETags []store.ETag
	// Outbox holds the ids of the outbox rows written, in the order added.
	Outbox []string
	// Fence is the fence after the commit, to begin the next transaction
	// with BeginAt. When Recovered it is the fence as read back, which
	// other writers may have moved further.
	Fence Fence
	// Recovered is set when the service's answer was lost and a read of
	// the fence proved that the commit applied.
	Recovered bool
	// RequestID is the request id (Txn.RequestID) of the commit that
	// applied: in a Run, the attempt whose transaction the partition took.
	RequestID string
}

// Commit sends the transaction: the fence (conditional on the state the
// transaction began from), the tail, the data rows and the outbox rows,
// all or nothing, in one request. Rows were checked as they were added,
// and the store checks the whole transaction before sending it (a
// property map changed after its row was added is refused there), so a
// transaction the service would refuse is never sent.
//
// On a refusal nothing was written and the error says which action failed
// and why: a ConflictError (another writer committed first), a
// DuplicateError, a ChangedError or a RowError for one of your rows. When
// the answer is lost (errors.Is(err, store.ErrUnknownOutcome) from the
// store), Commit resolves it through the fence instead of sending the
// transaction again: it returns the Result with Recovered set if the
// commit applied, and a NotAppliedError if it did not (after making sure
// it never can); only if that cannot be decided does the error still
// match store.ErrUnknownOutcome (an *UnknownError, which can be resolved
// later). Other failures (throttling, a connection that failed) are
// returned as the store reported them: nothing was applied.
func (t *Txn) Commit(ctx context.Context) (*Result, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	t.done = true
	// Every row was checked when it was added, and the store checks the
	// whole transaction again before sending (a row whose map the caller
	// changed since is refused there, with its index): no third pass here.
	res, err := t.p.table.Transact(ctx, t.actions())
	if err == nil {
		return t.applied(res), nil
	}
	var se *store.Error
	if errors.Is(err, store.ErrUnknownOutcome) && errors.As(err, &se) {
		return t.resolve(ctx, se)
	}
	return nil, t.classify(err)
}

// applied builds the Result of a commit the service confirmed.
func (t *Txn) applied(res []store.ActionResult) *Result {
	r := &Result{Version: t.next.Version, Outbox: t.ids, Fence: t.next, RequestID: t.id}
	if len(res) == t.reserved()+t.Len() {
		r.Fence.ETag = res[0].ETag
		r.ETags = make([]store.ETag, len(t.data))
		for i := range t.data {
			r.ETags[i] = res[t.reserved()+i].ETag
		}
	}
	return r
}
