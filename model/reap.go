package model

import (
	"context"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ReapClaims removes the claims of the model's global indexes that no
// write will turn into a copy: bare claims older than
// Options.ClaimLease whose entity does not hold the value, left by
// writes that crashed between their claim and their transaction, whose
// answer was lost (an unknown outcome keeps the claims, since the write
// may have applied) or whose release failed. Nothing else removes them
// but Repair: they are no error (lookups read the entity through them
// and find nothing, and another entity may take a unique value over
// once the lease ran out), but each is a row stored and, for every
// lookup of its value (Find, FindAll, Copies, the range lookups), one
// more point read.
//
// Its cost: one query per index table over the global indexes' rows
// (the service reads them all, returning only the claims older than the
// lease), then, per claim returned, one point read of its entity (two
// for an entity in a Move) and one delete If-Match the ETag read (a
// claim a write took again meanwhile stays). It returns how many it
// removed. NewRunner runs it (ReapClaimsJob).
func (m *Model[T]) ReapClaims(ctx context.Context) (int, error) {
	if ctx == nil {
		return 0, refuse("the context is nil")
	}
	rng, err := keys.PrefixOf("x")
	if err != nil {
		return 0, err
	}
	before := m.o.Now().Add(-m.o.ClaimLease).UTC()
	c := filter.PK.InRange(rng).And(filter.Prop(eventual.VersionProperty).Eq(int64(0)), filter.Prop(ClaimedProperty).Le(before))
	if err := c.Err(); err != nil {
		return 0, fmt.Errorf("model: reap: %w", err)
	}
	n := 0
	rules := m.rules()
	for _, t := range m.globalTables() {
		tbl := m.st.Table(t)
		for row, err := range store.All(ctx, tbl, store.Query{Filter: c.String()}) {
			if err != nil {
				return n, fmt.Errorf("model: reap: scan of %s: %w", t, err)
			}
			f := m.indexOf(&row)
			if f == nil || !strings.EqualFold(f.table, t) || owner(&row).Table != m.table {
				continue
			}
			expired, err := rules.Expired(ctx, m.place(f, at{row.PartitionKey, row.RowKey}, ""), &row)
			if err != nil {
				return n, err
			}
			if !expired {
				continue // its entity holds the value: its copy is on the way
			}
			err = tbl.Delete(ctx, row.PartitionKey, row.RowKey, row.ETag)
			switch {
			case err == nil:
				n++
			case store.EntityNotFound(err) || claims.Retryable(err):
				// Gone, taken again, or the answer lost: the next run
				// judges it again.
			default:
				return n, err
			}
		}
	}
	return n, nil
}

// ReapClaimsJob returns a job for a runner (core/runner) that runs
// ReapClaims every opts.Every, named "model/<table>/claims". NewRunner
// adds it for every model with a global index among its tables. A
// negative period, or a model without a global index, is refused with an
// error matching store.ErrInvalidInput. It does no I/O.
func (m *Model[T]) ReapClaimsJob(opts *JobOptions) (runner.Job, error) {
	return m.job("ReapClaimsJob", "claims", m.hasGlobal(), "global index", opts, func(ctx context.Context) error {
		_, err := m.ReapClaims(ctx)
		return err
	})
}

func (m *Model[T]) hasGlobal() bool { return len(m.globalTables()) > 0 }
