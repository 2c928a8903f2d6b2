package logtail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit/internal/wait"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
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

// Options tune a Stream; a nil *Options, and every zero field, takes the
// default written beside the field.
type Options struct {
	// Prefix puts the stream's keys behind it, so that a log tail can
	// share a partition with other kinds of rows (an employee and the
	// employee's expense claims). The default is no prefix, the layout
	// .NET code writes. With the event key, the RowKey must stay within
	// the service's 1,024 UTF-16 code units.
	Prefix string
	// Now is the clock Append reads (default time.Now).
	Now func() time.Time
	// Random is the source of the key suffixes (default crypto/rand).
	Random io.Reader
	// Sleep is the pause between attempts of an Append (default: a timer
	// that returns early with ctx's error).
	Sleep func(context.Context, time.Duration) error
	// Attempts is how many times Append sends one event when the store
	// answers with a transient error or an unknown outcome (default 4;
	// at least 1).
	Attempts int
}

// DefaultAttempts is the default of Options.Attempts.
const DefaultAttempts = 4

// New returns the stream of partition pk in tbl, whose events map to T, a
// struct the mapper maps (its key fields receive the partition and the
// RowKey on reads). opts may be nil for the defaults. It does no I/O. It
// fails for a nil table, a partition key or prefix the service would
// refuse, a negative Attempts and a T the mapper cannot map; every such
// error matches store.ErrInvalidInput and names the field and its limit.
func New[T any](tbl store.Table, pk string, opts *Options) (*Stream[T], error) {
	if tbl == nil {
		return nil, refused("New: the table is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = wait.Sleep
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	if err := store.ValidateKeys(pk, o.Prefix); err != nil {
		return nil, fmt.Errorf("logtail: Options.Prefix or the partition key: %w", err)
	}
	if n := keys.UTF16Len(o.Prefix); n > store.MaxKeyUnits-eventKeyLen {
		return nil, refused("Options.Prefix %q is %d UTF-16 code units long: with the %d-character event key the RowKey would pass the limit of %d",
			o.Prefix, n, eventKeyLen, store.MaxKeyUnits)
	}
	if o.Attempts < 1 {
		return nil, refused("Options.Attempts %d: want 0 (the default, %d) or more", o.Attempts, DefaultAttempts)
	}
	var zero T
	if _, err := mapper.Encode(&zero); err != nil {
		return nil, fmt.Errorf("logtail: event type: %w", err)
	}
	s := &Stream[T]{
		table: tbl, pk: pk, prefix: o.Prefix, now: o.Now,
		ids:   keys.NewIDGenerator(epoch, o.Random),
		sleep: o.Sleep, attempts: o.Attempts,
	}
	s.all = s.filter(streamRange(s.prefix)).String()
	return s, nil
}

// refused is the error of an input New refuses: InvalidInput (400) from
// tablekit's own checks, so that it matches store.ErrInvalidInput.
func refused(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, format, args...)
	e.Source = store.SourceClient
	return fmt.Errorf("logtail: %w", e)
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
// event is stored once.
//
// A write has three outcomes, and the result says which:
//
//   - stored: a nil error. The returned event's etag field holds the
//     entity's ETag, read back when the answer that carried it was lost;
//     it is empty in the one case where the event is known to be stored
//     (a resend met EntityAlreadyExists) but every read-back of the ETag
//     failed. The event is stored then all the same: do not append it
//     again (read it by its Key for the ETag).
//   - not stored: an error that matches store.ErrTransient when sending
//     the event again may succeed (nothing was applied by any send), or
//     another error (a refusal) when it will not.
//   - unknown: an error matching store.ErrUnknownOutcome, and never
//     store.ErrTransient or store.ErrThrottled, whatever the last answer
//     was: a send may have landed. Read the stream before appending again.
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
	// unknown is the first answer that left a send's outcome unknown: once
	// set, the event may be stored, and no later answer undoes that.
	var unknown error
	var last error
	for attempt := 0; attempt < s.attempts; attempt++ {
		if attempt > 0 {
			if err := s.sleep(ctx, backoff(attempt)); err != nil {
				if unknown != nil {
					return Event[T]{}, s.unknownOutcome(e.RowKey, unknown, fmt.Sprintf("gave up before sending again: %v", err))
				}
				return Event[T]{}, errors.Join(last, err)
			}
		}
		etag, err := s.table.Insert(ctx, e)
		switch {
		case err == nil:
			e.ETag = etag
			return s.event(e)
		case errors.Is(err, store.ErrAlreadyExists) && unknown != nil:
			// Our earlier send, whose answer was lost, stored it: the
			// key is ours alone (80 random bits).
			e.ETag = s.resolveETag(ctx, e.RowKey)
			return s.event(e)
		case errors.Is(err, store.ErrAlreadyExists):
			// A genuine collision (vanishingly rare): take a fresh key.
			if e.RowKey, err = s.newKey(t); err != nil {
				return Event[T]{}, err
			}
		case errors.Is(err, store.ErrUnknownOutcome):
			if unknown == nil {
				unknown = err
			}
		case errors.Is(err, store.ErrTransient):
			// This send was not applied; resending the same key is safe.
		default:
			if unknown != nil {
				// The first send may have landed; say so.
				return Event[T]{}, s.unknownOutcome(e.RowKey, unknown, fmt.Sprintf("a later send was refused: %v", err))
			}
			return Event[T]{}, fmt.Errorf("logtail: append to %s/%s: %w", s.table.Name(), s.pk, err)
		}
		last = err
	}
	if unknown != nil {
		return Event[T]{}, s.unknownOutcome(e.RowKey, unknown, fmt.Sprintf("not confirmed after %d sends; the last answer: %v", s.attempts, last))
	}
	return Event[T]{}, fmt.Errorf("logtail: event %s not confirmed after %d sends: %w", e.RowKey, s.attempts, last)
}

// unknownOutcome is the error of an append that may have stored its
// event: the store's own unknown-outcome error (a *store.Error with
// Unknown set, matching store.ErrUnknownOutcome and never
// store.ErrTransient or store.ErrThrottled), first, the answer that made
// it unknown, with note added. Later answers are named in the text only,
// so that a 503 after a lost answer cannot make the error look like
// "nothing was applied".
func (s *Stream[T]) unknownOutcome(rk string, first error, note string) error {
	var se *store.Error
	c := &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: true, Source: store.SourceTransport}
	if errors.As(first, &se) && se.Unknown {
		cp := *se
		c = &cp
		if c.Err != nil && (errors.Is(c.Err, store.ErrTransient) || errors.Is(c.Err, store.ErrThrottled)) {
			note = joinNote(c.Err.Error(), note)
			c.Err = nil
		}
		c.Message = joinNote(c.Message, note)
	} else {
		c.Message = joinNote(first.Error(), note)
	}
	return fmt.Errorf("logtail: event %s of %s/%s may or may not be stored (do not append it again before reading the stream): %w", rk, s.table.Name(), s.pk, c)
}

func joinNote(msg, note string) string {
	if msg == "" {
		return note
	}
	return msg + "; " + note
}

// resolveETag reads back the ETag of an event stored by a send whose
// answer was lost. The event is stored whatever the read-back meets: a
// read that fails transiently is tried again (Options.Attempts reads at most,
// with the same pauses as the sends), and after that, or after any other
// failure, the ETag is left empty.
func (s *Stream[T]) resolveETag(ctx context.Context, rk string) store.ETag {
	for attempt := 0; attempt < s.attempts; attempt++ {
		if attempt > 0 {
			if s.sleep(ctx, backoff(attempt)) != nil {
				return ""
			}
		}
		got, err := s.table.Get(ctx, s.pk, rk, &store.GetOptions{Select: []string{"RowKey"}})
		switch {
		case err == nil:
			return got.ETag
		case !errors.Is(err, store.ErrTransient):
			return ""
		}
	}
	return ""
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
