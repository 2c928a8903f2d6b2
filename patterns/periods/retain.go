package periods

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// List returns the period tables that exist, oldest first, and the names
// of the other tables that start with the prefix (which no method of
// Tables touches).
func (p *Tables) List(ctx context.Context) (periods []Period, others []string, err error) {
	opts := store.ListTablesOptions{Prefix: p.prefix}
	for {
		page, err := p.st.ListTables(ctx, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("periods: list tables %s*: %w", p.prefix, err)
		}
		for _, ti := range page.Tables {
			if p.isHorizonTable(ti.Name) {
				continue // the recorded horizon's own table
			}
			start, err := keys.ParseTableName(p.prefix, ti.Name, p.period)
			if err != nil {
				others = append(others, ti.Name)
				continue
			}
			periods = append(periods, p.periodNamed(ti.Name, start))
		}
		if page.Continuation == "" {
			break
		}
		opts.Continuation = page.Continuation
	}
	// Names of one width sort by time already; sort anyway, so that the
	// order never rests on the store's listing order.
	slices.SortFunc(periods, func(a, b Period) int { return a.Start.Compare(b.Start) })
	return periods, others, nil
}

// RetainOptions shape one retention run.
type RetainOptions struct {
	// DryRun reports what would be deleted and deletes nothing.
	DryRun bool
}

// Report is what a retention run did.
type Report struct {
	// Horizon is the instant before which whole periods were expired: the
	// later of now minus Retention and the horizon recorded in the store.
	Horizon time.Time
	// DryRun is set when nothing was deleted on purpose.
	DryRun bool
	// Deleted are the expired periods whose tables were deleted (or, on a
	// dry run, would be), oldest first.
	Deleted []Period
	// Gone are expired periods whose table vanished before this run
	// deleted it (another retention run got there first).
	Gone []Period
	// Failed are expired periods whose deletion failed; the error returned
	// with the report says why.
	Failed []Period
	// Kept are the periods that are not expired.
	Kept []Period
	// Others are tables with the prefix that are not period tables of
	// this configuration; they are never touched.
	Others []string
}

// Retain deletes the table of every period that ended at or before the
// horizon (now minus Retention): one request per period, whatever the
// number of entities in it. Before it deletes anything it records the
// horizon in the store (RecordedHorizon; it only moves forward, so a run
// whose clock is behind works to the later horizon another run recorded,
// and reports that one), and no table of a period the recorded horizon
// expires is ever created again, by any process. A dry run records
// nothing and reports the later of its own horizon and the recorded one.
// A deletion whose answer is lost is sent again (a table that is then not
// found was deleted); a deletion that keeps failing is reported in Failed
// and in the returned error, and the run goes on with the other periods.
// When the horizon cannot be recorded, nothing is deleted. Deleting a
// table makes its name unusable for a while (TableBeingDeleted); writes
// to the period are refused from then on anyway (ErrExpired).
func (p *Tables) Retain(ctx context.Context, opts RetainOptions) (Report, error) {
	if p.cfg.Retention == 0 {
		return Report{}, fmt.Errorf("periods: Retain needs Options.Retention: with none every period is kept")
	}
	rep := Report{Horizon: store.NormalizeTime(p.Horizon()), DryRun: opts.DryRun}
	if opts.DryRun {
		rec, _, err := p.recorded(ctx)
		if err != nil {
			return rep, err
		}
		if rec.After(rep.Horizon) {
			rep.Horizon = rec
		}
	} else {
		h, err := p.record(ctx, rep.Horizon)
		if err != nil {
			return rep, fmt.Errorf("periods: Retain deleted nothing: %w", err)
		}
		rep.Horizon = h
	}
	all, others, err := p.List(ctx)
	if err != nil {
		return rep, err
	}
	rep.Others = others
	var errs []error
	for _, per := range all {
		if per.End.After(rep.Horizon) {
			rep.Kept = append(rep.Kept, per)
			continue
		}
		if opts.DryRun {
			rep.Deleted = append(rep.Deleted, per)
			continue
		}
		gone, err := p.deleteTable(ctx, per.Table)
		switch {
		case err != nil:
			rep.Failed = append(rep.Failed, per)
			errs = append(errs, err)
		case gone:
			rep.Gone = append(rep.Gone, per)
		default:
			rep.Deleted = append(rep.Deleted, per)
		}
	}
	return rep, errors.Join(errs...)
}

// deleteTable deletes a table, resending after a transient failure or a
// lost answer. It reports gone when the table was already missing at the
// first request.
func (p *Tables) deleteTable(ctx context.Context, name string) (gone bool, err error) {
	resent := false
	var last error
	for attempt := 0; attempt < p.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := p.cfg.Sleep(ctx, p.backoff(attempt)); err != nil {
				return false, fmt.Errorf("periods: delete table %s: %w (last answer: %w)", name, err, last)
			}
		}
		err := p.st.DeleteTable(ctx, name)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, store.ErrNotFound):
			// After a lost answer, not found means our delete landed.
			return !resent, nil
		case errors.Is(err, store.ErrUnknownOutcome):
			resent = true
		case errors.Is(err, store.ErrTransient):
		default:
			return false, fmt.Errorf("periods: delete table %s: %w", name, err)
		}
		last = err
	}
	return false, fmt.Errorf("periods: delete table %s: failed %d times: %w", name, p.cfg.Attempts, last)
}
