package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// execute runs the planned transactions, at most opts.Concurrency at once.
// A transaction starts once the earlier ones it waits for are done (see
// planBulk); the others start in an order that takes the partitions in
// turn: the first transaction of each, then the second of each, and so on.
func (r *bulkRun) execute(ctx context.Context, parts [][]*bulkBatch) {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	if total == 0 {
		return
	}
	if r.opts.PartitionOrder {
		r.executeByPartition(ctx, parts)
		return
	}
	ready := make(chan *bulkBatch, total)
	for round := 0; ; round++ {
		more := false
		for _, p := range parts {
			if round < len(p) {
				more = true
				if p[round].after == 0 {
					ready <- p[round]
				}
			}
		}
		if !more {
			break
		}
	}
	var left atomic.Int64
	left.Store(int64(total))
	var wg sync.WaitGroup
	for range min(r.opts.Concurrency, total) {
		wg.Go(func() {
			for b := range ready {
				r.runOne(ctx, b)
				for _, n := range b.then {
					if atomic.AddInt32(&n.after, -1) == 0 {
						ready <- n
					}
				}
				if left.Add(-1) == 0 {
					close(ready)
				}
			}
		})
	}
	wg.Wait()
}

// executeByPartition runs each partition's transactions one after another
// on one worker, at most opts.Concurrency partitions at once: a worker
// takes the next partition in input order when it is done with one.
func (r *bulkRun) executeByPartition(ctx context.Context, parts [][]*bulkBatch) {
	next := make(chan []*bulkBatch, len(parts))
	for _, p := range parts {
		if len(p) > 0 {
			next <- p
		}
	}
	close(next)
	var wg sync.WaitGroup
	for range min(r.opts.Concurrency, len(parts)) {
		wg.Go(func() {
			for p := range next {
				for _, b := range p {
					r.runOne(ctx, b)
				}
			}
		})
	}
	wg.Wait()
}

// runOne runs one planned transaction, or fails its writes with what
// stopped the work when ctx is done.
func (r *bulkRun) runOne(ctx context.Context, b *bulkBatch) {
	for _, i := range b.idx {
		r.outcomes[i].Batch = b.id
	}
	if ctx.Err() != nil {
		// Never sent: fail the writes with the context's error (or what
		// stopped the work).
		err := context.Cause(ctx)
		for _, i := range b.idx {
			r.fail(i, err)
		}
		r.settle(b.idx, false)
		return
	}
	r.runBatch(ctx, b.idx)
	r.settle(b.idx, true)
}

// runBatch applies one planned transaction. When the service refuses it
// because of one action, that action fails with the service's error and,
// unless NoResubmit is set, the transaction is sent again without it; each
// round removes one action, so this ends. A transaction whose outcome
// stays unknown is never sent again: its writes are reported unknown.
func (r *bulkRun) runBatch(ctx context.Context, idx []int) {
	pending := append([]int(nil), idx...)
	for len(pending) > 0 {
		acts := r.gather(pending)
		results, err := r.send(ctx, acts, pending)
		if err != nil && errors.Is(err, ErrUnknownOutcome) && ctx.Err() != nil {
			// The context ended after the transaction left: the backend
			// could not read it back, so do it here, on a context of our
			// own.
			results, err = r.settleDetached(ctx, acts, err)
		}
		if err == nil {
			for k, i := range pending {
				var etag ETag
				if k < len(results) {
					etag = results[k].ETag
				}
				r.succeed(i, etag)
			}
			return
		}
		if errors.Is(err, ErrUnknownOutcome) {
			for _, i := range pending {
				r.unknown(i, positional(err))
			}
			return
		}
		bad := culprit(err, len(pending))
		if bad < 0 {
			for _, i := range pending {
				r.fail(i, err)
			}
			return
		}
		r.fail(pending[bad], positional(err))
		failedAt := pending[bad]
		pending = append(pending[:bad], pending[bad+1:]...)
		if r.opts.NoResubmit {
			aborted := fmt.Errorf("%w (write %d of the input failed: %v)", ErrBatchAborted, failedAt, Code(err))
			for _, i := range pending {
				r.fail(i, aborted)
			}
			return
		}
	}
}

// resolveTimeout bounds the read-back of a transaction whose context ended
// after it was sent.
const resolveTimeout = 10 * time.Second

// settleDetached resolves a transaction after its context ended: a
// read-back (Resolve) on a context of its own decides it applied (the
// results read back), not applied (it failed because the context ended),
// or leaves it unknown, cause then saying why the read-back did not
// decide.
func (r *bulkRun) settleDetached(ctx context.Context, acts []Action, cause error) ([]ActionResult, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), resolveTimeout)
	defer cancel()
	res, results, err := Resolve(rctx, r.table, acts)
	switch res {
	case Applied:
		return results, nil
	case NotApplied:
		return nil, context.Cause(ctx)
	}
	return nil, Undecided(cause, err)
}

// gather returns the actions at input positions idx.
func (r *bulkRun) gather(idx []int) []Action {
	acts := make([]Action, len(idx))
	for k, i := range idx {
		acts[k] = r.actions[i]
	}
	return acts
}

// culprit returns the index of the action a transaction failed on, or -1
// when the failure is the whole transaction's (no index, a transient
// fault, the context).
func culprit(err error, n int) int {
	var se *Error
	if !errors.As(err, &se) || se.Unknown || errors.Is(err, ErrTransient) || se.Index < 0 || se.Index >= n {
		return -1
	}
	return se.Index
}

// send sends acts as one transaction. It sends again, with exponential
// backoff, while the failure left nothing applied (ErrTransient), and
// while the answer is lost if the transaction is idempotent; anything
// else is returned.
func (r *bulkRun) send(ctx context.Context, acts []Action, idx []int) ([]ActionResult, error) {
	wait := r.opts.Backoff
	idempotent := Idempotent(acts)
	for attempt := 1; ; attempt++ {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		for _, i := range idx {
			r.outcomes[i].Attempts++
		}
		results, err := r.table.Transact(ctx, acts)
		if err == nil {
			return results, nil
		}
		again := errors.Is(err, ErrTransient) || (idempotent && errors.Is(err, ErrUnknownOutcome))
		if !again || attempt >= r.opts.MaxAttempts {
			return nil, err
		}
		if serr := r.opts.Sleep(ctx, r.opts.Jitter(wait)); serr != nil {
			if errors.Is(err, ErrUnknownOutcome) {
				return nil, err
			}
			return nil, context.Cause(ctx)
		}
		wait = min(2*wait, r.opts.MaxBackoff)
	}
}
