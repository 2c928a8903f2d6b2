package xindex

import (
	"context"
	"iter"
	"strings"

	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Hit is one copy of a global index: what the copy holds (Entity,
// without an ETag), the entity it names (PK, ID) and the entity's version
// it was made from (Version). One found through a write's claim (Claimed)
// is the entity as stored. See model.Hit.
type Hit[T any] = model.Hit[T]

// Fresh is the entity behind a Hit, as stored now, with Stale set when
// the copy was made from an older version. See model.Fresh.
type Fresh[T any] = model.Fresh[T]

// Options tune a View; nil takes the defaults. It has no field: the
// tables of the indexes (model.Feature.In, model.Options.IndexTable), the
// claims' lease and the clock are the model's.
type Options struct{}

// View reads the global indexes of a model as the inter-partition
// secondary index pattern does. It has no Insert, Update or Delete:
// writes are the model's. It is safe for concurrent use.
type View[T any] struct {
	m      *model.Model[T]
	global map[string]model.IndexInfo
	local  map[string]bool
	names  []string
}

// New returns the view of m's global indexes. A nil model, or one that
// declares no global index (model.GlobalUnique, model.GlobalIndex), is
// refused with an error matching store.ErrInvalidInput. It does no I/O.
func New[T any](m *model.Model[T], opts *Options) (*View[T], error) {
	if m == nil {
		return nil, refuse("the model is nil")
	}
	_ = opts // no field yet
	v := &View[T]{m: m, global: map[string]model.IndexInfo{}, local: map[string]bool{}}
	for _, i := range m.Indexes() {
		if !i.Global {
			v.local[i.Name] = true
			continue
		}
		v.global[i.Name] = i
		v.names = append(v.names, i.Name)
	}
	if len(v.global) == 0 {
		return nil, refuse("the model of table %s declares no global index (model.GlobalUnique or model.GlobalIndex): the view reads those", m.Table())
	}
	return v, nil
}

// index checks that name is a global index of the model.
func (v *View[T]) index(name string) (model.IndexInfo, error) {
	if i, ok := v.global[name]; ok {
		return i, nil
	}
	if v.local[name] {
		return model.IndexInfo{}, refuse("index %s is in the entity's partition: read it with patterns/index or model.FindIn", name)
	}
	return model.IndexInfo{}, refuse("no global index %q (global indexes: %s)", name, strings.Join(v.names, ", "))
}

// Find returns the copy under value in unique index: one point read of
// the value's row (two when the row is a claim of a write the engine has
// not copied yet: the entity is then read through it). The Hit may be
// behind its entity, or left by an entity that gave the value up until
// the engine removes it: FindFresh reads the entity. Nothing under the
// value is an error matching store.ErrNotFound.
func (v *View[T]) Find(ctx context.Context, index, value string) (Hit[T], error) {
	i, err := v.index(index)
	if err != nil {
		return Hit[T]{}, err
	}
	if !i.Unique {
		return Hit[T]{}, refuse("index %s is not unique: use FindAll", index)
	}
	for h, err := range v.m.Copies(ctx, index, value) {
		return h, err
	}
	e := store.Errorf(store.CodeResourceNotFound, 404, "xindex: no copy under %s %q", index, value)
	e.Source = store.SourceClient
	return Hit[T]{}, e
}

// FindFresh finds value in unique index (Find) and reads the entity the
// copy names: one point read more. It returns the entity as stored, with
// Stale set when the copy was behind it; a copy whose entity is gone or
// no longer holds the value is an error matching store.ErrNotFound.
func (v *View[T]) FindFresh(ctx context.Context, index, value string) (Fresh[T], error) {
	h, err := v.Find(ctx, index, value)
	if err != nil {
		return Fresh[T]{}, err
	}
	return v.m.Fresh(ctx, h)
}

// Check reads the entity behind a hit of Find, FindAll, Range or Prefix
// (model.Fresh): the entity as stored, Stale set when the copy was behind
// it, or an error matching store.ErrNotFound when the entity is gone or
// no longer holds the value.
func (v *View[T]) Check(ctx context.Context, h Hit[T]) (Fresh[T], error) {
	if _, err := v.index(h.Index); err != nil {
		return Fresh[T]{}, err
	}
	return v.m.Fresh(ctx, h)
}

// FindAll returns the copies under value in index, in the order of their
// entities' keys: one query of the value's partition (a point read for a
// unique index), and one point read per claim met.
func (v *View[T]) FindAll(ctx context.Context, index, value string) iter.Seq2[Hit[T], error] {
	return v.seq(index, func() iter.Seq2[Hit[T], error] { return v.m.Copies(ctx, index, value) })
}

// Range returns the copies of index whose value lies in [from, to) (to ""
// for no upper bound), in value order, then the entities' keys. Each
// value is a partition of its own, so this is a query across partitions
// of the index's table, bounded by the range: the service reads every row
// in it, page by page (model.CopiesRange).
func (v *View[T]) Range(ctx context.Context, index, from, to string) iter.Seq2[Hit[T], error] {
	return v.seq(index, func() iter.Seq2[Hit[T], error] { return v.m.CopiesRange(ctx, index, from, to) })
}

// Prefix returns the copies of index whose value starts with prefix, in
// value order: a query across the partitions of those values, as Range.
func (v *View[T]) Prefix(ctx context.Context, index, prefix string) iter.Seq2[Hit[T], error] {
	return v.seq(index, func() iter.Seq2[Hit[T], error] { return v.m.CopiesPrefix(ctx, index, prefix) })
}

// seq checks the index, then yields the model's lookup.
func (v *View[T]) seq(index string, lookup func() iter.Seq2[Hit[T], error]) iter.Seq2[Hit[T], error] {
	return func(yield func(Hit[T], error) bool) {
		if _, err := v.index(index); err != nil {
			yield(Hit[T]{}, err)
			return
		}
		for h, err := range lookup() {
			if !yield(h, err) || err != nil {
				return
			}
		}
	}
}

// refuse builds a refusal of the view's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "xindex: "+format, args...)
	e.Source = store.SourceClient
	return e
}
