package xindex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/runner"
)

// JobOptions tune ReapJob; nil, and every zero field, takes the default
// written beside the field.
type JobOptions struct {
	// Every is the period of the job: the pause between the end of one
	// run and the start of the next (default runner.DefaultEvery, 1
	// minute). It may not be negative.
	Every time.Duration
}

// ReapJob returns a job for a runner (core/runner) that reaps index's
// expired claims (Reap) for each entity partition of pks, every
// opts.Every, named "xindex/<table>/reap/<index>". A run reaps every
// partition even when one fails, and returns the failures joined (each
// naming its partition). A nil table, an index not declared, a negative
// period or no partition is refused with an error matching
// store.ErrInvalidInput. It does no I/O.
func (x *Table[T]) ReapJob(index string, opts *JobOptions, pks ...string) (runner.Job, error) {
	if x == nil {
		return runner.Job{}, refuse("ReapJob: the table is nil")
	}
	if _, err := x.spec(index); err != nil {
		return runner.Job{}, err
	}
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	every, err := runner.Period("JobOptions.Every", o.Every)
	if err != nil {
		return runner.Job{}, fmt.Errorf("xindex: ReapJob: %w", err)
	}
	if len(pks) == 0 {
		return runner.Job{}, refuse("ReapJob: no partition to reap")
	}
	pks = append([]string(nil), pks...)
	return runner.Job{Name: "xindex/" + x.name + "/reap/" + index, Every: every, Run: func(ctx context.Context) error {
		var errs []error
		for _, pk := range pks {
			if _, err := x.Reap(ctx, pk, index); err != nil {
				if ctx.Err() != nil {
					return err
				}
				errs = append(errs, fmt.Errorf("xindex: reap %s of partition %q: %w", index, pk, err))
			}
		}
		return errors.Join(errs...)
	}}, nil
}
