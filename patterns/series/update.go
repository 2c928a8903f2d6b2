package series

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Update applies fn to the series: fn receives the current values (one per
// slot, nil where unset; it may keep nothing of it) and returns the slots
// to change, a nil value clearing a slot. The change is written with a
// merge conditional on the ETags read; when another writer got in first,
// the series is read again and fn called again, up to Options.Attempts times
// with jittered backoff in between, then the write fails with
// ErrContention. fn must therefore have no side effects. Returning no
// changes writes nothing.
//
// A value of a type the service does not store, or over its size limits,
// a slot out of range, and a value that has no room in the series fail
// before anything is sent. A write whose answer is lost is resolved: it is
// sent again conditional on the same ETags (so it cannot apply twice) and
// the head entity's record of recent writes tells whether it landed; only
// when that cannot be told does Update return an error matching
// store.ErrUnknownOutcome.
func (s *Series) Update(ctx context.Context, fn func(values []any) (map[int]any, error)) error {
	start := s.opts.now()
	var last error
	for attempt := 0; attempt < s.opts.attempts; attempt++ {
		if attempt > 0 {
			if err := s.opts.sleep(ctx, s.backoff(attempt)); err != nil {
				return errors.Join(last, err)
			}
		}
		st, err := s.load(ctx)
		if err != nil {
			return err
		}
		values := st.snapshot(s.names).Values
		m, err := fn(values)
		if err != nil {
			return err
		}
		changes, err := s.changes(m)
		if err != nil || len(changes) == 0 {
			return err
		}
		token := s.token()
		actions, err := s.plan(st, changes, token)
		if err != nil {
			return err
		}
		err = s.commit(ctx, actions)
		if errors.Is(err, store.ErrUnknownOutcome) {
			err = s.resolve(ctx, st, actions, token, err)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, store.ErrUnknownOutcome):
			// Unsettled: the write may have landed. The error may also
			// wrap the transient failure or refusal met while settling
			// it, which must not count as "nothing applied" below.
			return fmt.Errorf("series: write to %s: %w", s.describe(), err)
		case errors.Is(err, errLostRace), errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrAlreadyExists),
			errors.Is(err, store.ErrTransient):
			last = err // someone else wrote first, or nothing was applied: read again
		default:
			return fmt.Errorf("series: write to %s: %w", s.describe(), err)
		}
	}
	return fmt.Errorf("%w: series %s: gave up after %d attempts over %s: %w",
		ErrContention, s.describe(), s.opts.attempts, s.opts.now().Sub(start).Round(time.Millisecond), last)
}

// Set writes one slot (nil clears it).
func (s *Series) Set(ctx context.Context, slot int, v any) error {
	return s.Update(ctx, func([]any) (map[int]any, error) { return map[int]any{slot: v}, nil })
}

// Add adds delta to the counter in slot and returns its new value. An unset
// slot counts from 0 and is stored as an Int64; an Int32 counter (as .NET
// code writes an int) stays an Int32. Overflow, and a slot holding
// anything but an integer, are errors naming the slot.
func (s *Series) Add(ctx context.Context, slot int, delta int64) (int64, error) {
	if slot < 0 || slot >= len(s.names) {
		return 0, s.slotRange(slot)
	}
	var result int64
	err := s.Update(ctx, func(values []any) (map[int]any, error) {
		switch cur := values[slot].(type) {
		case nil:
			result = delta
			return map[int]any{slot: delta}, nil
		case int64:
			if (delta > 0 && cur > math.MaxInt64-delta) || (delta < 0 && cur < math.MinInt64-delta) {
				return nil, fmt.Errorf("series: slot %d: %d + %d overflows an Int64", slot, cur, delta)
			}
			result = cur + delta
			return map[int]any{slot: result}, nil
		case int32:
			n := int64(cur) + delta
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("series: slot %d holds an Int32: %d + %d = %d is outside its range", slot, cur, delta, n)
			}
			result = n
			return map[int]any{slot: int32(n)}, nil
		default:
			return nil, fmt.Errorf("series: slot %d holds a %T, not an integer counter", slot, cur)
		}
	})
	return result, err
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

// commit sends the actions: a single write as itself, several as one
// entity group transaction.
func (s *Series) commit(ctx context.Context, actions []store.Action) error {
	if len(actions) > 1 {
		_, err := s.table.Transact(ctx, actions)
		return err
	}
	a := actions[0]
	var err error
	switch a.Kind {
	case store.ActionInsert:
		_, err = s.table.Insert(ctx, a.Entity)
	case store.ActionUpdateMerge:
		_, err = s.table.Update(ctx, a.Entity, store.Merge, a.IfMatch)
	default: // the head alone is never deleted
		_, err = s.table.Update(ctx, a.Entity, store.Replace, a.IfMatch)
	}
	return err
}

// errLostRace says a write whose answer was lost certainly did not apply
// and never will: another writer's change replaced the head it was
// conditional on.
var errLostRace = errors.New("series: another write applied first")

// resolve settles a write whose answer was lost. The write is conditional
// on the head as read (its ETag, or its absence), and so is any resend, so
// at most one of them applies. Reading the head tells which case holds:
// unchanged, the write has not applied, and it is sent again; changed and
// listing the write's token, it applied; changed by exactly one other
// write, it never will (errLostRace: the caller starts over); changed by
// more, the token may have been pushed out, and the outcome is reported
// unknown.
func (s *Series) resolve(ctx context.Context, st *state, actions []store.Action, token string, cause error) error {
	var before store.ETag
	if h := st.head(); h != nil {
		before = h.etag
	}
	for range s.opts.attempts {
		h, err := s.table.Get(ctx, s.pk, s.head, &store.GetOptions{Select: []string{propVersion, propWrites}})
		switch {
		case errors.Is(err, store.ErrNotFound) && before == "",
			err == nil && h.ETag == before:
			// Not applied (yet): send it again, conditional on the same state.
			err := s.commit(ctx, actions)
			if err == nil {
				return nil
			}
			if errors.Is(err, store.ErrUnknownOutcome) || errors.Is(err, store.ErrTransient) ||
				errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) {
				cause = err
				continue // read the head again
			}
			return fmt.Errorf("%w (resending a write whose answer was lost: %w)", store.ErrUnknownOutcome, err)
		case err != nil:
			cause = err
			continue
		}
		w, _ := h.Properties[propWrites].(string)
		if slices.Contains(strings.Fields(w), token) {
			return nil
		}
		if v, _ := h.Properties[propVersion].(int64); v == st.version()+1 {
			return errLostRace
		}
		return fmt.Errorf("write %s to series %s: %w (the head moved from version %d to %v and no longer lists the write): %w",
			token, s.describe(), store.ErrUnknownOutcome, st.version(), h.Properties[propVersion], cause)
	}
	return fmt.Errorf("write %s to series %s: %w after %d tries to settle it: %w", token, s.describe(), store.ErrUnknownOutcome, s.opts.attempts, cause)
}

// token names one write: tokenLen characters of base 32.
func (s *Series) token() string {
	const digits = "0123456789abcdefghjkmnpqrstvwxyz"
	r := s.opts.random()
	b := make([]byte, tokenLen)
	for i := range b {
		b[i] = digits[r&31]
		r >>= 5
	}
	return string(b)
}

// backoff is the pause before attempt n (1, 2, ...): a random duration up
// to the base doubled n-1 times, capped ("full jitter", which spreads
// contending writers best).
func (s *Series) backoff(n int) time.Duration {
	d := s.opts.maxBackoff
	if n-1 < 30 {
		d = min(d, s.opts.backoff<<(n-1))
	}
	if d <= 0 {
		return 0
	}
	return time.Duration(s.opts.random() % uint64(d))
}
