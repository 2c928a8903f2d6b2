package model

import (
	"context"
	"iter"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Hit is one row of a global index as its table holds it: what the copy
// holds, the entity it names, and the entity's version it was made from.
// Copies, CopiesRange and CopiesPrefix return them; Fresh reads the
// entity behind one.
type Hit[T any] struct {
	// Index and Value are the index and the value the row is under.
	Index, Value string
	// PK and ID are the keys of the entity the row names.
	PK, ID string
	// Entity is what the copy holds, decoded as T: the entity's keys and
	// the properties the copy holds (one it does not hold is T's zero
	// value), without an ETag. When Claimed, it is the entity as stored,
	// with its ETag.
	Entity *T
	// Version is the entity's version the copy was made from
	// (eventual.VersionProperty on the row); when Claimed, the entity's
	// version as stored.
	Version int64
	// Claimed is set when the row was a write's claim (a bare claim, or a
	// copy a write stamped within Options.ClaimLease when it took the
	// value back): the write may have returned before the engine wrote
	// its copy, so the lookup read the entity through the claim (one
	// more point read) and returns it as stored, if it holds the value; a
	// bare claim whose entity does not hold the value is no hit. A stamp
	// older than the lease (its write's copy is overdue, or the write
	// never committed) is not read through: the copy is returned as it
	// stands.
	Claimed bool

	at   at
	prev string // the entity in flight an arrival's claim names
}

// Fresh is an entity read through a Hit: the entity as stored now, and
// how the copy compared.
type Fresh[T any] struct {
	// Hit is the row that led to the entity.
	Hit Hit[T]
	// Entity is the entity as stored, with its ETag.
	Entity *T
	// Version is the entity's version now.
	Version int64
	// Stale is set when the copy was made from an older version than
	// Version: the entity holds the value, but what the copy holds may be
	// behind until the engine writes it again.
	Stale bool
}

// Copies returns the rows of global index name under value (one at most
// for a GlobalUnique), as Hits, in the order of their entities' keys: a
// point read of the value's row for a unique index, a query of the
// value's partition otherwise, plus one point read per claim met (see
// Hit.Claimed). Unlike Find and FindAll it does not read the entities:
// a Hit may be behind its entity, or left by an entity that gave the
// value up until the engine removes it (Fresh tells). A value that
// cannot make a key is refused (store.ErrInvalidInput).
func (m *Model[T]) Copies(ctx context.Context, name, value string) iter.Seq2[Hit[T], error] {
	return func(yield func(Hit[T], error) bool) {
		f, err := m.index(name, true)
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		p, err := keys.Join("x", f.name, value)
		if err != nil {
			yield(Hit[T]{}, refuse("index %s: value %q: %v", name, value, err))
			return
		}
		if !f.unique {
			m.scanCopies(ctx, f, filter.PK.Eq(p), yield)
			return
		}
		row, err := m.st.Table(f.table).Get(ctx, p, "u", nil)
		if store.EntityNotFound(err) {
			return
		}
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		h, ok, err := m.hit(ctx, f, &row)
		if ok || err != nil {
			yield(h, err)
		}
	}
}

// CopiesRange returns the rows of global index name whose value lies in
// [from, to) (to "" for no upper bound), as Copies does, in value order
// (then the entities' keys). Each value is a partition of the index's
// table, so this is a query across partitions: the service scans the
// index's rows between the two values, page by page (a table scan
// bounded by the range, its cost growing with the rows in it, claims
// and copies left behind included).
func (m *Model[T]) CopiesRange(ctx context.Context, name, from, to string) iter.Seq2[Hit[T], error] {
	return func(yield func(Hit[T], error) bool) {
		f, err := m.index(name, true)
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		rng, err := valuesIn("x", f.name, from, to)
		if err != nil {
			yield(Hit[T]{}, refuse("index %s: %v", name, err))
			return
		}
		m.scanCopies(ctx, f, filter.PK.InRange(rng), yield)
	}
}

// CopiesPrefix returns the rows of global index name whose value starts
// with prefix ("" for every value), as CopiesRange does: a query across
// the partitions of those values.
func (m *Model[T]) CopiesPrefix(ctx context.Context, name, prefix string) iter.Seq2[Hit[T], error] {
	return func(yield func(Hit[T], error) bool) {
		f, err := m.index(name, true)
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		rng, err := valuePrefix("x", f.name, prefix)
		if err != nil {
			yield(Hit[T]{}, refuse("index %s: prefix %q: %v", name, prefix, err))
			return
		}
		m.scanCopies(ctx, f, filter.PK.InRange(rng), yield)
	}
}

// scanCopies yields the hits of the rows of index f that c selects.
func (m *Model[T]) scanCopies(ctx context.Context, f *Feature[T], c filter.Cond, yield func(Hit[T], error) bool) {
	if err := c.Err(); err != nil {
		yield(Hit[T]{}, refuse("index %s: %v", f.name, err))
		return
	}
	for row, err := range store.All(ctx, m.st.Table(f.table), store.Query{Filter: c.String()}) {
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		h, ok, err := m.hit(ctx, f, &row)
		if (ok || err != nil) && !yield(h, err) || err != nil {
			return
		}
	}
}

// hit turns a row of index f into a Hit: ok is false for a row that is
// not one of f's for this model, and for a claim whose entity does not
// hold the value.
func (m *Model[T]) hit(ctx context.Context, f *Feature[T], row *store.Entity) (Hit[T], bool, error) {
	o := owner(row)
	if m.indexOf(row) != f || o.Table != m.table {
		return Hit[T]{}, false, nil
	}
	p, _ := keys.Split(row.PartitionKey)
	id := idOf(o.RowKey)
	h := Hit[T]{Index: f.name, Value: p[2], PK: o.PartitionKey, ID: id, Version: eventual.VersionOf(row),
		at: at{row.PartitionKey, row.RowKey}}
	h.prev, _ = row.Properties[PrevProperty].(string)
	stamped := claims.TokenOf(row) != "" && m.o.Now().Sub(claimedAt(row)) < m.o.ClaimLease
	if h.Version == 0 || stamped {
		v, er, holds, err := m.reach(ctx, f, row, h.at)
		if err != nil {
			return h, true, err
		}
		if holds {
			h.Entity, h.Version, h.Claimed = v, eventual.VersionOf(er), true
			return h, true, nil
		}
		if h.Version == 0 {
			return h, false, nil
		}
		// A write's stamp on the copy of an entity that does not hold
		// the value now: what the copy holds.
	}
	v, err := decodeProps[T](o.PartitionKey, id, own(row.Properties), "")
	h.Entity = v
	return h, true, err
}

// Fresh reads the entity behind h (from Copies, CopiesRange or
// CopiesPrefix) as stored: one point read (two for an entity in flight
// in a Move). It returns the entity with its ETag, and Stale set when
// the copy was made from an older version. An entity that is gone or no
// longer holds the value is an error matching store.ErrNotFound: the
// copy is left behind until the engine removes it.
func (m *Model[T]) Fresh(ctx context.Context, h Hit[T]) (Fresh[T], error) {
	if ctx == nil {
		return Fresh[T]{}, refuse("the context is nil")
	}
	f, err := m.index(h.Index, true)
	if err != nil {
		return Fresh[T]{}, err
	}
	if h.at.pk == "" {
		return Fresh[T]{}, refuse("the hit of %s %q was not returned by a lookup of this model", h.Index, h.Value)
	}
	ek, err := entityKey(h.ID)
	if err != nil {
		return Fresh[T]{}, refuse("id %q: %v", h.ID, err)
	}
	ir := store.Entity{Properties: map[string]any{}}
	m.stampOwner(ir.Properties, eventual.Ref{Table: m.table, PartitionKey: h.PK, RowKey: ek})
	if h.prev != "" {
		ir.Properties[PrevProperty] = h.prev
	}
	v, row, holds, err := m.reach(ctx, f, &ir, h.at)
	if err != nil {
		return Fresh[T]{}, err
	}
	if !holds {
		return Fresh[T]{}, notFound("%s %q: entity (%q, %q) is gone or no longer holds it (the copy is of version %d)", h.Index, h.Value, h.PK, h.ID, h.Version)
	}
	fr := Fresh[T]{Hit: h, Entity: v, Version: eventual.VersionOf(row)}
	fr.Stale = h.Version < fr.Version
	return fr, nil
}
