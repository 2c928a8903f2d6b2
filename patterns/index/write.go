package index

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// maxRounds bounds the read-and-retry rounds of an unconditional write
// under contention.
const maxRounds = 8

// Insert adds *v and its index copies in one transaction, and stores the
// entity's new ETag in v. An existing entity, or a unique value another
// entity holds, is a *partition.DuplicateError (partition.ErrDuplicate,
// store.ErrAlreadyExists; IndexName and Value set for a value). Nothing
// is written on a refusal.
func (x *Table[T]) Insert(ctx context.Context, v *T) error {
	if _, typed := x.table.(store.TypedTable); typed && v != nil {
		acts, err := x.typedInserts(v)
		if err != nil {
			return err
		}
		return x.commit(ctx, v, acts)
	}
	e, err := encode(v)
	if err != nil {
		return err
	}
	cs, err := x.copies(v, &e)
	if err != nil {
		return err
	}
	acts := make([]store.Action, 1, 1+len(cs))
	acts[0] = store.Action{Kind: store.ActionInsert, Entity: e}
	for _, c := range cs {
		acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: c})
	}
	return x.commit(ctx, v, acts)
}

// Update replaces the stored entity with *v if it still has the ETag in
// v's etag field (a *partition.ChangedError otherwise, matching
// partition.ErrChanged and store.ErrPreconditionFailed; mapper.ErrNoETag
// without one), moves the copies whose values changed and refreshes the
// others, all in one transaction, and stores the new ETag in v.
func (x *Table[T]) Update(ctx context.Context, v *T) error {
	e, cur, err := x.current(ctx, v, "update")
	if err != nil {
		return err
	}
	return x.replace(ctx, v, e, cur)
}

// Upsert writes *v whatever is stored (creating it, or replacing it and
// moving its copies), and stores the new ETag in v. It reads the stored
// entity first and retries when another writer changes it in between.
func (x *Table[T]) Upsert(ctx context.Context, v *T) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	var last error
	for range maxRounds {
		cur, err := x.table.Get(ctx, e.PartitionKey, e.RowKey, nil)
		switch {
		case store.EntityNotFound(err):
			last = x.Insert(ctx, v)
			if !errors.Is(last, store.ErrAlreadyExists) || taken(last) {
				return last
			}
		case err != nil:
			return err
		default:
			last = x.replace(ctx, v, e, cur)
			if !errors.Is(last, partition.ErrChanged) {
				return last
			}
		}
	}
	return contended("upsert", e, last)
}

// taken reports the duplicate of a unique value (not of the entity, which
// Upsert replaces).
func taken(err error) bool {
	var de *partition.DuplicateError
	return errors.As(err, &de) && de.IndexName != ""
}

// replace writes e over cur (the stored entity, read with its ETag), with
// the copies moved.
func (x *Table[T]) replace(ctx context.Context, v *T, e, cur store.Entity) error {
	var old T
	if err := mapper.Decode(cur, &old); err != nil {
		return err
	}
	oldCopies, err := x.copies(&old, &cur)
	if err != nil {
		return err
	}
	newCopies, err := x.copies(v, &e)
	if err != nil {
		return err
	}
	acts := []store.Action{{Kind: store.ActionUpdateReplace, Entity: e, IfMatch: cur.ETag}}
	for _, c := range oldCopies {
		if !hasRow(newCopies, c.RowKey) {
			acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: e.PartitionKey, RowKey: c.RowKey}, IfMatch: store.ETagAny})
		}
	}
	for _, c := range newCopies {
		kind := store.ActionInsert // a new value: refused if taken
		if hasRow(oldCopies, c.RowKey) {
			kind = store.ActionUpsertReplace // the same value: refresh
		}
		acts = append(acts, store.Action{Kind: kind, Entity: c})
	}
	return x.commit(ctx, v, acts)
}

// Delete removes *v's entity and its copies if the entity still has the
// ETag in v's etag field.
func (x *Table[T]) Delete(ctx context.Context, v *T) error {
	_, cur, err := x.current(ctx, v, "delete")
	if err != nil {
		return err
	}
	return x.remove(ctx, cur)
}

// current reads the stored entity of *v for op ("update" or "delete"),
// which may go on only if it still has the ETag in v's etag field:
// mapper.ErrNoETag without one, store.ErrPreconditionFailed when it
// changed. It returns *v encoded and the stored row.
func (x *Table[T]) current(ctx context.Context, v *T, op string) (e, cur store.Entity, err error) {
	etag := mapper.ETagOf(v)
	if etag == "" {
		return e, cur, fmt.Errorf("index: %s: %w", op, mapper.ErrNoETag)
	}
	if e, err = encode(v); err != nil {
		return e, cur, err
	}
	if cur, err = x.table.Get(ctx, e.PartitionKey, e.RowKey, nil); err != nil {
		var se *store.Error
		if store.EntityNotFound(err) && errors.As(err, &se) {
			return e, cur, x.changed(e, op, true, se)
		}
		return e, cur, err
	}
	if cur.ETag != etag {
		se := store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
			"index: entity (%q, %q) changed since it was read (ETag %s, not %s)", e.PartitionKey, e.RowKey, cur.ETag, etag)
		se.Source = store.SourceClient
		return e, cur, x.changed(e, op, false, se)
	}
	return e, cur, nil
}

// changed is the error of a write conditional on the caller's ETag whose
// entity changed (or went away) since it was read.
func (x *Table[T]) changed(e store.Entity, op string, missing bool, se *store.Error) error {
	kind := store.ActionUpdateReplace
	if op == "delete" {
		kind = store.ActionDelete
	}
	return &partition.ChangedError{Table: x.table.Name(), Partition: e.PartitionKey,
		Row: partition.Row{Label: "entity", Kind: kind, RowKey: e.RowKey}, Missing: missing, Err: se}
}

// contended is the error of an unconditional write that lost the race for
// the entity on every round: a race (partition.ErrConflict), never a
// changed row, with the last refusal's *store.Error.
func contended(op string, e store.Entity, last error) error {
	var se *store.Error
	if errors.As(last, &se) {
		last = se
	}
	return fmt.Errorf("index: %s of (%q, %q): the entity kept changing: %w: %w", op, e.PartitionKey, e.RowKey, partition.ErrConflict, last)
}

// DeleteKey removes the entity with keys (pk, rk) and its copies,
// whatever its version. A missing entity is not an error.
func (x *Table[T]) DeleteKey(ctx context.Context, pk, rk string) error {
	var last error
	for range maxRounds {
		cur, err := x.table.Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		last = x.remove(ctx, cur)
		if !errors.Is(last, partition.ErrChanged) {
			return last
		}
	}
	return contended("delete", store.Entity{PartitionKey: pk, RowKey: rk}, last)
}

// remove deletes cur (conditional on its ETag) and its copies.
func (x *Table[T]) remove(ctx context.Context, cur store.Entity) error {
	var old T
	if err := mapper.Decode(cur, &old); err != nil {
		return err
	}
	cs, err := x.copies(&old, &cur)
	if err != nil {
		return err
	}
	acts := []store.Action{{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: cur.PartitionKey, RowKey: cur.RowKey}, IfMatch: cur.ETag}}
	for _, c := range cs {
		acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: cur.PartitionKey, RowKey: c.RowKey}, IfMatch: store.ETagAny})
	}
	return x.commit(ctx, nil, acts)
}

// commit runs the transaction and maps a refusal to the failing row: the
// entity (a DuplicateError of an existing one, a ChangedError of one that
// changed or went away, its own code otherwise), a unique copy
// (DuplicateError). A delete of a copy that is missing (an index added
// after the entity was written) is dropped and the rest sent again. On
// success the entity's ETag goes into v.
func (x *Table[T]) commit(ctx context.Context, v *T, acts []store.Action) error {
	for {
		res, err := x.table.Transact(ctx, acts)
		if err == nil {
			if v != nil {
				return mapper.SetETag(v, res[0].ETag)
			}
			return nil
		}
		i := store.Index(err)
		var se *store.Error
		if i < 0 || i >= len(acts) || errors.Is(err, store.ErrUnknownOutcome) || !errors.As(err, &se) {
			return err
		}
		a := acts[i]
		if i == 0 {
			c := *se
			c.Index = -1
			r := partition.Row{Label: "entity", Index: 0, Kind: a.Kind, RowKey: a.Entity.RowKey}
			switch {
			case a.Kind == store.ActionInsert && errors.Is(err, store.ErrAlreadyExists):
				return &partition.DuplicateError{Table: x.table.Name(), Partition: a.Entity.PartitionKey, Row: r, Err: &c}
			case a.IfMatch != "" && (c.Status == 412 || store.EntityNotFound(&c)):
				return &partition.ChangedError{Table: x.table.Name(), Partition: a.Entity.PartitionKey, Row: r, Missing: c.Status == 404, Err: &c}
			}
			return &c
		}
		switch {
		case a.Kind == store.ActionDelete && store.EntityNotFound(err):
			acts = slices.Delete(slices.Clone(acts), i, i+1)
			continue
		case a.Kind == store.ActionInsert && errors.Is(err, store.ErrAlreadyExists):
			s := x.specOfCopy(a.Entity.RowKey)
			name, value := "?", a.Entity.RowKey
			if s != nil {
				name, value = s.name, valueOfCopy(a.Entity.RowKey)
			}
			return &partition.DuplicateError{Table: x.table.Name(), Partition: a.Entity.PartitionKey,
				Row:       partition.Row{Label: "index " + name, Index: i, Kind: a.Kind, RowKey: a.Entity.RowKey},
				IndexName: name, Value: value, Err: se}
		}
		return fmt.Errorf("index: copy %q: %w", a.Entity.RowKey, err)
	}
}

// valueOfCopy reads the value out of a copy's RowKey.
func valueOfCopy(rk string) string {
	parts, err := splitKey(rk)
	if err != nil || len(parts) < 2 {
		return rk
	}
	return parts[1]
}

// encode maps v to its entity.
func encode[T any](v *T) (store.Entity, error) {
	if v == nil {
		var zero T
		return store.Entity{}, refuse("nil %T", &zero)
	}
	return mapper.Encode(v)
}

// hasRow reports whether rows holds one with RowKey rk.
func hasRow(rows []store.Entity, rk string) bool {
	for i := range rows {
		if rows[i].RowKey == rk {
			return true
		}
	}
	return false
}
