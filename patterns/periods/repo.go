package periods

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Repo is the typed view of a set of period tables: entities of type T (a
// struct the mapper maps), written to the table of the period their time
// falls in and read across the periods of a time range. It is safe for
// concurrent use.
type Repo[T any] struct {
	p    *Tables
	opts []mapper.Option
}

// NewRepo returns the typed view of p. The options are the mapper's own
// (mapper.WithPageSize, mapper.WithoutSelect), passed on as they are to
// the mapper repository of each period table. It fails for a T the mapper
// cannot map.
func NewRepo[T any](p *Tables, opts ...mapper.Option) (*Repo[T], error) {
	if p == nil {
		return nil, refused("NewRepo: the tables are nil", nil)
	}
	if err := mapper.NewRepository[T](p.st, "probe", opts...).Err(); err != nil {
		return nil, fmt.Errorf("periods: %w", err)
	}
	return &Repo[T]{p: p, opts: opts}, nil
}

// Tables returns the period tables the view works on.
func (r *Repo[T]) Tables() *Tables { return r.p }

// repo is the mapper repository of one period table.
func (r *Repo[T]) repo(table string) *mapper.Repository[T] {
	return mapper.NewRepository[T](r.p.st, table, r.opts...)
}

// Insert stores *v in the table of the period holding at. A write to an
// expired period fails with ErrExpired before anything is sent.
func (r *Repo[T]) Insert(ctx context.Context, at time.Time, v *T) error {
	return r.write(ctx, at, func(repo *mapper.Repository[T]) error { return repo.Insert(ctx, v) })
}

// Upsert inserts or merges/replaces *v in the table of the period holding at.
func (r *Repo[T]) Upsert(ctx context.Context, at time.Time, v *T, mode store.UpdateMode) error {
	return r.write(ctx, at, func(repo *mapper.Repository[T]) error { return repo.Upsert(ctx, v, mode) })
}

// Get reads the entity (pk, rk) from the table of the period holding at. A
// missing entity, or a period without a table, matches store.ErrNotFound.
func (r *Repo[T]) Get(ctx context.Context, at time.Time, pk, rk string) (T, error) {
	per, err := r.p.PeriodOf(at)
	if err != nil {
		var zero T
		return zero, err
	}
	return r.repo(per.Table).Get(ctx, pk, rk)
}

// write runs op on the period table of at. The table is assumed to exist
// (Prepare creates it ahead of time), so the steady state costs the write
// alone; when the service answers that it does not, the table is created
// (createPeriod: never for an expired period, waiting out
// TableBeingDeleted) and op runs once more. A missing table means op was
// not applied, so running it again is safe. The table can go missing
// again between its creation and the write (a retention run deleted it):
// then the creation is tried once more, and refuses an expired period.
func (r *Repo[T]) write(ctx context.Context, at time.Time, op func(*mapper.Repository[T]) error) error {
	per, err := r.p.writable(at)
	if err != nil {
		return err
	}
	repo := r.repo(per.Table)
	for creates := 0; ; creates++ {
		err = op(repo)
		if !tableMissing(err) || creates == 2 {
			return err
		}
		if _, err := r.p.createPeriod(ctx, per); err != nil {
			return err
		}
	}
}

// tableMissing reports an answer saying the table is not there (yet).
func tableMissing(err error) bool {
	switch store.Code(err) {
	case store.CodeTableNotFound, store.CodeTableBeingDeleted:
		return true
	}
	return false
}

// Query returns the entities matching all of where in the tables of every
// period that overlaps from to to (both included), period by period in
// time order and in key order within a period, as one sequence. Periods
// without a table are skipped. Each table is filtered by where only: to
// cut the first and last periods to the instant, include a condition on
// the entity's own time (a property or its RowKey).
//
// It lists the tables once (one request, more for over 1,000 tables) and
// queries each period's table. A failed request yields its error and ends
// the sequence; an entity that does not decode yields its error and the
// sequence goes on if the loop continues.
func (r *Repo[T]) Query(ctx context.Context, from, to time.Time, where ...mapper.Cond[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if to.Before(from) {
			yield(zero, fmt.Errorf("periods: query from %s to %s: the range ends before it starts", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339)))
			return
		}
		all, _, err := r.p.List(ctx)
		if err != nil {
			yield(zero, err)
			return
		}
		for _, per := range all {
			if !per.End.After(from) || per.Start.After(to) {
				continue
			}
			first := true
			for v, err := range r.repo(per.Table).Query(ctx, where...) {
				if first && err != nil && errors.Is(err, store.ErrNotFound) {
					break // deleted since the listing
				}
				first = false
				if err != nil {
					err = fmt.Errorf("periods: %s: %w", per.Table, err)
				}
				if !yield(v, err) {
					return
				}
			}
		}
	}
}
