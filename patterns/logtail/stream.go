package logtail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/patterns/internal/wait"
	"github.com/tablekit/tablekit/store"
)

// ErrForeignRow is matched (errors.Is) by the error a read yields for a row
// in the stream's key range whose RowKey does not start with 19 digits of
// inverted ticks: a row of another kind shares the stream's keys.
var ErrForeignRow = errors.New("logtail: row is not a log tail event")

// Event is one event of a stream.
type Event[T any] struct {
	// Key is the event's RowKey.
	Key string
	// Time is the instant the key records, in UTC, to 100 ns.
	Time time.Time
	// Value is the event. Its key fields hold the stream's partition and
	// Key, its etag field the entity's ETag.
	Value T
}

// Stream is one log tail: the events of one partition, newest first. It is
// safe for concurrent use.
type Stream[T any] struct {
	table    store.Table
	pk       string
	prefix   string
	now      func() time.Time
	ids      *keys.IDGenerator
	sleep    func(context.Context, time.Duration) error
	attempts int
	// all is the $filter of the whole stream, built once: Latest sends it.
	all string
}

// Option configures a Stream.
type Option func(*options)

type options struct {
	prefix   string
	now      func() time.Time
	random   io.Reader
	sleep    func(context.Context, time.Duration) error
	attempts int
}

// WithPrefix puts the stream's keys behind prefix, so that a log tail can
// share a partition with other kinds of rows (an employee and the
// employee's expense claims). The default is no prefix, the layout .NET
// code writes.
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithClock makes Append read the time from now instead of time.Now.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRandom makes the key suffixes draw from r instead of crypto/rand.
func WithRandom(r io.Reader) Option { return func(o *options) { o.random = r } }

// WithSleep replaces the pause between attempts of an Append (time.Sleep
// that returns early with ctx's error).
func WithSleep(sleep func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.sleep = sleep }
}

// WithAttempts sets how many times Append sends one event when the store
// answers with a transient error or an unknown outcome (default 4).
func WithAttempts(n int) Option { return func(o *options) { o.attempts = n } }

// New returns the stream of partition pk in tbl, whose events map to T, a
// struct the mapper maps (its key fields receive the partition and the
// RowKey on reads). It does no I/O. It fails for a partition key or prefix
// the service would refuse and for a T the mapper cannot map.
func New[T any](tbl store.Table, pk string, opts ...Option) (*Stream[T], error) {
	o := options{now: time.Now, sleep: wait.Sleep, attempts: 4}
	for _, opt := range opts {
		opt(&o)
	}
	if err := store.ValidateKeys(pk, o.prefix); err != nil {
		return nil, fmt.Errorf("logtail: %w", err)
	}
	if n := keys.UTF16Len(o.prefix); n > store.MaxKeyUnits-eventKeyLen {
		return nil, fmt.Errorf("logtail: prefix %q is %d UTF-16 code units long: with the %d-character event key the RowKey would pass the limit of %d",
			o.prefix, n, eventKeyLen, store.MaxKeyUnits)
	}
	if o.attempts < 1 {
		return nil, fmt.Errorf("logtail: WithAttempts(%d): want at least 1", o.attempts)
	}
	var zero T
	if _, err := mapper.Encode(&zero); err != nil {
		return nil, fmt.Errorf("logtail: event type: %w", err)
	}
	s := &Stream[T]{
		table: tbl, pk: pk, prefix: o.prefix, now: o.now,
		ids:   keys.NewIDGenerator(epoch, o.random),
		sleep: o.sleep, attempts: o.attempts,
	}
	s.all = s.filter(streamRange(s.prefix)).String()
	return s, nil
}

// Partition returns the stream's PartitionKey.
func (s *Stream[T]) Partition() string { return s.pk }

// Append stores v as the newest event, at the stream clock's current time.
func (s *Stream[T]) Append(ctx context.Context, v T) (Event[T], error) {
	return s.AppendAt(ctx, s.now(), v)
}

// AppendAt stores v as an event of time t. Events keep their key order
// whatever order they were appended in, so late events land where their
// time puts them.
//
// The event is inserted, never upserted: a key is unique (19 digits of
// ticks and 80 random bits), and an insert that collides is retried under
// a fresh key. When the store's answer is lost (the outcome is unknown)
// the same insert is sent again: either it lands now, or the service
// answers EntityAlreadyExists because the first one did. Either way the
// event is stored once. After WithAttempts sends the last error is
// returned; it matches store.ErrUnknownOutcome when the event may have
// been stored.
func (s *Stream[T]) AppendAt(ctx context.Context, t time.Time, v T) (Event[T], error) {
	e, err := mapper.Encode(&v)
	if err != nil {
		return Event[T]{}, fmt.Errorf("logtail: %w", err)
	}
	e.PartitionKey = s.pk
	if e.RowKey, err = s.newKey(t); err != nil {
		return Event[T]{}, err
	}
	if err := store.ValidateEntity(&e); err != nil {
		return Event[T]{}, fmt.Errorf("logtail: event refused before sending: %w", err)
	}
	resent := false // a resend after an unknown outcome is in flight
	var last error
	for attempt := 0; attempt < s.attempts; attempt++ {
		if attempt > 0 {
			if err := s.sleep(ctx, backoff(attempt)); err != nil {
				return Event[T]{}, errors.Join(last, err)
			}
		}
		etag, err := s.table.Insert(ctx, e)
		switch {
		case err == nil:
			e.ETag = etag
			return s.event(e)
		case errors.Is(err, store.ErrAlreadyExists) && resent:
			// Our earlier send, whose answer was lost, stored it.
			etag, gerr := s.resolveETag(ctx, e.RowKey)
			if gerr != nil {
				return Event[T]{}, fmt.Errorf("logtail: event %s was stored (its earlier send landed) but reading it back failed: %w", e.RowKey, gerr)
			}
			e.ETag = etag
			return s.event(e)
		case errors.Is(err, store.ErrAlreadyExists):
			// A genuine collision (vanishingly rare): take a fresh key.
			if e.RowKey, err = s.newKey(t); err != nil {
				return Event[T]{}, err
			}
		case errors.Is(err, store.ErrUnknownOutcome):
			resent = true
		case errors.Is(err, store.ErrTransient):
			// Nothing was applied; resending the same key is safe.
		default:
			if resent {
				// The first send may have landed; say so.
				return Event[T]{}, fmt.Errorf("logtail: event %s: %w (an earlier send's outcome is unknown: %w)", e.RowKey, err, store.ErrUnknownOutcome)
			}
			return Event[T]{}, fmt.Errorf("logtail: append to %s/%s: %w", s.table.Name(), s.pk, err)
		}
		last = err
	}
	if resent && !errors.Is(last, store.ErrUnknownOutcome) {
		return Event[T]{}, fmt.Errorf("logtail: event %s not confirmed after %d sends: %w (an earlier send's outcome is unknown: %w)", e.RowKey, s.attempts, last, store.ErrUnknownOutcome)
	}
	return Event[T]{}, fmt.Errorf("logtail: event %s not confirmed after %d sends: %w", e.RowKey, s.attempts, last)
}

// resolveETag reads back an event stored by a send whose answer was lost.
func (s *Stream[T]) resolveETag(ctx context.Context, rk string) (store.ETag, error) {
	got, err := s.table.Get(ctx, s.pk, rk, &store.GetOptions{Select: []string{"RowKey"}})
	return got.ETag, err
}

// newKey makes a fresh key for time t.
func (s *Stream[T]) newKey(t time.Time) (string, error) {
	id, err := s.ids.New()
	if err != nil {
		return "", fmt.Errorf("logtail: key suffix: %w", err)
	}
	suffix, err := invertID(id[idTimeLen:])
	if err != nil {
		return "", err
	}
	return makeKey(s.prefix, t, suffix)
}

// event decodes a stored entity.
func (s *Stream[T]) event(e store.Entity) (Event[T], error) {
	t, err := parseKey(s.prefix, e.RowKey)
	if err != nil {
		return Event[T]{}, err
	}
	ev := Event[T]{Key: e.RowKey, Time: t}
	if err := mapper.Decode(e, &ev.Value); err != nil {
		return Event[T]{Key: e.RowKey, Time: t}, fmt.Errorf("logtail: event %s: %w", e.RowKey, err)
	}
	return ev, nil
}

// eventOf is event for a row a page read into T: the key is checked
// first, as event checks it before decoding.
func (s *Stream[T]) eventOf(row *mapper.Row[T]) (Event[T], error) {
	t, err := parseKey(s.prefix, row.RowKey)
	if err != nil {
		return Event[T]{}, err
	}
	if row.Err != nil {
		return Event[T]{Key: row.RowKey, Time: t}, fmt.Errorf("logtail: event %s: %w", row.RowKey, row.Err)
	}
	return Event[T]{Key: row.RowKey, Time: t, Value: row.Value}, nil
}

// backoff is the pause before attempt n (1, 2, ...): 50 ms doubling to 2 s.
func backoff(n int) time.Duration {
	d := 50 * time.Millisecond << min(n-1, 6)
	return min(d, 2*time.Second)
}
