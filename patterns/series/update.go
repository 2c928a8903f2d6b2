package series

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// Update applies fn to the series: fn receives the current values (one per
// slot, nil where unset; it may keep nothing of it) and returns the slots
// to change, a nil value clearing a slot. The change is committed as one
// transaction on the series' head (segment 0, a partition.Head), based on
// the state read; when another writer committed first, the series is
// read again and fn called again, up to Options.Attempts times with
// Options.Backoff in between, then the write fails with ErrContention.
// fn must therefore have no side effects. Returning no changes writes
// nothing.
//
// A value of a type the service does not store, or over its size limits,
// a slot out of range, and a value that has no room in the series fail
// before anything is sent. A write whose answer is lost is never sent
// again: the head resolves it with one read (partition.Txn.Commit). If it
// applied, Update returns nil; if it did not, the head is moved past it
// so it never can, and the write tries again from a new read; only when
// that cannot be told does Update return an error matching
// store.ErrUnknownOutcome, which errors.As finds as a
// *partition.UnknownError whose Resolve asks the head again.
func (s *Series) Update(ctx context.Context, fn func(values []any) (map[int]any, error)) error {
	_, err := s.update(ctx, fn)
	return err
}

// errNoChanges ends a Run whose fn changed nothing: nothing is written.
var errNoChanges = errors.New("series: no changes")

// update runs Update through the head's commit loop (partition.Head.Run)
// and returns which call of fn (from 0) made the changes the series took.
// Each attempt reads the whole series (load), has fn compute the changes
// from it and places them in the transaction on the head; the loop
// retries a lost race, a commit proved not applied and a transient
// failure from a new read, returns a send reported not applied that
// landed after all, and never sends a lost answer again.
func (s *Series) update(ctx context.Context, fn func(values []any) (map[int]any, error)) (int, error) {
	var (
		st      *state             // what the attempt read
		calls   = map[string]int{} // the call of fn each attempt's transaction carries, by request id
		own     error              // fn's error, or the refusal of its changes
		readErr error              // the last read's error
	)
	res, err := s.head.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
		calls[tx.RequestID()] = len(calls)
		own = s.attempt(tx, st, fn)
		return own
	}, &partition.RunOptions{Read: func(ctx context.Context) (partition.Fence, error) {
		st, readErr = s.load(ctx)
		if readErr != nil {
			return partition.Fence{}, readErr
		}
		return st.fence, nil
	}})
	var ae *partition.AttemptsError
	switch {
	case err == nil:
		return calls[res.RequestID], nil // applied, also when the head recovered a lost answer
	case err == errNoChanges:
		return len(calls) - 1, nil
	case err == own, err == readErr:
		return len(calls) - 1, err // they name the series
	case errors.As(err, &ae) && ae.Raced:
		return 0, fmt.Errorf("%w: series %s: gave up after %d attempts: %w", ErrContention, s.describe(), ae.Attempts, ae.Err)
	case errors.As(err, &ae):
		return 0, fmt.Errorf("series: write to %s: gave up after %d attempts: %w", s.describe(), ae.Attempts, ae.Err)
	}
	// A refusal, or an unknown outcome the head could not tell: never
	// sent again.
	return 0, fmt.Errorf("series: write to %s: %w", s.describe(), err)
}

// attempt builds one attempt's transaction: fn's changes to the series
// as read, placed in its segments.
func (s *Series) attempt(tx *partition.Txn, st *state, fn func(values []any) (map[int]any, error)) error {
	m, err := fn(st.snapshot(s.names).Values)
	if err != nil {
		return err
	}
	changes, err := s.changes(m)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return errNoChanges
	}
	return s.plan(tx, st, changes)
}

// Set writes one slot (nil clears it).
func (s *Series) Set(ctx context.Context, slot int, v any) error {
	return s.Update(ctx, func([]any) (map[int]any, error) { return map[int]any{slot: v}, nil })
}

// Add adds delta to the counter in slot and returns its new value. An unset
// slot counts from 0 and is stored as an Int64; an Int32 counter (as .NET
// code writes an int) stays an Int32. Overflow, and a slot holding
// anything but an integer, are errors naming the slot. The value returned
// is the one the write that the series took computed, also when the head
// recovered its lost answer; with an error it is 0 (after an unknown
// outcome, Read shows the counter once the UnknownError is resolved).
func (s *Series) Add(ctx context.Context, slot int, delta int64) (int64, error) {
	if slot < 0 || slot >= len(s.names) {
		return 0, s.slotRange(slot)
	}
	var results []int64 // the new value each call of fn computed
	call, err := s.update(ctx, func(values []any) (map[int]any, error) {
		results = append(results, 0)
		result := &results[len(results)-1]
		switch cur := values[slot].(type) {
		case nil:
			*result = delta
			return map[int]any{slot: delta}, nil
		case int64:
			if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
				return nil, fmt.Errorf("series: slot %d: %d + %d overflows an Int64", slot, cur, delta)
			}
			*result = cur + delta
			return map[int]any{slot: *result}, nil
		case int32:
			n := int64(cur) + delta
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("series: slot %d holds an Int32: %d + %d = %d is outside its range", slot, cur, delta, n)
			}
			*result = n
			return map[int]any{slot: int32(n)}, nil
		default:
			return nil, fmt.Errorf("series: slot %d holds a %T, not an integer counter", slot, cur)
		}
	})
	if err != nil || call >= len(results) {
		return 0, err
	}
	return results[call], nil
}

// changes checks fn's answer and orders it by slot.
func (s *Series) changes(m map[int]any) ([]change, error) {
	out := make([]change, 0, len(m))
	for slot, v := range m {
		if slot < 0 || slot >= len(s.names) {
			return nil, s.slotRange(slot)
		}
		if err := store.ValidateValue(s.names[slot], v); err != nil {
			return nil, fmt.Errorf("series: slot %d of %s: %w", slot, s.describe(), err)
		}
		out = append(out, change{slot, v})
	}
	slices.SortFunc(out, func(a, b change) int { return a.slot - b.slot })
	return out, nil
}

func (s *Series) slotRange(slot int) error {
	return fmt.Errorf("series: slot %d is out of range: series %s has slots 0 to %d", slot, s.describe(), len(s.names)-1)
}
