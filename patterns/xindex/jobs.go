package xindex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/runner"
)

// ReapJob returns a job for a runner (core/runner) that reaps index's
// expired claims (Reap) for each entity partition of pks, every every,
// named "xindex/<table>/reap/<index>". A run reaps every partition even
// when one fails, and returns the failures joined (each naming its
// partition). A nil table, an index not declared, a period that is not
// positive or no partition is refused with an error matching
// store.ErrInvalidInput.
func ReapJob[T any](x *Table[T], index string, every time.Duration, pks ...string) (runner.Job, error) {
	if x == nil {
		return runner.Job{}, refuse("ReapJob: the table is nil")
	}
	if _, err := x.spec(index); err != nil {
		return runner.Job{}, err
	}
	if every <= 0 {
		return runner.Job{}, refuse("ReapJob: the period %s is not positive", every)
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
