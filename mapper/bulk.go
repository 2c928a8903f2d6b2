package mapper

import (
	"context"
	"errors"
	"reflect"

	"github.com/tablekit/tablekit/store"
)

// BulkWrite writes any number of values with one kind of write through
// store's BulkWriter: grouped by PartitionKey into entity group
// transactions of at most 100 writes under 4 MiB, partitions in parallel
// (opts.Concurrency), transient errors retried, and a failing write
// reported without losing the others of its transaction. Updates and
// deletes carry each value's ETag as If-Match (a value without one fails
// with ErrNoETag); inserts and upserts need none.
//
// The result has one outcome per value, in order; each written value gets
// its new ETag. A value that cannot be encoded fails in its own outcome and
// is never sent. The error is nil when every write succeeded, and otherwise
// a *store.BulkError through which errors.Is sees the first failure.
func (r *Repository[T]) BulkWrite(ctx context.Context, kind store.ActionKind, values []*T, opts store.BulkOptions) (store.BulkResult, error) {
	res := store.BulkResult{Outcomes: make([]store.BulkOutcome, len(values))}
	if r.err != nil {
		// The type cannot be mapped: no value was sent.
		for i := range res.Outcomes {
			res.Outcomes[i] = store.BulkOutcome{Err: r.err, Batch: -1}
		}
		res.Tally()
		return res, r.err
	}
	actions := make([]store.Action, 0, len(values))
	sent := make([]int, 0, len(values)) // input position of each action
	targets := make([]reflect.Value, len(values))
	for i, v := range values {
		a, rv, err := r.bulkAction(kind, v)
		if err != nil {
			res.Outcomes[i] = store.BulkOutcome{Err: err, Batch: -1}
			continue
		}
		targets[i] = rv
		actions = append(actions, a)
		sent = append(sent, i)
	}
	var werr error
	if len(actions) > 0 {
		var sub store.BulkResult
		sub, werr = store.NewBulkWriter(r.table, opts).Write(ctx, actions)
		res.Batches = sub.Batches
		for j, out := range sub.Outcomes {
			res.Outcomes[sent[j]] = out
		}
	}
	for i, out := range res.Outcomes {
		if out.Err == nil && kind != store.ActionDelete {
			if err := r.c.setMeta(targets[i], out.ETag); err != nil {
				res.Outcomes[i].Err = err
			}
		}
	}
	res.Tally()
	var stopped error
	var be *store.BulkError
	if errors.As(werr, &be) {
		stopped = be.Stopped
	}
	return res, res.Err(stopped)
}

// bulkAction maps one value to its write.
func (r *Repository[T]) bulkAction(kind store.ActionKind, v *T) (store.Action, reflect.Value, error) {
	if r.typed != nil {
		// The backend writes the struct straight into its request.
		if v == nil {
			return store.Action{}, reflect.Value{}, &Error{Type: r.c.typ, Msg: "nil pointer"}
		}
		rv := reflect.ValueOf(v).Elem()
		a, err := r.action(kind, rv, true)
		return a, rv, err
	}
	var (
		e   store.Entity
		rv  reflect.Value
		err error
	)
	if kind == store.ActionDelete {
		e, rv, err = r.encodeKeys(v)
	} else {
		e, rv, err = r.encode(v)
	}
	if err != nil {
		return store.Action{}, rv, err
	}
	a := store.Action{Kind: kind, Entity: e}
	if kind.NeedsIfMatch() {
		if a.IfMatch, err = r.ifMatch(rv); err != nil {
			return store.Action{}, rv, err
		}
	}
	return a, rv, nil
}
