package series

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/partition"
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
// kept in one entity while they fit and in a few when they do not. The
// first entity is the series' head row (a partition.Head): every write is
// one transaction on it, so writers of the series never interleave and a
// write whose answer was lost is resolved by one read of it. It is safe
// for concurrent use, and any number of Series values (in any number of
// processes) may write the same series.
type Series struct {
	table  store.Table
	pk, id string
	names  []string
	slots  map[string]int
	rng    keys.Range      // the RowKeys of the series' segments
	head   *partition.Head // segment 0
	opts   options
}

// Options tune a Series; a nil *Options, and every zero field, takes the
// default written beside the field. The retry policy is the head's
// (partition.Options): Attempts and Backoff are given to it, so one
// policy paces both the tries of a write and the resolution of a lost
// answer.
type Options struct {
	// Attempts bounds the attempts of one write, those of the head's
	// commit loop (partition.Options.Attempts: a write that meets a
	// concurrent writer, one proved not applied after its answer was
	// lost, a transient failure), default 10; a write that lost the race
	// on each fails with ErrContention. It also bounds the head's rounds
	// of read-back that resolve a lost answer
	// (partition.Options.ResolveAttempts) and the reads of a series that
	// writers keep changing.
	Attempts int
	// Backoff is the pause before try n (n >= 1) after the first, of a
	// write and of the head's resolution (partition.Options.Backoff). The
	// default is the head's: a random duration up to 10 ms doubled n-1
	// times, at most 1 s ("full jitter", which spreads contending writers
	// best).
	Backoff func(n int) time.Duration
	// MaxSegments bounds the entities one series may spread over, 1 to
	// MaxSegments (the default).
	MaxSegments int
}

type options struct {
	attempts    int
	backoff     func(n int) time.Duration
	maxSegments int
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
// fails for a nil table, a partition key the service would refuse and for
// a bad layout or option value (an error matching store.ErrInvalidInput
// that names the field and its limit).
func New(tbl store.Table, pk, id string, layout Layout, opts *Options) (*Series, error) {
	var in Options
	if opts != nil {
		in = *opts
	}
	switch {
	case in.Attempts < 0:
		return nil, invalid("Options.Attempts %d: want 0 (the default, 10) or more", in.Attempts)
	case in.MaxSegments < 0 || in.MaxSegments > MaxSegments:
		return nil, invalid("Options.MaxSegments %d: want 0 (the default) to %d", in.MaxSegments, MaxSegments)
	}
	o := options{attempts: 10, backoff: in.Backoff, maxSegments: MaxSegments}
	if in.Attempts != 0 {
		o.attempts = in.Attempts
	}
	if in.MaxSegments != 0 {
		o.maxSegments = in.MaxSegments
	}
	names, slots, err := layout.names()
	if err != nil {
		return nil, err
	}
	rk, err := segmentKey(id, 0)
	if err != nil {
		return nil, fmt.Errorf("series: id %q: %w", id, err)
	}
	if err := store.ValidateKeys(pk, rk); err != nil {
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
	head, err := partition.NewHead(tbl, pk, rk, &partition.Options{
		History:         History,
		Attempts:        o.attempts,
		ResolveAttempts: o.attempts,
		Backoff:         o.backoff,
		HeadPrefix:      HeadPrefix,
	})
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
	// Version is the version of the series' head: it counts the commits
	// on the head (every write, and each move of the head that shut out a
	// write whose answer was lost), so it grows with every change and
	// never goes back; 0 for a series never written.
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
	version, _ := s.head.Properties()
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
		h, err := s.table.Get(ctx, s.pk, s.head.RowKey(), &store.GetOptions{Select: []string{version}})
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

// loadOnce reads the segments, following continuation tokens, and decodes
// the head's state from segment 0.
func (s *Series) loadOnce(ctx context.Context) (*state, int, error) {
	q := store.Query{Filter: filter.PK.Eq(s.pk).And(filter.RK.Ge(s.rng.Lower), filter.RK.Lt(s.rng.Upper)).String()}
	st := &state{where: map[int]int{}}
	st.fence = s.head.Absent()
	pages := 0
	for {
		page, err := s.table.Query(ctx, q)
		if err != nil {
			return nil, 0, fmt.Errorf("series: read %s: %w", s.describe(), err)
		}
		pages++
		for i := range page.Entities {
			e := &page.Entities[i]
			k, err := segmentIndex(s.id, e.RowKey)
			if err != nil {
				return nil, 0, err
			}
			if k == 0 {
				if st.fence, err = s.head.FenceOf(e); err != nil {
					return nil, 0, fmt.Errorf("series: %s: %w", s.describe(), err)
				}
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
