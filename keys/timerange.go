package keys

import (
	"fmt"
	"time"
)

// InvertedTicksRange returns the keys of the times in [from, to) when
// keys are prefix followed by [InvertedTicks] of the time, with or
// without more text after the 19 digits (a unique suffix, say): the range
// a newest-first query by time needs, in one call. The range is half-open
// in time, like every range in tablekit: an entity of time from is in it,
// one of time to is not. Because newer times make smaller keys, the range
// runs from the key of the newest time in it (just before to) up to, not
// including, the key after the one of from. It fails like [Ticks] for a
// time without ticks (a to after [MaxTime] leaves the range open at the
// newest end), and with [ErrOutOfRange] when to is not after from.
//
//	rng, err := keys.InvertedTicksRange("order_", monday, tuesday)
//	repo.Partition(customer).Query(ctx, mapper.Where[Order]("RowKey").InRange(rng))
func InvertedTicksRange(prefix string, from, to time.Time) (Range, error) {
	lo, err := Ticks(from)
	if err != nil {
		return Range{}, err
	}
	hi, err := ticksOrMax(to)
	if err != nil {
		return Range{}, err
	}
	if hi <= lo {
		return Range{}, fmt.Errorf("%w: time range [%s, %s) is empty: to must be after from",
			ErrOutOfRange, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
	}
	// t in [lo, hi) ⇔ MaxTicks-t in (MaxTicks-hi, MaxTicks-lo]
	//              ⇔ inverted in [MaxTicks-hi+1, MaxTicks-lo+1).
	return Range{
		Lower:    prefix + formatTicks(MaxTicks-hi+1),
		Upper:    prefix + formatTicks(MaxTicks-lo+1),
		HasUpper: true,
	}, nil
}

// TicksRange is [InvertedTicksRange] for oldest-first keys made with
// [TicksKey]: the keys of the times in [from, to).
func TicksRange(prefix string, from, to time.Time) (Range, error) {
	lo, err := Ticks(from)
	if err != nil {
		return Range{}, err
	}
	hi, err := ticksOrMax(to)
	if err != nil {
		return Range{}, err
	}
	if hi <= lo {
		return Range{}, fmt.Errorf("%w: time range [%s, %s) is empty: to must be after from",
			ErrOutOfRange, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
	}
	return Range{Lower: prefix + formatTicks(lo), Upper: prefix + formatTicks(hi), HasUpper: true}, nil
}

// ticksOrMax returns t's ticks, or MaxTicks+1 for an end after the last
// tick: a range up to a time after MaxTime includes MaxTime.
func ticksOrMax(t time.Time) (int64, error) {
	if t.After(MaxTime) {
		return MaxTicks + 1, nil
	}
	return Ticks(t)
}
