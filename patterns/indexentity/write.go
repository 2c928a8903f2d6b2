package indexentity

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// writeKind is what a write does to the entity.
type writeKind int

const (
	wInsert    writeKind = iota // add; refused if it exists
	wUpdate                     // replace the version the caller read
	wUpsert                     // add or replace whatever is stored
	wDelete                     // delete the version the caller read
	wDeleteKey                  // delete whatever is stored; missing is done
)

func (k writeKind) String() string {
	return [...]string{"insert", "update", "upsert", "delete", "delete"}[k]
}

// write is one logical write: the entity (encoded, except for a delete by
// key), its keys, and the ETag a conditional write is based on.
type write[T any] struct {
	kind   writeKind
	v      *T
	e      store.Entity
	pk, rk string
	etag   store.ETag
}

// Insert adds *v as a new entity and lists it, and stores the new ETag in
// v. An existing entity is an error matching store.ErrAlreadyExists. With
// SamePartition the entity and its lists change in one transaction; with
// the other placements the entity is written now and the lists follow
// through the engine.
func (x *Table[T]) Insert(ctx context.Context, v *T) error {
	w, err := x.prepare(wInsert, v)
	if err != nil {
		return err
	}
	return x.run(ctx, w)
}

// Update replaces the stored entity with *v if it still has the ETag in
// v's etag field (store.ErrPreconditionFailed otherwise; mapper.ErrNoETag
// without one), moves the entity between lists when a listed value
// changed, and stores the new ETag in v.
func (x *Table[T]) Update(ctx context.Context, v *T) error {
	w, err := x.prepare(wUpdate, v)
	if err != nil {
		return err
	}
	if w.etag == "" {
		return fmt.Errorf("indexentity: update: %w", mapper.ErrNoETag)
	}
	return x.run(ctx, w)
}

// Upsert writes *v whatever is stored (adding it, or replacing it and
// moving it between lists), and stores the new ETag in v.
func (x *Table[T]) Upsert(ctx context.Context, v *T) error {
	w, err := x.prepare(wUpsert, v)
	if err != nil {
		return err
	}
	return x.run(ctx, w)
}

// Delete removes *v's entity and its ids from the lists if the entity
// still has the ETag in v's etag field.
func (x *Table[T]) Delete(ctx context.Context, v *T) error {
	w, err := x.prepare(wDelete, v)
	if err != nil {
		return err
	}
	if w.etag == "" {
		return fmt.Errorf("indexentity: delete: %w", mapper.ErrNoETag)
	}
	return x.run(ctx, w)
}

// DeleteKey removes the entity with keys (pk, rk) and its ids from the
// lists, whatever its version. A missing entity is not an error.
func (x *Table[T]) DeleteKey(ctx context.Context, pk, rk string) error {
	if err := store.ValidateKeys(pk, rk); err != nil {
		return err
	}
	return x.run(ctx, write[T]{kind: wDeleteKey, pk: pk, rk: rk})
}

// prepare encodes v and checks its list values before anything is sent.
func (x *Table[T]) prepare(kind writeKind, v *T) (write[T], error) {
	if v == nil {
		var zero T
		return write[T]{}, refuse("%s of a nil %T", kind, &zero)
	}
	e, err := mapper.Encode(v)
	if err != nil {
		return write[T]{}, err
	}
	// A value read through the engine may carry its version in an extra
	// field: the engine writes it itself.
	if _, ok := e.Properties[eventual.VersionProperty]; ok {
		props := make(map[string]any, len(e.Properties))
		for k, pv := range e.Properties {
			if k != eventual.VersionProperty {
				props[k] = pv
			}
		}
		e.Properties = props
	}
	if err := store.ValidateEntity(&e); err != nil {
		return write[T]{}, err
	}
	w := write[T]{kind: kind, v: v, e: e, pk: e.PartitionKey, rk: e.RowKey, etag: mapper.ETagOf(v)}
	if kind != wDelete {
		for i := range x.specs {
			s := &x.specs[i]
			if val := s.value(v); val != "" {
				if _, err := x.refOf(s.name, val, w.pk); err != nil {
					return write[T]{}, err
				}
			}
		}
	}
	return w, nil
}

// run sends a prepared write the way the placement needs.
func (x *Table[T]) run(ctx context.Context, w write[T]) error {
	if x.o.Placement == SamePartition {
		return x.writeSame(ctx, w)
	}
	return x.writeEventual(ctx, w)
}

// valuesOf returns the list values of an entity, one per list ("" when
// not listed); nil for no entity.
func (x *Table[T]) valuesOf(v *T) []string {
	if v == nil {
		return nil
	}
	out := make([]string, len(x.specs))
	for i := range x.specs {
		out[i] = x.specs[i].value(v)
	}
	return out
}

// decodeCur decodes a stored entity and returns its list values.
func (x *Table[T]) decodeCur(cur *store.Entity) ([]string, error) {
	if cur == nil {
		return nil, nil
	}
	var old T
	if err := mapper.Decode(*cur, &old); err != nil {
		return nil, err
	}
	return x.valuesOf(&old), nil
}

// valueAt returns values[i], "" for none.
func valueAt(values []string, i int) string {
	if values == nil {
		return ""
	}
	return values[i]
}

// getCur reads the stored entity: nil when it does not exist.
func getCur(ctx context.Context, tbl store.Table, pk, rk string) (*store.Entity, error) {
	cur, err := tbl.Get(ctx, pk, rk, nil)
	if store.EntityNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &cur, nil
}

// checkCur decides a write against the stored entity of table: the error
// of a write that cannot apply (nothing is sent: a
// *partition.DuplicateError for an existing entity, a
// *partition.ChangedError for one changed or gone since it was read), or
// done for a delete of a missing entity.
func checkCur[T any](table string, w *write[T], cur *store.Entity) (done bool, err error) {
	row := partition.Row{Label: "entity", Index: -1, Kind: store.ActionInsert, RowKey: w.rk}
	switch w.kind {
	case wInsert:
		if cur != nil {
			return false, &partition.DuplicateError{Table: table, Partition: w.pk, Row: row,
				Err: client(store.CodeEntityAlreadyExists, 409, "indexentity: entity (%q, %q) exists already", w.pk, w.rk)}
		}
	case wUpdate, wDelete:
		row.Kind = store.ActionUpdateReplace
		if w.kind == wDelete {
			row.Kind = store.ActionDelete
		}
		if cur == nil {
			return false, &partition.ChangedError{Table: table, Partition: w.pk, Row: row, Missing: true,
				Err: client(store.CodeResourceNotFound, 404, "indexentity: entity (%q, %q) does not exist", w.pk, w.rk)}
		}
		if cur.ETag != w.etag {
			return false, &partition.ChangedError{Table: table, Partition: w.pk, Row: row,
				Err: client(store.CodeUpdateConditionNotSatisfied, 412,
					"indexentity: entity (%q, %q) changed since it was read (ETag %s, not %s)", w.pk, w.rk, cur.ETag, w.etag)}
		}
	case wDeleteKey:
		if cur == nil {
			return true, nil
		}
	}
	return false, nil
}

// client is the package's own refusal, made before anything was sent.
func client(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}

// contention is the error of a write (or step) that lost the race on every
// attempt: it matches ErrContention and partition.ErrConflict (a race:
// nothing applied, try again later), never a changed row or a duplicate,
// and carries the last refusal's *store.Error.
func contention(what string, last error) error {
	var se *store.Error
	if errors.As(last, &se) {
		last = se
	} else {
		last = fmt.Errorf("%w: %w", client(store.CodeUpdateConditionNotSatisfied, 412, "another writer changed the row first"), last)
	}
	return fmt.Errorf("indexentity: %s: %w (%w): %w", what, ErrContention, partition.ErrConflict, last)
}

// contended wraps the last conflict of a write that ran out of attempts.
func (x *Table[T]) contended(w write[T], last error) error {
	return contention(fmt.Sprintf("%s of (%q, %q) lost to concurrent writers %d times", w.kind, w.pk, w.rk, x.o.Attempts), last)
}
