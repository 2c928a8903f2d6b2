package series

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/patterns/internal/wait"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrContention is matched (errors.Is) by the error of a write that lost
// the race for the series to other writers on every attempt it was
// allowed. Nothing of it was applied.
var ErrContention = errors.New("series: too many concurrent writers")

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

// Option configures a Series.
type Option func(*options)

type options struct {
	attempts    int
	backoff     time.Duration
	maxBackoff  time.Duration
	maxSegments int
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	random      func() uint64
}

// WithAttempts bounds the tries of one write that meets a concurrent
// writer (default 10); then it fails with ErrContention.
func WithAttempts(n int) Option { return func(o *options) { o.attempts = n } }

// WithBackoff sets the pauses between tries: a random duration up to
// base, doubling per try up to max (defaults 10 ms and 1 s).
func WithBackoff(base, max time.Duration) Option {
	return func(o *options) { o.backoff, o.maxBackoff = base, max }
}

// WithMaxSegments bounds the entities one series may spread over, 1 to
// MaxSegments (the default).
func WithMaxSegments(n int) Option { return func(o *options) { o.maxSegments = n } }

// WithClock sets the clock the errors' elapsed times are read from.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithSleep replaces the pause between tries (a timer that returns early
// with ctx's error).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.sleep = sleep }
}

// WithRandom sets the source of the backoff jitter and of the write
// tokens that settle lost answers (default math/rand/v2's Uint64, seeded
// at random). It must be safe for concurrent use when the Series is, and
// no two writers of a series may share a seed: equal tokens would make one
// writer take another's write for its own.
func WithRandom(random func() uint64) Option { return func(o *options) { o.random = random } }

// New returns series id of partition pk in tbl, shaped by layout. The
// series' entities have the RowKeys keys.Join(id, "000"), keys.Join(id,
// "001") and so on, so any string may be the id, and other rows may share
// the partition. New does no I/O; it fails for a partition key the service
// would refuse and for a bad layout or option.
func New(tbl store.Table, pk, id string, layout Layout, opts ...Option) (*Series, error) {
	o := options{attempts: 10, backoff: 10 * time.Millisecond, maxBackoff: time.Second, maxSegments: MaxSegments,
		now: time.Now, sleep: wait.Sleep, random: rand.Uint64}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.attempts < 1:
		return nil, fmt.Errorf("series: WithAttempts(%d): want at least 1", o.attempts)
	case o.backoff < 0 || o.maxBackoff < o.backoff:
		return nil, fmt.Errorf("series: WithBackoff(%s, %s): want 0 <= base <= max", o.backoff, o.maxBackoff)
	case o.maxSegments < 1 || o.maxSegments > MaxSegments:
		return nil, fmt.Errorf("series: WithMaxSegments(%d): want 1 to %d", o.maxSegments, MaxSegments)
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
