package mapper

import (
	"context"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// MixedBatch is an entity group transaction over entities of several
// registered types in one partition: the guide's way to keep, say, an
// employee and its department's employee count consistent. It checks each
// action when it is added, as Batch does, and writes each entity with its
// discriminator. Over a store.TypedTable (memstore, azstore) the values
// are read when Run sends the transaction, as Batch's are: a value
// changed after it was added goes out as it is then, checked again by
// the backend.
//
// A MixedBatch is not safe for concurrent use.
type MixedBatch struct {
	r *Registry
	t txn
}

// Batch starts an empty transaction on tbl.
func (r *Registry) Batch(tbl store.Table) *MixedBatch { return &MixedBatch{r: r, t: txn{table: tbl}} }

// Len reports the number of actions added.
func (b *MixedBatch) Len() int { return len(b.t.actions) }

// Insert adds an insert of v, a pointer to a registered struct.
func (b *MixedBatch) Insert(v any) error { return b.add(store.ActionInsert, v, false) }

// Update adds a merge or replace of v conditional on its ETag.
func (b *MixedBatch) Update(v any, mode store.UpdateMode) error {
	return b.add(updateKind(mode), v, false)
}

// UpdateUnconditional adds a merge or replace of v whatever the stored version.
func (b *MixedBatch) UpdateUnconditional(v any, mode store.UpdateMode) error {
	return b.add(updateKind(mode), v, true)
}

// Upsert adds an insert-or-merge or insert-or-replace of v.
func (b *MixedBatch) Upsert(v any, mode store.UpdateMode) error {
	return b.add(upsertKind(mode), v, false)
}

// Delete adds a delete of v conditional on its ETag.
func (b *MixedBatch) Delete(v any) error { return b.add(store.ActionDelete, v, false) }

// DeleteUnconditional adds a delete of v whatever the stored version.
func (b *MixedBatch) DeleteUnconditional(v any) error { return b.add(store.ActionDelete, v, true) }

func (b *MixedBatch) add(kind store.ActionKind, v any, unconditional bool) error {
	k, rv, err := b.r.writeTarget(kind.String(), v)
	if err != nil {
		return err
	}
	var e store.Entity
	var src store.PropertySource
	_, typed := driver.Typed(b.t.table)
	switch {
	case kind == store.ActionDelete:
		e.PartitionKey, e.RowKey, err = k.c.keysOf(rv)
	case typed:
		// Over a typed table the backend writes the struct itself, its
		// discriminator included (as Batch does).
		if e.PartitionKey, e.RowKey, err = k.c.keysOf(rv); err == nil {
			err = b.r.checkPrefix(k, e.RowKey)
		}
		src = source{k.c, rv}
	default:
		e, err = b.r.encode(k, rv)
	}
	if err != nil {
		return err
	}
	return b.t.add(kind, e, src, target{k.c, rv}, unconditional)
}

// Run sends the transaction. On success every written value gets its new
// ETag; on failure nothing was written and the *store.Error's Index names
// the failing action (in the order added).
func (b *MixedBatch) Run(ctx context.Context) error { return b.t.run(ctx) }
