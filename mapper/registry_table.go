package mapper

import (
	"context"
	"iter"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// RegistryTable is a Registry bound to one table: the typed API of a
// table that holds several kinds, with the same conditions (Cond) as a
// Repository. Values are pointers to registered structs; reads return a
// registered struct (a T, not a *T) for a type switch. It is safe for
// concurrent use once the registry's types are registered.
type RegistryTable struct {
	r     *Registry
	table store.Table
}

// On binds the registry to table name of st. It does no I/O.
func (r *Registry) On(st store.Store, table string) *RegistryTable {
	return &RegistryTable{r: r, table: st.Table(table)}
}

// Table returns the underlying table.
func (t *RegistryTable) Table() store.Table { return t.table }

// Get reads the entity with keys (pk, rk) as its registered type. A
// missing entity is an error matching store.ErrNotFound, one of an unknown
// kind ErrUnknownKind.
func (t *RegistryTable) Get(ctx context.Context, pk, rk string) (any, error) {
	e, err := t.table.Get(ctx, pk, rk, nil)
	if err != nil {
		return nil, err
	}
	return t.r.Decode(e)
}

// Insert inserts v with its discriminator and stores the new ETag in v.
func (t *RegistryTable) Insert(ctx context.Context, v any) error {
	if typed, ok := driver.Typed(t.table); ok {
		return t.r.writeTyped(ctx, typed, store.ActionInsert, v, false)
	}
	return t.r.write(v, func(e store.Entity, _ store.ETag) (store.ETag, error) { return t.table.Insert(ctx, e) })
}

// Upsert inserts v or merges/replaces the stored entity.
func (t *RegistryTable) Upsert(ctx context.Context, v any, mode store.UpdateMode) error {
	if typed, ok := driver.Typed(t.table); ok {
		return t.r.writeTyped(ctx, typed, upsertKind(mode), v, false)
	}
	return t.r.write(v, func(e store.Entity, _ store.ETag) (store.ETag, error) { return t.table.Upsert(ctx, e, mode) })
}

// Update merges or replaces the stored entity if it still has the ETag in
// v's etag field (ErrNoETag without one), and stores the new ETag in v.
func (t *RegistryTable) Update(ctx context.Context, v any, mode store.UpdateMode) error {
	if typed, ok := driver.Typed(t.table); ok {
		return t.r.writeTyped(ctx, typed, updateKind(mode), v, true)
	}
	return t.r.writeIfMatch(v, func(e store.Entity, etag store.ETag) (store.ETag, error) {
		return t.table.Update(ctx, e, mode, etag)
	})
}

// UpdateUnconditional merges or replaces the stored entity whatever its
// version.
func (t *RegistryTable) UpdateUnconditional(ctx context.Context, v any, mode store.UpdateMode) error {
	if typed, ok := driver.Typed(t.table); ok {
		return t.r.writeTyped(ctx, typed, updateKind(mode), v, false)
	}
	return t.r.write(v, func(e store.Entity, _ store.ETag) (store.ETag, error) {
		return t.table.Update(ctx, e, mode, store.ETagAny)
	})
}

// Delete removes v's entity if it still has the ETag in v's etag field.
func (t *RegistryTable) Delete(ctx context.Context, v any) error {
	return t.r.writeIfMatch(v, func(e store.Entity, etag store.ETag) (store.ETag, error) {
		return "", t.table.Delete(ctx, e.PartitionKey, e.RowKey, etag)
	})
}

// DeleteKey removes the entity with keys (pk, rk) whatever its version.
func (t *RegistryTable) DeleteKey(ctx context.Context, pk, rk string) error {
	return t.table.Delete(ctx, pk, rk, store.ETagAny)
}

// Query returns every entity matching all of where, each as its
// registered type, across every page. Only rows of the registered kinds
// are requested (when their conditions fit the service's 15 comparisons),
// so rows of other kinds sharing the table stay out. Build conditions with
// Where[any] or a typed condition's Any. An entity that does not decode
// yields its error and the sequence goes on if the loop continues; a
// failed request ends it.
func (t *RegistryTable) Query(ctx context.Context, where ...Cond[any]) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		c := and(where)
		if err := c.Err(); err != nil {
			yield(nil, err)
			return
		}
		f := c.c
		if kinds := t.r.kindsCond(); kinds.Err() == nil && kinds.String() != "" {
			if both := filter.And(f, kinds); both.Err() == nil {
				f = both
			}
		}
		if typed, ok := driver.Typed(t.table); ok {
			t.r.queryTyped(ctx, typed, store.Query{Filter: f.String()}, yield)
			return
		}
		for e, err := range store.All(ctx, t.table, store.Query{Filter: f.String()}) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(t.r.Decode(e)) {
				return
			}
		}
	}
}

// Batch starts a transaction over entities of the registered types.
func (t *RegistryTable) Batch() *MixedBatch { return t.r.Batch(t.table) }

// kindsCond selects the rows of every registered kind.
func (r *Registry) kindsCond() filter.Cond {
	var conds []filter.Cond
	for _, k := range r.kinds {
		if r.prop != "" {
			conds = append(conds, filter.Prop(r.prop).Eq(k.kind))
		} else {
			conds = append(conds, filter.RK.HasPrefix(k.kind))
		}
	}
	if len(conds) == 0 {
		return filter.Cond{}
	}
	return filter.Or(conds...)
}

// writeTyped is a write of v on the table's typed lane, as a Repository
// writes: the struct, its discriminator included, is encoded once into
// the backend's own form (store.TypedTable.Write). conditional sends v's
// ETag as If-Match (ErrNoETag without one); an unconditional update sends
// "*". The checks are write's and writeIfMatch's.
func (r *Registry) writeTyped(ctx context.Context, typed store.TypedTable, kind store.ActionKind, v any, conditional bool) error {
	k, rv, err := r.writeTarget("write", v)
	if err != nil {
		return err
	}
	a := store.Action{Kind: kind, Source: source{k.c, rv}}
	if kind.NeedsIfMatch() {
		a.IfMatch = store.ETagAny
		if conditional {
			if a.IfMatch, err = k.c.ifMatch(rv); err != nil {
				return err
			}
		}
	}
	if a.Entity.PartitionKey, a.Entity.RowKey, err = k.c.keysOf(rv); err != nil {
		return err
	}
	if err := r.checkPrefix(k, a.Entity.RowKey); err != nil {
		return err
	}
	etag, err := typed.Write(ctx, a)
	if err != nil {
		return err
	}
	return k.c.setMeta(rv, etag)
}

// writeIfMatch is write for a conditional write: the ETag of v.
func (r *Registry) writeIfMatch(v any, do func(store.Entity, store.ETag) (store.ETag, error)) error {
	k, rv, err := r.writeTarget("write", v)
	if err != nil {
		return err
	}
	etag, err := k.c.ifMatch(rv)
	if err != nil {
		return err
	}
	e, err := r.encode(k, rv)
	if err != nil {
		return err
	}
	got, err := do(e, etag)
	if err != nil {
		return err
	}
	if got == "" {
		return nil
	}
	return k.c.setMeta(rv, got)
}
