package xindex

import (
	"context"
	"fmt"
	"iter"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// heldClaim is a claim this write made: released (If-Match its ETag) if
// the write surely did not commit.
type heldClaim struct {
	tbl     store.Table
	pk, rk  string
	etag    store.ETag
	release bool // a bare claim this write stamped, not a copy it found
}

// claimRow is the row that claims a unique value for owner.
func (x *Table[T]) claimRow(c claimAt, token string) store.Entity {
	return store.Entity{PartitionKey: c.at.pk, RowKey: c.at.rk, Properties: map[string]any{
		SourcePartitionProperty: c.owner.PartitionKey, SourceRowProperty: c.owner.RowKey,
		ClaimProperty: token, ClaimedProperty: x.o.Now().UTC(), eventual.VersionProperty: int64(0)}}
}

// claim reserves a unique value for its entity before the entity write:
// a free value gets a claim row; the entity's own copy or claim is kept
// (a bare claim is stamped with this write's token, so that another
// write of the entity that fails cannot release it); a value held by
// another entity is refused; a claim or copy of an entity that no longer
// holds the value is taken over once its lease is out.
func (x *Table[T]) claim(ctx context.Context, c claimAt, token string) (heldClaim, error) {
	s, err := x.spec(c.spec)
	if err != nil {
		return heldClaim{}, err
	}
	tbl := x.st.Table(c.at.table)
	want := x.claimRow(c, token)
	for range maxRounds {
		cur, err := tbl.Get(ctx, c.at.pk, c.at.rk, nil)
		switch {
		case store.EntityNotFound(err):
			etag, err := tbl.Insert(ctx, want)
			if retryable(err) {
				continue
			}
			if err != nil {
				return heldClaim{}, fmt.Errorf("xindex: claim %s %q: %w", c.spec, naming.Cut(c.at.value), err)
			}
			return heldClaim{tbl: tbl, pk: c.at.pk, rk: c.at.rk, etag: etag, release: true}, nil
		case err != nil:
			return heldClaim{}, fmt.Errorf("xindex: claim %s %q: %w", c.spec, naming.Cut(c.at.value), err)
		}
		owner := ownerOf(&cur)
		if owner == c.owner {
			w := want
			if eventual.VersionOf(&cur) > 0 {
				// Its own copy, whose removal (from an earlier write that
				// gave the value up) may be on the way: stamp the claim on
				// it, so the removal leaves a claim instead of a hole
				// another entity could claim.
				w = store.Entity{PartitionKey: want.PartitionKey, RowKey: want.RowKey, Properties: map[string]any{
					ClaimProperty: token, ClaimedProperty: want.Properties[ClaimedProperty]}}
				_, err := tbl.Update(ctx, w, store.Merge, cur.ETag)
				if retryable(err) {
					continue
				}
				return heldClaim{}, err
			}
			// Its own bare claim: another write of the entity may hold
			// it, in flight, so this write stamps it but never releases
			// it (if every write fails, it expires).
			_, err := tbl.Update(ctx, w, store.Replace, cur.ETag)
			if retryable(err) {
				continue
			}
			return heldClaim{}, err
		}
		holds, _, err := x.holds(ctx, s, owner, c.at.value)
		if err != nil {
			return heldClaim{}, err
		}
		dup := &partition.DuplicateError{Table: c.at.table, Partition: c.at.pk,
			Row:       partition.Row{Label: "claim of index " + s.name, Index: -1, Kind: store.ActionInsert, RowKey: c.at.rk},
			IndexName: s.name, Value: c.at.value, Holder: owner,
			Err: exists("xindex: row (%q, %q) of table %s exists, another entity's", c.at.pk, naming.Cut(c.at.rk), c.at.table)}
		if holds {
			return heldClaim{}, dup
		}
		if tok, _ := cur.Properties[ClaimProperty].(string); tok != "" && x.o.Now().Sub(claimedAt(&cur)) < x.o.ClaimLease {
			// A write of the holder claimed the value recently and may
			// still land.
			dup.Pending = true
			return heldClaim{}, dup
		}
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		if retryable(err) {
			continue
		}
		if err != nil {
			return heldClaim{}, err
		}
		return heldClaim{tbl: tbl, pk: c.at.pk, rk: c.at.rk, etag: etag, release: true}, nil
	}
	return heldClaim{}, fmt.Errorf("xindex: claim %s %q: %w", c.spec, naming.Cut(c.at.value), errContended)
}

// release removes the bare claims of a write that did not commit, if no
// one wrote them since (best effort: an orphan claim expires).
func (x *Table[T]) release(ctx context.Context, held []heldClaim) {
	for _, h := range held {
		if h.release {
			_ = h.tbl.Delete(context.WithoutCancel(ctx), h.pk, h.rk, h.etag)
		}
	}
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
	cutoff := x.o.Now().Add(-x.o.ClaimLease)
	for c, err := range x.rows(ctx, s, pk, filter.Prop(eventual.VersionProperty).Eq(int64(0))) {
		if err != nil {
			return n, err
		}
		if !claimedAt(&c).Before(cutoff) {
			continue
		}
		holds, _, err := x.holds(ctx, s, ownerOf(&c), valueOf(c.RowKey))
		if err != nil {
			return n, err
		}
		if holds {
			continue // its copy is on the way
		}
		err = tbl.Delete(ctx, c.PartitionKey, c.RowKey, c.ETag)
		if err == nil {
			n++
		} else if !store.EntityNotFound(err) && !retryable(err) {
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
