package mapper

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit/store"
)

// ErrBatchFull matches the error of an action refused because the batch
// already holds the most actions, or bytes, one transaction may: run it
// and start a new one.
var ErrBatchFull = errors.New("batch is full")

// Batch is a typed entity group transaction: up to 100 writes to one
// partition that succeed or fail together. Each add method checks its
// action at once and refuses it, without adding it, when it would make the
// transaction invalid: a second partition, a 101st action, a RowKey
// already in the batch, a conditional write without an ETag, an entity
// the service would refuse, or a body over 4 MiB. Run sends
// it and stores the new ETags in the values passed by pointer. Over a
// store.TypedTable (memstore, azstore) the values are read when Run sends
// the transaction, straight into its body: a value changed after it was
// added goes out as it is then, checked again by the backend.
//
// A Batch is not safe for concurrent use.
type Batch[T any] struct {
	r *Repository[T]
	t txn
}

// txn is the untyped core of a transaction, shared by Batch and MixedBatch.
type txn struct {
	table   store.Table
	pk      string
	fixed   bool // pk set by a partition handle
	actions []store.Action
	targets []target
	rows    map[string]int
	bytes   int // estimated request body size
}

// target is where an action's new ETag goes.
type target struct {
	c  *codec
	rv reflect.Value
}

// Batch starts an empty transaction.
func (r *Repository[T]) Batch() *Batch[T] { return &Batch[T]{r: r, t: txn{table: r.table}} }

// Len reports the number of actions added.
func (b *Batch[T]) Len() int { return len(b.t.actions) }

// Insert adds an insert of *v.
func (b *Batch[T]) Insert(v *T) error { return b.add(store.ActionInsert, v, false) }

// Update adds a merge or replace of *v conditional on its ETag.
func (b *Batch[T]) Update(v *T, mode store.UpdateMode) error {
	return b.add(updateKind(mode), v, false)
}

// UpdateUnconditional adds a merge or replace of *v whatever the stored version.
func (b *Batch[T]) UpdateUnconditional(v *T, mode store.UpdateMode) error {
	return b.add(updateKind(mode), v, true)
}

// Upsert adds an insert-or-merge or insert-or-replace of *v.
func (b *Batch[T]) Upsert(v *T, mode store.UpdateMode) error {
	k := store.ActionUpsertMerge
	if mode == store.Replace {
		k = store.ActionUpsertReplace
	}
	return b.add(k, v, false)
}

// Delete adds a delete of *v conditional on its ETag.
func (b *Batch[T]) Delete(v *T) error { return b.add(store.ActionDelete, v, false) }

// DeleteUnconditional adds a delete of *v whatever the stored version.
func (b *Batch[T]) DeleteUnconditional(v *T) error { return b.add(store.ActionDelete, v, true) }

func updateKind(mode store.UpdateMode) store.ActionKind {
	if mode == store.Replace {
		return store.ActionUpdateReplace
	}
	return store.ActionUpdateMerge
}

// upsertKind is the action of an upsert in mode.
func upsertKind(mode store.UpdateMode) store.ActionKind {
	if mode == store.Replace {
		return store.ActionUpsertReplace
	}
	return store.ActionUpsertMerge
}

func (b *Batch[T]) add(kind store.ActionKind, v *T, unconditional bool) error {
	var (
		e   store.Entity
		rv  reflect.Value
		err error
	)
	if kind == store.ActionDelete || b.r.typed != nil {
		// Over a typed table the backend writes the struct itself.
		e, rv, err = b.r.encodeKeys(v)
	} else {
		e, rv, err = b.r.encode(v)
	}
	if err != nil {
		return err
	}
	var src store.PropertySource
	if kind != store.ActionDelete && b.r.typed != nil {
		src = source{b.r.c, rv}
	}
	return b.t.add(kind, e, src, target{b.r.c, rv}, unconditional)
}

// Run sends the transaction. On success every written value passed by
// pointer gets its new ETag; on failure nothing was written and the
// *store.Error's Index names the failing action (in the order added).
// An empty batch does nothing.
func (b *Batch[T]) Run(ctx context.Context) error { return b.t.run(ctx) }

// ifMatch returns the ETag for a conditional write of rv, or ErrNoETag.
func (c *codec) ifMatch(rv reflect.Value) (store.ETag, error) {
	etag := c.etagOf(rv)
	if etag == "" {
		if c.etag == nil {
			return "", &Error{Type: c.typ, Msg: "no field tagged etag (use the Unconditional form)", Err: ErrNoETag}
		}
		return "", &Error{Type: c.typ, Msg: c.etag.goPath + " is empty: read the entity first, or use the Unconditional form", Err: ErrNoETag}
	}
	return etag, nil
}

func (b *txn) add(kind store.ActionKind, e store.Entity, src store.PropertySource, tg target, unconditional bool) error {
	if len(b.actions) == store.MaxBatchActions {
		return fmt.Errorf("mapper: %w: %s of RowKey %s refused: %w", ErrBatchFull, kind, quote(e.RowKey),
			refuseCode(store.CodeInvalidInput, 400, "a transaction holds at most %d actions", store.MaxBatchActions))
	}
	if (len(b.actions) > 0 || b.fixed) && e.PartitionKey != b.pk {
		return fmt.Errorf("mapper: %s of PartitionKey %s refused: %w", kind, quote(e.PartitionKey),
			refuseCode(store.CodeCommandsInBatchActOnDifferentPartitions, 400,
				"this batch is on PartitionKey %s, and a transaction covers one partition", quote(b.pk)))
	}
	if i, dup := b.rows[e.RowKey]; dup {
		return fmt.Errorf("mapper: %s of RowKey %s refused: %w", kind, quote(e.RowKey),
			refuseCode(store.CodeInvalidDuplicateRow, 400,
				"action %d already writes it, and an entity may appear once per transaction", i))
	}
	if kind != store.ActionDelete {
		var err error
		if src != nil {
			_, err = store.WriteSource(e.PartitionKey, e.RowKey, src, false, nil)
		} else {
			err = store.ValidateEntity(&e)
		}
		if err != nil {
			return fmt.Errorf("mapper: %s of RowKey %s refused: %w", kind, quote(e.RowKey), err)
		}
	}
	a := store.Action{Kind: kind, Entity: e, Source: src}
	size := store.ActionWireSizeIn(b.table, &a)
	if b.bytes+size >= store.MaxBatchBytes {
		return fmt.Errorf("mapper: %w: %s of RowKey %s refused: %w", ErrBatchFull, kind, quote(e.RowKey),
			refuseCode(store.CodeRequestBodyTooLarge, 413,
				"the transaction body would reach about %d bytes, over the service's limit of %d", b.bytes+size, store.MaxBatchBytes))
	}
	if kind.NeedsIfMatch() {
		a.IfMatch = store.ETagAny
		if !unconditional {
			var err error
			if a.IfMatch, err = tg.c.ifMatch(tg.rv); err != nil {
				return err
			}
		}
	}
	if b.rows == nil {
		b.rows = make(map[string]int)
	}
	b.pk = e.PartitionKey
	b.rows[e.RowKey] = len(b.actions)
	b.bytes += size
	b.actions = append(b.actions, a)
	b.targets = append(b.targets, tg)
	return nil
}

func (b *txn) run(ctx context.Context) error {
	if len(b.actions) == 0 {
		return nil
	}
	res, err := b.table.Transact(ctx, b.actions)
	if err != nil {
		return err
	}
	for i, tg := range b.targets {
		if b.actions[i].Kind == store.ActionDelete || i >= len(res) {
			continue
		}
		if err := tg.c.setMeta(tg.rv, res[i].ETag); err != nil {
			return err
		}
	}
	return nil
}
