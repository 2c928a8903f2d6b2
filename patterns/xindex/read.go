package xindex

import (
	"context"
	"fmt"
	"iter"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/naming"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Get reads the entity with keys (pk, rk), with its ETag.
func (x *Table[T]) Get(ctx context.Context, pk, rk string) (T, error) { return x.repo.Get(ctx, pk, rk) }

// Fresh is an entity read through an index copy: the entity as stored
// now, and how the copy that led to it compared.
type Fresh[T any] struct {
	// Value is the entity, read from its own partition, with its ETag.
	Value T
	// Version is the entity's version now.
	Version int64
	// Hit is the copy that led to it.
	Hit Hit[T]
	// Stale is set when the copy was made from an older version than
	// Version: the entity still holds the value, but the copy's other
	// properties may be behind until the worker refreshes it.
	Stale bool
}

// Find reads the copy under value in unique index of the entities of
// partition pk: one point read, in the index's partition. The Hit holds
// what the copy holds and the entity version it was made from; it may be
// behind its entity (FindFresh reads the entity too). A missing value,
// or a value only claimed so far, is an error matching store.ErrNotFound.
func (x *Table[T]) Find(ctx context.Context, pk, index, value string) (Hit[T], error) {
	s, err := x.spec(index)
	if err != nil {
		return Hit[T]{}, err
	}
	if !s.unique {
		return Hit[T]{}, refuse("index %q is not unique: use FindAll", index)
	}
	at, err := s.at(pk, "", value)
	if err != nil {
		return Hit[T]{}, err
	}
	c, err := x.st.Table(s.table).Get(ctx, at.pk, at.rk, nil)
	if err == nil && eventual.VersionOf(&c) == 0 {
		err = store.Errorf(store.CodeResourceNotFound, 404, "xindex: %s %q is claimed by %s, not yet copied", index, naming.Cut(value), ownerOf(&c))
	}
	if err != nil {
		return Hit[T]{}, fmt.Errorf("xindex: %s %q in partition %q: %w", index, naming.Cut(value), at.pk, err)
	}
	return x.decodeHit(s, c)
}

// FindFresh finds value in unique index (as Find) and reads the entity
// the copy refers to: two point reads. It returns the entity as stored,
// with Stale set when the copy was behind it. A copy whose entity is gone
// or no longer holds the value is a *DanglingError (matching ErrDangling
// and store.ErrNotFound): the worker has not removed it yet.
func (x *Table[T]) FindFresh(ctx context.Context, pk, index, value string) (Fresh[T], error) {
	h, err := x.Find(ctx, pk, index, value)
	if err != nil {
		return Fresh[T]{}, err
	}
	return x.Check(ctx, h)
}

// Check reads the entity of a hit (from Find, FindAll, Range or Prefix)
// and compares: the entity with Stale set when the copy was behind it, or
// a *DanglingError when the entity is gone or no longer holds the value.
func (x *Table[T]) Check(ctx context.Context, h Hit[T]) (Fresh[T], error) {
	s, err := x.spec(h.Index)
	if err != nil {
		return Fresh[T]{}, err
	}
	e, found, err := x.source(ctx, h.Source)
	if err != nil {
		return Fresh[T]{}, err
	}
	if !found {
		return Fresh[T]{}, &DanglingError{Index: h.Index, Value: h.IndexValue, Source: h.Source, Gone: true, CopyVersion: h.Version}
	}
	f := Fresh[T]{Hit: h, Version: eventual.VersionOf(&e)}
	if err := mapper.Decode(e, &f.Value); err != nil {
		return Fresh[T]{}, err
	}
	if s.value(&f.Value) != h.IndexValue {
		return Fresh[T]{}, &DanglingError{Index: h.Index, Value: h.IndexValue, Source: h.Source, CopyVersion: h.Version, SourceVersion: f.Version}
	}
	f.Stale = h.Version < f.Version
	return f, nil
}

// FindAll returns the copies under value in index of the entities of
// partition pk, in the order of their entities' keys: one range query of
// the index partition.
func (x *Table[T]) FindAll(ctx context.Context, pk, index, value string) iter.Seq2[Hit[T], error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		if s.unique {
			rk, err := keys.Join(s.name, value)
			return keys.Range{Lower: rk, Upper: rk, HasUpper: true, UpperIncluded: true}, err
		}
		return keys.PrefixOf(s.name, value)
	})
}

// Range returns the copies of index whose value lies in [from, to) ("" as
// to: no upper bound), in value order.
func (x *Table[T]) Range(ctx context.Context, pk, index, from, to string) iter.Seq2[Hit[T], error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		lo, err := keys.Join(s.name, from)
		if err != nil {
			return keys.Range{}, err
		}
		if to == "" {
			end, err := keys.PrefixOf(s.name)
			return keys.Range{Lower: lo, Upper: end.Upper, HasUpper: end.HasUpper}, err
		}
		hi, err := keys.Join(s.name, to)
		return keys.Range{Lower: lo, Upper: hi, HasUpper: true}, err
	})
}

// Prefix returns the copies of index whose value starts with prefix, in
// value order.
func (x *Table[T]) Prefix(ctx context.Context, pk, index, prefix string) iter.Seq2[Hit[T], error] {
	return x.scan(ctx, pk, index, func(s *Spec[T]) (keys.Range, error) {
		if prefix == "" {
			return keys.PrefixOf(s.name)
		}
		// Escaping maps character by character, so the copies of the
		// values starting with prefix are the keys starting with the
		// escaped pair.
		joined, err := keys.Join(s.name, prefix)
		if err != nil {
			return keys.Range{}, err
		}
		return keys.PrefixRange(joined), nil
	})
}

// prefixOf is the RowKey range of every row of an index.
func prefixOf(name string) (keys.Range, error) { return keys.PrefixOf(name) }

// scan reads the copies (never the bare claims) of one index in a key
// range of the index partition of the entities of partition pk.
func (x *Table[T]) scan(ctx context.Context, pk, index string, rangeOf func(*Spec[T]) (keys.Range, error)) iter.Seq2[Hit[T], error] {
	return func(yield func(Hit[T], error) bool) {
		s, err := x.spec(index)
		if err != nil {
			yield(Hit[T]{}, err)
			return
		}
		rng, err := rangeOf(s)
		if err != nil {
			yield(Hit[T]{}, refuseFor(err, "index %s: the lookup's value cannot make a key (the limit is %d UTF-16 units)", index, store.MaxKeyUnits))
			return
		}
		cpk := s.partition(pk)
		if err := store.ValidateKeys(cpk, "r"); err != nil {
			yield(Hit[T]{}, fmt.Errorf("xindex: index %s: partition %q: %w", index, naming.Cut(cpk), err))
			return
		}
		c := filter.PK.Eq(cpk).And(filter.RK.InRange(rng), filter.Prop(eventual.VersionProperty).Gt(int64(0)))
		if err := c.Err(); err != nil {
			yield(Hit[T]{}, fmt.Errorf("xindex: index %s: %w", index, err))
			return
		}
		for e, err := range store.All(ctx, x.st.Table(s.table), store.Query{Filter: c.String()}) {
			if err != nil {
				yield(Hit[T]{}, err)
				return
			}
			if !yield(x.decodeHit(s, e)) {
				return
			}
		}
	}
}
