package eventual

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/store"
)

// Backlog measures what the engine has left to do for the source tables
// given (those its writes go to): Pending counts the outbox rows of the
// engine's operations in them, claimed by a sweep or not (each an
// operation committed and not yet carried out), Oldest is the creation
// time of the oldest (the writer's clock) and Age its age on the engine's
// clock; Poisoned counts the messages of the poison queue (Poisoned lists
// them), up to the 32 one look shows (PoisonedAtLeast set at 32).
// Operations queued by Submit have no outbox row and are not counted.
//
// It reads every partition of each table (a table scan with a RowKey
// condition, as Sweep does) and peeks at the poison queue: measure
// periodically (Jobs does), not per request.
func (e *Engine) Backlog(ctx context.Context, tables ...string) (runner.Backlog, error) {
	if err := e.usable(ctx); err != nil {
		return runner.Backlog{}, err
	}
	now := e.o.Now()
	b := runner.Backlog{At: now}
	for _, t := range tables {
		ob, err := partition.NewOutbox(e.st.Table(t), e.o.Partition)
		if err != nil {
			return b, err
		}
		for row, err := range ob.Scan(ctx, partition.ScanOptions{Claimed: true}) {
			if err != nil {
				return b, fmt.Errorf("eventual: backlog of %s: %w", t, err)
			}
			if row.Topic != e.queueName {
				continue // another engine's, or another use of the outbox
			}
			b.Pending++
			if b.Oldest.IsZero() || row.Created.Before(b.Oldest) {
				b.Oldest = row.Created
			}
		}
	}
	if !b.Oldest.IsZero() {
		b.Age = max(0, now.Sub(b.Oldest))
	}
	var msgs []store.Message
	err := e.bounded(ctx, func(ctx context.Context) (err error) {
		msgs, err = e.poison.Peek(ctx, store.MaxMessagesPerGet)
		return err
	})
	if err != nil {
		return b, fmt.Errorf("eventual: backlog: peek %s: %w", e.o.PoisonQueue, err)
	}
	b.Poisoned = len(msgs)
	b.PoisonedAtLeast = len(msgs) == store.MaxMessagesPerGet
	return b, nil
}

// JobOptions tune Jobs; nil, and every zero field, takes the default
// written beside the field.
type JobOptions struct {
	// Every is the period of each table's sweep (default
	// runner.DefaultEvery, 1 minute).
	Every time.Duration
	// MeasureEvery is the period of the backlog's measure (default
	// runner.DefaultEvery).
	MeasureEvery time.Duration
}

// Jobs returns the engine's background work as jobs of a runner
// (core/runner), named after the engine's queue q:
//
//	q/worker          Work, long-running; a queue that does not exist
//	                  stops the runner (runner.Fatal): Setup creates it.
//	                  When it stops it waits for the messages of the
//	                  writes that returned (Flush), so that a program
//	                  that stops its runner before it exits sends them
//	                  (each bounded by StepTimeout)
//	q/sweep/<table>   Sweep of each table, every Every
//	q/backlog         Backlog of the tables, every MeasureEvery
//
// tables are the source tables of the engine's writes (the outboxes to
// sweep and measure). A bad table name or a negative period is refused
// with an error matching store.ErrInvalidInput. Handle every kind of
// step first: the worker runs the operations it receives.
func (e *Engine) Jobs(tables []string, opts *JobOptions) ([]runner.Job, error) {
	if e == nil {
		return nil, refuse("the engine is nil: make one with eventual.New")
	}
	var o JobOptions
	if opts != nil {
		o = *opts
	}
	var err error
	if o.Every, err = runner.Period("JobOptions.Every", o.Every); err != nil {
		return nil, fmt.Errorf("eventual: Jobs: %w", err)
	}
	if o.MeasureEvery, err = runner.Period("JobOptions.MeasureEvery", o.MeasureEvery); err != nil {
		return nil, fmt.Errorf("eventual: Jobs: %w", err)
	}
	seen := map[string]bool{}
	for _, t := range tables {
		if err := store.ValidateTableName(t); err != nil {
			return nil, fmt.Errorf("eventual: Jobs: %w", err)
		}
		if seen[t] {
			return nil, refuse("Jobs: table %s is given twice", t)
		}
		seen[t] = true
	}
	q := e.queueName
	jobs := []runner.Job{{Name: q + "/worker", Run: func(ctx context.Context) error {
		err := e.Work(ctx)
		// Each message is bounded by StepTimeout, and Flush waits only
		// for the writes that returned already: this ends.
		_ = e.Flush(context.WithoutCancel(ctx))
		if errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
			return runner.Fatal(err)
		}
		return err
	}}}
	for _, t := range tables {
		jobs = append(jobs, runner.Job{Name: q + "/sweep/" + t, Every: o.Every, Run: func(ctx context.Context) error {
			_, err := e.Sweep(ctx, t)
			return err
		}})
	}
	tables = append([]string(nil), tables...)
	jobs = append(jobs, runner.Job{Name: q + "/backlog", Every: o.MeasureEvery, Measure: func(ctx context.Context) (runner.Backlog, error) {
		return e.Backlog(ctx, tables...)
	}})
	return jobs, nil
}
