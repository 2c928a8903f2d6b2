package logtail

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Latest returns the n most recent events (1 to 1,000), newest first. It
// is one query with $top=n; only when the service answers with a short
// page and a continuation token (which Azure may do at any time) does it
// send the follow-up requests needed to fill the n.
func (s *Stream[T]) Latest(ctx context.Context, n int) ([]Event[T], error) {
	if n < 1 || n > store.MaxPageSize {
		return nil, fmt.Errorf("logtail: Latest(%d): n must be 1 to %d (one page)", n, store.MaxPageSize)
	}
	p, err := s.page(ctx, s.all, n)
	return p.Events, err
}

// Since returns the events at or after t (to the 100 ns tick), newest
// first, across as many pages as it takes. A row in the stream's range
// that is not an event yields an error matching ErrForeignRow, and the
// sequence goes on if the loop continues.
func (s *Stream[T]) Since(ctx context.Context, t time.Time) iter.Seq2[Event[T], error] {
	upper, err := tickUpper(s.prefix, t)
	if err != nil {
		return failed[T](err)
	}
	r := streamRange(s.prefix)
	r.Upper = upper
	return s.scan(ctx, r)
}

// Before returns the events strictly before t, newest first, back to the
// oldest: an iterator that pages back in time. The zero t means from the
// newest event.
func (s *Stream[T]) Before(ctx context.Context, t time.Time) iter.Seq2[Event[T], error] {
	r := streamRange(s.prefix)
	if !t.IsZero() {
		lower, err := tickUpper(s.prefix, t)
		if err != nil {
			return failed[T](err)
		}
		r.Lower = lower
	}
	return s.scan(ctx, r)
}

// Page is one screen of events, newest first, and the token of the next
// (older) screen.
type Page[T any] struct {
	// Events are newest first.
	Events []Event[T]
	// Next resumes after the oldest event of Events; "" when no older
	// event exists.
	Next string
}

// Page returns up to size events (1 to 1,000) older than those of the page
// token came from ("" for the newest), newest first. The token records
// the last key returned, so it stays valid while events are appended: new
// events appear on a fresh first page, never shift a later one. A token
// this stream's Page did not make is refused before anything is sent with
// an error matching store.ErrInvalidInput.
func (s *Stream[T]) Page(ctx context.Context, token string, size int) (Page[T], error) {
	if size < 1 || size > store.MaxPageSize {
		return Page[T]{}, fmt.Errorf("logtail: Page size %d: must be 1 to %d", size, store.MaxPageSize)
	}
	r := streamRange(s.prefix)
	if token != "" {
		last, err := s.decodeToken(token)
		if err != nil {
			return Page[T]{}, err
		}
		// The smallest key after last: last + the lowest character a key
		// may hold (a space). No key lies between the two.
		r.Lower = last + " "
	}
	p, err := s.page(ctx, s.filter(r).String(), size)
	if err != nil {
		return Page[T]{}, err
	}
	if len(p.Events) == size && p.more {
		p.Next = s.encodeToken(p.Events[len(p.Events)-1].Key)
	}
	return p.Page, nil
}

// onePage is a page plus whether the service said more rows follow.
type onePage[T any] struct {
	Page[T]
	more bool
}

// page reads up to n events matching where in one query, following
// continuation tokens only while the service's pages come back short.
// Each page is read straight into values of T (mapper.ReadPage).
func (s *Stream[T]) page(ctx context.Context, where string, n int) (onePage[T], error) {
	q := store.Query{Filter: where, Top: n}
	p := onePage[T]{Page: Page[T]{Events: make([]Event[T], 0, n)}}
	var rows []mapper.Row[T]
	for {
		var cont string
		var err error
		rows, cont, err = mapper.ReadPage(ctx, s.table, q, rows[:0])
		if err != nil {
			return onePage[T]{}, fmt.Errorf("logtail: read %s/%s: %w", s.table.Name(), s.pk, err)
		}
		for i := range rows {
			ev, err := s.eventOf(&rows[i])
			if err != nil {
				return onePage[T]{}, err
			}
			p.Events = append(p.Events, ev)
		}
		p.more = cont != ""
		if !p.more || len(p.Events) >= n {
			return p, nil
		}
		q.Top = n - len(p.Events)
		q.Continuation = cont
	}
}

// scan yields every event of r in key order (newest first).
func (s *Stream[T]) scan(ctx context.Context, r keys.Range) iter.Seq2[Event[T], error] {
	return func(yield func(Event[T], error) bool) {
		q := store.Query{Filter: s.filter(r).String()}
		var rows []mapper.Row[T]
		for {
			var cont string
			var err error
			rows, cont, err = mapper.ReadPage(ctx, s.table, q, rows[:0])
			if err != nil {
				yield(Event[T]{}, fmt.Errorf("logtail: read %s/%s: %w", s.table.Name(), s.pk, err))
				return
			}
			for i := range rows {
				if !yield(s.eventOf(&rows[i])) {
					return
				}
			}
			if cont == "" {
				return
			}
			q.Continuation = cont
		}
	}
}

// filter is the condition of the stream's partition within r.
func (s *Stream[T]) filter(r keys.Range) filter.Cond {
	return filter.PK.Eq(s.pk).And(filter.RK.Ge(r.Lower), filter.RK.Lt(r.Upper))
}

// encodeToken makes the page token of the last key returned.
func (s *Stream[T]) encodeToken(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// decodeToken checks a page token and returns the key it records. A token
// Page did not make is refused with InvalidInput (400, store.ErrInvalidInput).
func (s *Stream[T]) decodeToken(token string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	key := string(b)
	if err != nil || !streamRange(s.prefix).Contains(key) {
		bad := store.Errorf(store.CodeInvalidInput, 400, "page token %q was not made by this stream's Page", token)
		bad.Source = store.SourceClient // refused before anything was sent
		return "", fmt.Errorf("logtail: %w", bad)
	}
	return key, nil
}

// failed is a sequence that yields err once.
func failed[T any](err error) iter.Seq2[Event[T], error] {
	return func(yield func(Event[T], error) bool) { yield(Event[T]{}, err) }
}

// NewestFirst orders events newest first, the order of their keys (an
// ordinal comparison, as the service sorts). Use it with slices.SortFunc
// where a store does not sort query results, such as Azure Cosmos DB's
// Table API.
func NewestFirst[T any](a, b Event[T]) int { return keys.Compare(a.Key, b.Key) }
