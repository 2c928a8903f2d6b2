package xindex

import (
	"context"
	"fmt"
	"iter"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// newRules returns the judgement of x's claim and copy rows
// (internal/claims, which model's global indexes share): owners are
// entities of x's table, named on the rows by their keys alone.
func (x *Table[T]) newRules() *claims.Rules {
	return &claims.Rules{Store: x.st, Prefix: "xindex", Lease: x.o.ClaimLease, Now: x.o.Now, OwnerTable: x.name,
		Current: x.judge, Contended: errContended,
		Taken: func(p claims.Place, _ eventual.Ref) *store.Error {
			return exists("xindex: row (%q, %q) of table %s exists, another entity's", p.PK, naming.Cut(p.RK), p.Table)
		},
		HeldTwice: func(p claims.Place, holder, claimant eventual.Ref, _ int64) error {
			return &HeldTwiceError{Table: p.Table, Partition: p.PK, IndexName: p.Index, Value: valueOf(p.RK),
				Holder: Ref{PartitionKey: holder.PartitionKey, RowKey: holder.RowKey}, Claimant: Ref{PartitionKey: claimant.PartitionKey, RowKey: claimant.RowKey},
				Err: exists("xindex: row (%q, %q) of table %s exists, another entity's", p.PK, naming.Cut(p.RK), p.Table)}
		}}
}

// judge reads entity o as stored for the row at p: whether it exists, its
// version, and whether it holds the row's value now.
func (x *Table[T]) judge(ctx context.Context, p claims.Place, o eventual.Ref) (found bool, version int64, holds bool, err error) {
	s, err := x.spec(p.Index)
	if err != nil || o.RowKey == "" {
		return false, 0, false, err
	}
	e, found, err := x.source(ctx, Ref{PartitionKey: o.PartitionKey, RowKey: o.RowKey})
	if err != nil || !found {
		return false, 0, false, err
	}
	var t T
	if err := mapper.Decode(e, &t); err != nil {
		return true, eventual.VersionOf(&e), false, err
	}
	return true, eventual.VersionOf(&e), s.value(&t) == valueOf(p.RK), nil
}

// place is the row of index s at (table, pk, rk).
func place[T any](s *Spec[T], table, pk, rk string) claims.Place {
	return claims.Place{Table: table, PK: pk, RK: rk, Index: s.name, Value: valueOf(rk)}
}

// claim reserves a unique value for its entity before the entity write:
// a free value gets a claim row; the entity's own copy or claim is
// stamped with this write's token (so that another write of the entity
// that fails cannot release it, and a removal of the copy on the way
// leaves a claim); a value held by another entity is refused; a claim or
// copy of an entity that no longer holds the value is taken over once
// its lease is out. claims.Rules.Claim judges the row.
func (x *Table[T]) claim(ctx context.Context, c claimAt, token string) (claims.Held, error) {
	if _, err := x.spec(c.spec); err != nil {
		return claims.Held{}, err
	}
	return x.rules.Claim(ctx, claims.Claim{
		Place: claims.Place{Table: c.at.table, PK: c.at.pk, RK: c.at.rk, Index: c.spec, Value: c.at.value},
		Owner: x.ref(c.owner), Token: token})
}

// Reap removes the claims of index whose lease ran out and whose entity
// does not hold the value: left by writers that crashed (or failed)
// between the claim and the entity write. It reads the index partition of
// the entities of partition pk and returns how many it removed. Claims
// are harmless meanwhile (lookups skip them, and another entity may take
// the value over); Reap only frees their storage.
func (x *Table[T]) Reap(ctx context.Context, pk, index string) (int, error) {
	s, err := x.spec(index)
	if err != nil {
		return 0, err
	}
	if !s.unique {
		return 0, nil
	}
	n := 0
	tbl := x.st.Table(s.table)
	for c, err := range x.rows(ctx, s, pk, filter.Prop(eventual.VersionProperty).Eq(int64(0))) {
		if err != nil {
			return n, err
		}
		expired, err := x.rules.Expired(ctx, place(s, s.table, c.PartitionKey, c.RowKey), &c)
		if err != nil {
			return n, err
		}
		if !expired {
			continue // young, or its copy is on the way
		}
		err = tbl.Delete(ctx, c.PartitionKey, c.RowKey, c.ETag)
		if err == nil {
			n++
		} else if !store.EntityNotFound(err) && !claims.Retryable(err) {
			return n, err
		}
	}
	return n, nil
}

// rows reads the rows of index s in the index partition of the entities
// of partition pk that match where.
func (x *Table[T]) rows(ctx context.Context, s *Spec[T], pk string, where filter.Cond) iter.Seq2[store.Entity, error] {
	return func(yield func(store.Entity, error) bool) {
		rng, err := prefixOf(s.name)
		if err != nil {
			yield(store.Entity{}, err)
			return
		}
		c := filter.PK.Eq(s.partition(pk)).And(filter.RK.InRange(rng), where)
		if err := c.Err(); err != nil {
			yield(store.Entity{}, fmt.Errorf("xindex: index %s: %w", s.name, err))
			return
		}
		for e, err := range store.All(ctx, x.st.Table(s.table), store.Query{Filter: c.String()}) {
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}
