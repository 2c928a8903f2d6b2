package series

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrContention is matched (errors.Is) by the error of a write that lost
// the race for the series to other writers on every attempt it was
// allowed. Nothing of it was applied.
var ErrContention = fmt.Errorf("series: too many concurrent writers: %w", partition.ErrConflict)

// ErrNoRoom is matched by the error of a write whose values cannot be
// placed within the series' entities (a value that fits no entity, or a
// series that would need more than its segment limit). Nothing was
// written.
var ErrNoRoom = errors.New("series: no room for the value")

// Series is one data series: Layout.Slots values of one PartitionKey,
// kept in one entity while they fit and in a few when they do not. It is
// safe for concurrent use, and any number of Series values (in any number
// of processes) may write the same series.
type Series struct {
	table  store.Table
	pk, id string
	names  []string
	slots  map[string]int
	rng    keys.Range // the RowKeys of the series' segments
	head   string     // the RowKey of segment 0
	opts   options
}

// Options tune a Series; a nil *Options, and every zero field, takes the
// default written beside the field.
type Options struct {
	// Attempts bounds the tries of one write that meets a concurrent
	// writer (default 10); then it fails with ErrContention.
	Attempts int
	// Backoff and MaxBackoff set the pauses between tries: a random
	// duration up to Backoff, doubling per try up to MaxBackoff (defaults
	// 10 ms and 1 s; MaxBackoff at least Backoff).
	Backoff, MaxBackoff time.Duration
	// MaxSegments bounds the entities one series may spread over, 1 to
	// MaxSegments (the default).
	MaxSegments int
	// Now is the clock the errors' elapsed times are read from (default
	// time.Now).
	Now func() time.Time
	// Sleep is the pause between tries (default: a timer that returns
	// early with ctx's error).
	Sleep func(context.Context, time.Duration) error
	// Random is the source of the backoff jitter and of the write tokens
	// that settle lost answers (default math/rand/v2's Uint64, seeded at
	// random). It must be safe for concurrent use when the Series is, and
	// no two writers of a series may share a seed: equal tokens would make
	// one writer take another's write for its own.
	Random func() uint64
}

type options struct {
	attempts    int
	backoff     time.Duration
	maxBackoff  time.Duration
	maxSegments int
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	random      func() uint64
}

// invalid is a refusal of the package's own checks: it matches
// store.ErrInvalidInput.
func invalid(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "series: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// New returns series id of partition pk in tbl, shaped by layout. The
// series' entities have the RowKeys keys.Join(id, "000"), keys.Join(id,
// "001") and so on, so any string may be the id, and other rows may share
// the partition. opts may be nil for the defaults. New does no I/O; it
// fails for a partition key the service would refuse and for a bad layout
// or option value (an error matching store.ErrInvalidInput that names the
// field and its limit).
func New(tbl store.Table, pk, id string, layout Layout, opts *Options) (*Series, error) {
	var in Options
	if opts != nil {
		in = *opts
	}
	switch {
	case in.Attempts < 0:
		return nil, invalid("Options.Attempts %d: want 0 (the default, 10) or more", in.Attempts)
	case in.Backoff < 0:
		return nil, invalid("Options.Backoff %s: want 0 (the default, 10ms) or more", in.Backoff)
	case in.MaxBackoff < 0:
		return nil, invalid("Options.MaxBackoff %s: want 0 (the default, 1s) or more", in.MaxBackoff)
	case in.MaxSegments < 0 || in.MaxSegments > MaxSegments:
		return nil, invalid("Options.MaxSegments %d: want 0 (the default) to %d", in.MaxSegments, MaxSegments)
	}
	o := options{attempts: 10, backoff: 10 * time.Millisecond, maxBackoff: time.Second, maxSegments: MaxSegments,
		now: time.Now, sleep: wait.Sleep, random: rand.Uint64}
	if in.Attempts != 0 {
		o.attempts = in.Attempts
	}
	if in.Backoff != 0 {
		o.backoff = in.Backoff
	}
	if in.MaxBackoff != 0 {
		o.maxBackoff = in.MaxBackoff
	}
	if in.MaxSegments != 0 {
		o.maxSegments = in.MaxSegments
	}
	if in.Now != nil {
		o.now = in.Now
	}
	if in.Sleep != nil {
		o.sleep = in.Sleep
	}
	if in.Random != nil {
		o.random = in.Random
	}
	if o.maxBackoff < o.backoff {
		return nil, invalid("Options.MaxBackoff %s is below Options.Backoff %s: want at least Backoff", o.maxBackoff, o.backoff)
	}
	names, slots, err := layout.names()
	if err != nil {
		return nil, err
	}
	head, err := segmentKey(id, 0)
	if err != nil {
		return nil, fmt.Errorf("series: id %q: %w", id, err)
	}
	if err := store.ValidateKeys(pk, head); err != nil {
		return nil, fmt.Errorf("series: %w", err)
	}
	last, _ := segmentKey(id, o.maxSegments-1)
	if err := store.ValidateKeys(pk, last); err != nil {
		return nil, fmt.Errorf("series: id %q is too long for its segment keys: %w", id, err)
	}
	rng, err := keys.PrefixOf(id)
	if err != nil {
		return nil, fmt.Errorf("series: id %q: %w", id, err)
	}
	return &Series{table: tbl, pk: pk, id: id, names: names, slots: slots, rng: rng, head: head, opts: o}, nil
}

// Slots returns the number of slots.
func (s *Series) Slots() int { return len(s.names) }

// Property returns the property name of slot i.
func (s *Series) Property(i int) string { return s.names[i] }

// Snapshot is a series as read at one instant.
type Snapshot struct {
	// Values holds one value per slot, in slot order; nil for a slot never
	// written (or cleared).
	Values []any
	// Version counts the writes applied to the series; 0 for a series
	// never written.
	Version int64
	// Segments is the number of entities the series is stored in.
	Segments int
}

// Int64s returns the values as integers: an unset slot is 0, and an Int32
// value (as .NET code writes an int) is widened. Any other type is an
// error naming the slot.
func (sn Snapshot) Int64s() ([]int64, error) {
	out := make([]int64, len(sn.Values))
	for i, v := range sn.Values {
		switch x := v.(type) {
		case nil:
		case int64:
			out[i] = x
		case int32:
			out[i] = int64(x)
		default:
			return nil, fmt.Errorf("series: slot %d holds a %T, not an integer", i, v)
		}
	}
	return out, nil
}

// Float64s returns the values as floats: an unset slot is 0, integers are
// converted. Any other type is an error naming the slot.
func (sn Snapshot) Float64s() ([]float64, error) {
	out := make([]float64, len(sn.Values))
	for i, v := range sn.Values {
		switch x := v.(type) {
		case nil:
		case float64:
			out[i] = x
		case int64:
			out[i] = float64(x)
		case int32:
			out[i] = float64(x)
		default:
			return nil, fmt.Errorf("series: slot %d holds a %T, not a number", i, v)
		}
	}
	return out, nil
}

// Read returns the whole series: one query over its entities (and, for a
// series stored in several entities whose read took more than one page, a
// point read of the first to prove no write came in between).
func (s *Series) Read(ctx context.Context) (Snapshot, error) {
	st, err := s.load(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return st.snapshot(s.names), nil
}

// load reads every segment of the series. Every write changes the head,
// which sorts first; when the read took several pages a write may have
// landed in between, so the head is read again and the load repeated if
// it changed.
func (s *Series) load(ctx context.Context) (*state, error) {
	for range s.opts.attempts {
		st, pages, err := s.loadOnce(ctx)
		if err != nil {
			return nil, err
		}
		if pages == 1 || st.head() == nil {
			if err := st.check(); err != nil {
				return nil, err
			}
			return st, nil
		}
		h, err := s.table.Get(ctx, s.pk, s.head, &store.GetOptions{Select: []string{propVersion}})
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("series: %s: %w", s.describe(), err)
		}
		if err == nil && h.ETag == st.head().etag {
			if err := st.check(); err != nil {
				return nil, err
			}
			return st, nil
		}
	}
	return nil, fmt.Errorf("%w: series %s changed during every one of %d reads", ErrContention, s.describe(), s.opts.attempts)
}

// loadOnce reads the segments, following continuation tokens.
func (s *Series) loadOnce(ctx context.Context) (*state, int, error) {
	q := store.Query{Filter: filter.PK.Eq(s.pk).And(filter.RK.Ge(s.rng.Lower), filter.RK.Lt(s.rng.Upper)).String()}
	st := &state{where: map[int]int{}}
	pages := 0
	for {
		page, err := s.table.Query(ctx, q)
		if err != nil {
			return nil, 0, fmt.Errorf("series: read %s: %w", s.describe(), err)
		}
		pages++
		for _, e := range page.Entities {
			k, err := segmentIndex(s.id, e.RowKey)
			if err != nil {
				return nil, 0, err
			}
			st.add(&segment{idx: k, rk: e.RowKey, etag: e.ETag, props: e.Properties}, s.slots)
		}
		if page.Continuation == "" {
			return st, pages, nil
		}
		q.Continuation = page.Continuation
	}
}

// describe names the series in errors.
func (s *Series) describe() string {
	return fmt.Sprintf("%q of partition %q in table %s", s.id, s.pk, s.table.Name())
}
