package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// execute runs the partitions, at most opts.Concurrency at once, each one's
// transactions in order.
func (r *bulkRun) execute(ctx context.Context, parts [][]*bulkBatch) {
	next := make(chan []*bulkBatch)
	var wg sync.WaitGroup
	for range min(r.opts.Concurrency, len(parts)) {
		wg.Go(func() {
			for batches := range next {
				r.runPartition(ctx, batches)
			}
		})
	}
	for _, p := range parts {
		next <- p
	}
	close(next)
	wg.Wait()
}

func (r *bulkRun) runPartition(ctx context.Context, batches []*bulkBatch) {
	for _, b := range batches {
		for _, i := range b.idx {
			r.outcomes[i].Batch = b.id
		}
		if err := ctx.Err(); err != nil {
			// Never sent: fail the writes with the context's error.
			for _, i := range b.idx {
				r.fail(i, err)
			}
			r.settle(b.idx, false)
			continue
		}
		r.runBatch(ctx, b.idx)
		r.settle(b.idx, true)
	}
}

// runBatch applies one planned transaction. When the service refuses it
// because of one action, that action fails with the service's error and,
// unless NoResubmit is set, the transaction is sent again without it; each
// round removes one action, so this ends.
func (r *bulkRun) runBatch(ctx context.Context, idx []int) {
	pending := append([]int(nil), idx...)
	for len(pending) > 0 {
		results, err := r.send(ctx, pending)
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

// culprit returns the index of the action a transaction failed on, or -1
// when the failure is the whole transaction's (no index, a transient
// fault, the context).
func culprit(err error, n int) int {
	var se *Error
	if !errors.As(err, &se) || errors.Is(err, ErrTransient) || se.Index < 0 || se.Index >= n {
		return -1
	}
	return se.Index
}

// send sends the actions at positions idx as one transaction, retrying
// transient failures with exponential backoff.
func (r *bulkRun) send(ctx context.Context, idx []int) ([]ActionResult, error) {
	acts := make([]Action, len(idx))
	for k, i := range idx {
		acts[k] = r.actions[i]
	}
	wait := r.opts.Backoff
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, i := range idx {
			r.outcomes[i].Attempts++
		}
		results, err := r.table.Transact(ctx, acts)
		if err == nil {
			return results, nil
		}
		if !errors.Is(err, ErrTransient) || attempt >= r.opts.MaxAttempts {
			if cerr := ctx.Err(); cerr != nil && errors.Is(err, ErrTransient) {
				return nil, cerr
			}
			return nil, err
		}
		if err := r.opts.Sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, r.opts.MaxBackoff)
	}
}
