// Package wait holds the pause the pattern packages take between
// attempts unless their options replace it: a sleep that ends early when
// its context does.
package wait

import (
	"context"
	"time"
)

// Sleep waits for d and returns nil, or returns ctx's error as soon as
// ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
