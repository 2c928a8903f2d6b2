package periods

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// The recorded horizon. Retain writes the horizon it expires periods at
// into a table of its own before it deletes anything, and raises it only:
// a run whose clock is behind keeps the later horizon. Every table
// creation of a period (a write's first to a period, Ensure, Prepare)
// reads it before and after creating, so that a period older than the
// recorded horizon never gets its table back, whichever process's clock
// is behind and however a write interleaves with a retention run:
//
//   - a creation that reads the horizon after Retain recorded it refuses
//     the period before creating (ErrExpired);
//   - a creation that read it before, and so may recreate a table Retain
//     deleted since, reads it again once the table exists, sees the
//     period expired, deletes the table and refuses the write: Retain
//     recorded before it deleted, so the second read always sees it.
//
// A write into a table that still exists is not checked against the
// recorded horizon (that would double the cost of every write): like any
// write that lands before Retain deletes the table, it goes with the table.

// HorizonTableSuffix follows New's prefix in the name of the table where
// Retain records the horizon ("LoginsExpiry"). It is letters, so that the
// name is never a period table's, and short enough that the name fits 63
// characters for every prefix New accepts. List leaves the table out of
// the others; no other method of Tables touches it.
const HorizonTableSuffix = "Expiry"

// The entity that records the horizon.
const (
	horizonPK   = "periods"
	horizonRK   = "horizon"
	horizonProp = store.ReservedPrefix + "Horizon"
)

// horizonTable is the name of the table holding the recorded horizon.
func (p *Tables) horizonTable() string { return p.prefix + HorizonTableSuffix }

// isHorizonTable reports the horizon's table (names compare without case,
// as the service compares them).
func (p *Tables) isHorizonTable(name string) bool { return strings.EqualFold(name, p.horizonTable()) }

// RecordedHorizon returns the horizon Retain recorded in the store (by
// this process or any other with the same Prefix): no table of a period
// that ended at or before it is created again. It is the zero time when no
// retention run has recorded one.
func (p *Tables) RecordedHorizon(ctx context.Context) (time.Time, error) {
	h, _, err := p.recorded(ctx)
	return h, err
}

// recorded reads the recorded horizon and the ETag of its entity ("" when
// there is none), trying again after a transient failure.
func (p *Tables) recorded(ctx context.Context) (time.Time, store.ETag, error) {
	name := p.horizonTable()
	var last error
	for attempt := 0; attempt < p.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := p.cfg.Sleep(ctx, p.backoff(attempt)); err != nil {
				return time.Time{}, "", fmt.Errorf("periods: read the recorded horizon in %s: %w (last answer: %w)", name, err, last)
			}
		}
		e, err := p.st.Table(name).Get(ctx, horizonPK, horizonRK, nil)
		switch {
		case err == nil:
			h, ok := e.Properties[horizonProp].(time.Time)
			if !ok {
				return time.Time{}, "", fmt.Errorf("periods: the recorded horizon in %s (%s, %s) has no DateTime property %s", name, horizonPK, horizonRK, horizonProp)
			}
			return h.UTC(), e.ETag, nil
		case errors.Is(err, store.ErrNotFound):
			// No table, or no entity: no run recorded a horizon.
			return time.Time{}, "", nil
		case errors.Is(err, store.ErrTransient):
			last = err
		default:
			return time.Time{}, "", fmt.Errorf("periods: read the recorded horizon in %s: %w", name, err)
		}
	}
	return time.Time{}, "", fmt.Errorf("periods: read the recorded horizon in %s: failed %d times: %w", name, p.cfg.Attempts, last)
}

// record raises the recorded horizon to h unless it is later already, and
// returns the recorded horizon. The entity is written with optimistic
// concurrency, so two runs at once keep the later horizon; a write whose
// outcome is unknown is settled by reading it again.
func (p *Tables) record(ctx context.Context, h time.Time) (time.Time, error) {
	h = store.NormalizeTime(h)
	name := p.horizonTable()
	tbl := p.st.Table(name)
	var last error
	for attempt := 0; attempt < p.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := p.cfg.Sleep(ctx, p.backoff(attempt)); err != nil {
				return time.Time{}, fmt.Errorf("periods: record the horizon in %s: %w (last answer: %w)", name, err, last)
			}
		}
		cur, etag, err := p.recorded(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if !cur.Before(h) {
			return cur, nil
		}
		e := store.Entity{PartitionKey: horizonPK, RowKey: horizonRK, Properties: map[string]any{horizonProp: h}}
		if etag == "" {
			_, err = tbl.Insert(ctx, e)
			if store.Code(err) == store.CodeTableNotFound {
				if _, cerr := p.createTable(ctx, name); cerr != nil {
					return time.Time{}, cerr
				}
				_, err = tbl.Insert(ctx, e)
			}
		} else {
			_, err = tbl.Update(ctx, e, store.Replace, etag)
		}
		switch {
		case err == nil:
			return h, nil
		case errors.Is(err, store.ErrAlreadyExists), errors.Is(err, store.ErrPreconditionFailed),
			errors.Is(err, store.ErrUnknownOutcome), errors.Is(err, store.ErrTransient),
			store.Code(err) == store.CodeTableNotFound:
			// Another run wrote first, or the outcome is unknown: the
			// next read decides.
			last = err
		default:
			return time.Time{}, fmt.Errorf("periods: record the horizon in %s: %w", name, err)
		}
	}
	return time.Time{}, fmt.Errorf("periods: record the horizon in %s: failed %d times: %w", name, p.cfg.Attempts, last)
}

// checkCreatable refuses per when it is expired by this process's clock or
// by the recorded horizon.
func (p *Tables) checkCreatable(ctx context.Context, per Period) error {
	if p.expired(per) {
		return p.expiredError(per, p.Horizon(), "")
	}
	rec, _, err := p.recorded(ctx)
	if err != nil {
		return err
	}
	if !rec.IsZero() && !per.End.After(rec) {
		return p.expiredError(per, rec, " recorded by a retention run")
	}
	return nil
}

// expiredError is the ErrExpired of per against horizon h.
func (p *Tables) expiredError(per Period, h time.Time, whose string) error {
	return fmt.Errorf("%w: %s ended %s, at or before the horizon %s%s (retention %s)",
		ErrExpired, per.Table, per.End.Format(time.RFC3339), h.UTC().Format(time.RFC3339), whose, p.cfg.Retention)
}

// createPeriod creates per's table unless it exists, never for an expired
// period: the horizon is checked before the creation and again after it
// (see the recorded horizon above). When the second check finds the period
// expired, the table is deleted again and the error matches ErrExpired.
func (p *Tables) createPeriod(ctx context.Context, per Period) (bool, error) {
	if err := p.checkCreatable(ctx, per); err != nil {
		return false, err
	}
	created, err := p.createTable(ctx, per.Table)
	if err != nil {
		return false, err
	}
	if err := p.checkCreatable(ctx, per); err != nil {
		if !errors.Is(err, ErrExpired) {
			return false, fmt.Errorf("periods: created table %s but could not check the horizon again (the table stays until a retention run finds it expired): %w", per.Table, err)
		}
		// A retention run expired the period while the table was being
		// created: take the table away again.
		if _, derr := p.deleteTable(ctx, per.Table); derr != nil {
			return false, fmt.Errorf("%w; deleting the table created meanwhile failed (the next retention run deletes it): %v", err, derr)
		}
		return false, err
	}
	return created, nil
}
