// Package onetomany keeps a parent entity and its children side by side in
// the parent's partition, under compound RowKeys, so that the family is
// written in one entity group transaction and read with one range query:
// the design guide's compound key pattern applied to a one-to-many
// relationship (an employee and the employee's yearly reviews).
//
// The parent's RowKey is a compound key (keys.Join("emp", id)) and every
// child's extends it (keys.Join("emp", id, "review", year)), so the family
// is the contiguous range from the parent's key to the end of its
// extensions. Both types compute their keys (TableKeys, or pk and rk
// fields) and declare their kind with a discriminator on the same property
// (mapper.Kind{Property: "Kind", Value: "employee"}): a partition holds
// other rows too, and every read here asks for the two kinds only.
//
//	fam, err := onetomany.New[Employee, Review](st, "Employees",
//		func(r *Review) Employee { return Employee{Department: r.Department, ID: r.EmployeeID} })
//	err = fam.Insert(ctx, &emp, &r2024, &r2025) // one transaction
//	f, err := fam.Get(ctx, Employee{Department: "Sales", ID: "000123"}) // one range query
//	err = fam.Add(ctx, &emp, &r2026) // fenced by the parent's ETag
//
// The parent's row is the family's head (a partition.Head): every write
// of a family is one transaction on it, through the head's commit loop,
// conditional on the parent's state as read (and on the value's ETag when
// it holds one), so the parent fences the family: writers never
// interleave, a child is never added to a parent that is gone, and a
// write whose answer was lost is resolved exactly by the head. A Delete
// of more than one transaction marks the parent in its first, so that no
// writer adds to the family after it and any Delete finishes it.
// docs/patterns/onetomany.md has the costs and the failure cases.
package onetomany

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// MaxChildrenPerWrite is how many children one write carries: a
// transaction holds store.MaxBatchActions actions and the parent takes one.
const MaxChildrenPerWrite = store.MaxBatchActions - 1

// Family is a parent and its children as read together, the children in
// the order of their RowKeys.
type Family[P, C any] struct {
	Parent   P
	Children []C
}

// Table keeps parents of type P and their children of type C in one
// table. It is safe for concurrent use.
type Table[P, C any] struct {
	table    store.Table
	reg      *mapper.Registry
	parentOf func(*C) P
	prop     string
	pKind    string
	cKind    string
	mark     string // the discriminator of a parent whose family is being deleted
}

// New returns the families of P and C in table name of st. parentOf
// returns the parent of a child with its key fields set (the rest may be
// zero). It does no I/O. It fails, naming the type, when P or C cannot be
// mapped, when either declares no discriminator, when they declare
// different discriminator properties or the same value, and with an error
// matching store.ErrInvalidInput when st (or the pointer it holds) or
// parentOf is nil.
func New[P, C any](st store.Store, table string, parentOf func(*C) P) (*Table[P, C], error) {
	if isNil(st) {
		return nil, refuse("the store is nil: give the store the table lives in")
	}
	if err := store.ValidateTableName(table); err != nil {
		return nil, err
	}
	if parentOf == nil {
		return nil, refuse("parentOf is nil: give the function that returns a child's parent")
	}
	pk, ck := mapper.KindOf[P](), mapper.KindOf[C]()
	var p P
	var c C
	switch {
	case pk == nil || pk.Property == "":
		return nil, refuse("%T declares no discriminator: declare one with TableKind (mapper.Kind{Property: \"Kind\", Value: ...}), so that reads of a family tell it from its children and from other rows", p)
	case ck == nil || ck.Property == "":
		return nil, refuse("%T declares no discriminator: declare one with TableKind (mapper.Kind{Property: %q, Value: ...})", c, pk.Property)
	case pk.Property != ck.Property:
		return nil, refuse("%T tells its kind by %q and %T by %q: the two must share one discriminator property", p, pk.Property, c, ck.Property)
	case pk.Value == ck.Value:
		return nil, refuse("%T and %T both declare %s = %q: their kinds must differ", p, c, pk.Property, pk.Value)
	case ck.Value == markOf(pk.Value):
		return nil, refuse("%T declares %s = %q, the value that marks a %T whose family is being deleted: choose another", c, ck.Property, ck.Value, p)
	}
	reg, err := mapper.NewPropertyRegistry(pk.Property)
	if err != nil {
		return nil, err
	}
	if err := mapper.Register[P](reg, pk.Value); err != nil {
		return nil, err
	}
	if err := mapper.Register[C](reg, ck.Value); err != nil {
		return nil, err
	}
	return &Table[P, C]{table: st.Table(table), reg: reg, parentOf: parentOf, prop: pk.Property, pKind: pk.Value, cKind: ck.Value, mark: markOf(pk.Value)}, nil
}

// markOf is the discriminator value that marks a parent of kind pKind
// whose family is being deleted: Delete of a family larger than one
// transaction replaces the parent's row by this mark in its first
// transaction, so that no writer adds to the family after it.
func markOf(pKind string) string { return "onetomany-deleting:" + pKind }

// familyCond selects the rows of the family of the parent (pk, rk) with
// family range rng: the parent (as itself or as the mark of a pending
// delete) and its children.
func (t *Table[P, C]) familyCond(pk, rk string, rng keys.Range) filter.Cond {
	cond := filter.PK.Eq(pk).And(filter.RK.Ge(rk))
	if rng.HasUpper {
		cond = cond.And(filter.RK.Lt(rng.Upper))
	}
	return cond.And(filter.Or(t.reg.Cond(t.pKind), t.reg.Cond(t.cKind), filter.Prop(t.prop).Eq(t.mark)))
}

// Table returns the underlying table.
func (t *Table[P, C]) Table() store.Table { return t.table }

// Registry returns the registry of the two types, for reads of your own
// (RegistryTable.Query decodes each row as its type).
func (t *Table[P, C]) Registry() *mapper.Registry { return t.reg }

// isNil reports whether v is nil or holds a nil pointer, map, slice,
// function or channel: a value whose methods cannot be called.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// refuse builds a refusal of the package's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "onetomany: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// familyRange returns the RowKey range of the children of the parent with
// RowKey rk: every compound key extending it.
func familyRange(rk string) (keys.Range, error) {
	parts, err := keys.Split(rk)
	if err == nil {
		var again string
		if again, err = keys.Join(parts...); err == nil && again != rk {
			err = fmt.Errorf("it is not in keys.Join's canonical form")
		}
	}
	if err != nil {
		return keys.Range{}, refuse("parent RowKey %q is not a compound key made with keys.Join (%v): its children's keys must extend it", rk, err)
	}
	return keys.PrefixOf(parts...)
}

// parentKeys returns the keys of a parent value.
func (t *Table[P, C]) parentKeys(p *P) (store.Entity, error) {
	if p == nil {
		var zero P
		return store.Entity{}, refuse("nil %T", &zero)
	}
	return t.reg.Encode(p)
}

// member is one encoded row of a family write.
type member struct {
	e     store.Entity
	value any // the pointer whose etag field receives the new ETag
}

// children encodes the children of the parent with keys (pk, rk), checking
// that each belongs to it and that they fit one transaction with it.
func (t *Table[P, C]) children(pk, rk string, cs []*C) ([]member, error) {
	if len(cs) > MaxChildrenPerWrite {
		return nil, refuse("%d children in one write: a transaction holds %d actions and the parent takes one, so at most %d", len(cs), store.MaxBatchActions, MaxChildrenPerWrite)
	}
	rng, err := familyRange(rk)
	if err != nil {
		return nil, err
	}
	out := make([]member, 0, len(cs))
	for i, c := range cs {
		if c == nil {
			return nil, refuse("child %d is nil", i)
		}
		e, err := t.reg.Encode(c)
		if err != nil {
			return nil, fmt.Errorf("onetomany: child %d: %w", i, err)
		}
		par := t.parentOf(c)
		pe, err := t.reg.Encode(&par)
		if err != nil {
			return nil, fmt.Errorf("onetomany: parent of child %d: %w", i, err)
		}
		if pe.PartitionKey != pk || pe.RowKey != rk {
			return nil, refuse("child %d (%q, %q) belongs to parent (%q, %q), not to (%q, %q)", i, e.PartitionKey, e.RowKey, pe.PartitionKey, pe.RowKey, pk, rk)
		}
		if e.PartitionKey != pk || !rng.Contains(e.RowKey) {
			return nil, refuse("child %d has keys (%q, %q): a child of (%q, %q) must be in its partition under a RowKey extending the parent's (keys.Join(parent parts..., child parts...))", i, e.PartitionKey, e.RowKey, pk, rk)
		}
		out = append(out, member{e: e, value: c})
	}
	return out, nil
}

// Get reads the family of the parent whose key fields key holds: one range
// query (one request per page of the family). A missing parent is an
// error matching store.ErrNotFound, even when children of it remain; so
// is a family whose delete is pending (a Delete of more than one
// transaction began and has not finished), which matches ErrDeletePending
// too.
func (t *Table[P, C]) Get(ctx context.Context, key P) (Family[P, C], error) {
	var f Family[P, C]
	pe, err := t.parentKeys(&key)
	if err != nil {
		return f, err
	}
	rng, err := familyRange(pe.RowKey)
	if err != nil {
		return f, err
	}
	found := false
	cond := t.familyCond(pe.PartitionKey, pe.RowKey, rng)
	for e, err := range store.All(ctx, t.table, store.Query{Filter: cond.String()}) {
		if err != nil {
			return f, err
		}
		if e.RowKey == pe.RowKey && e.Properties[t.prop] == t.mark {
			return Family[P, C]{}, t.pending(pe, store.CodeResourceNotFound, 404)
		}
		v, err := t.reg.Decode(e)
		if err != nil {
			return f, err
		}
		switch x := v.(type) {
		case P:
			if e.RowKey != pe.RowKey {
				return f, fmt.Errorf("onetomany: %w: row (%q, %q) inside the family of %q is a %T, not a child", mapper.ErrWrongKind, e.PartitionKey, e.RowKey, pe.RowKey, x)
			}
			f.Parent, found = x, true
		case C:
			if e.RowKey == pe.RowKey {
				return f, fmt.Errorf("onetomany: %w: the parent's row (%q, %q) is a %T", mapper.ErrWrongKind, e.PartitionKey, e.RowKey, x)
			}
			f.Children = append(f.Children, x)
		}
	}
	if !found {
		return f, store.Errorf(store.CodeResourceNotFound, 404, "onetomany: no parent (%q, %q) in table %s", pe.PartitionKey, pe.RowKey, t.table.Name())
	}
	return f, nil
}

// Children returns the children of the parent whose key fields key holds,
// in RowKey order, page by page, without reading the parent.
func (t *Table[P, C]) Children(ctx context.Context, key P) iter.Seq2[C, error] {
	return func(yield func(C, error) bool) {
		var zero C
		pe, err := t.parentKeys(&key)
		if err != nil {
			yield(zero, err)
			return
		}
		rng, err := familyRange(pe.RowKey)
		if err != nil {
			yield(zero, err)
			return
		}
		cond := filter.PK.Eq(pe.PartitionKey).And(filter.RK.InRange(rng), t.reg.Cond(t.cKind))
		for e, err := range store.All(ctx, t.table, store.Query{Filter: cond.String()}) {
			if err != nil {
				yield(zero, err)
				return
			}
			var c C
			if err := mapper.Decode(e, &c); !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// errNoParent reports a family write whose parent is missing.
var errNoParent = errors.New("onetomany: the parent does not exist")

// ErrDeletePending matches the errors about a family whose delete has
// begun and not finished: a Delete of more than one transaction marked
// the parent in its first transaction and deleted part of the children.
// The family is deleted as far as every reader and writer is concerned
// (Get finds no parent, Add, Remove and Update are refused); Delete, by
// anyone, finishes it.
var ErrDeletePending = errors.New("onetomany: a delete of the family is pending")

// pending is the error of a read or write that met the mark of a pending
// delete on the parent: it matches ErrDeletePending and the store error of
// the given code and status (a missing parent for reads and fenced
// writes, an existing one for Insert).
func (t *Table[P, C]) pending(pe store.Entity, code string, status int) error {
	e := store.Errorf(code, status, "onetomany: parent (%q, %q) of table %s: its family is being deleted: call Delete to finish it",
		pe.PartitionKey, pe.RowKey, t.table.Name())
	e.Source = store.SourceClient
	return fmt.Errorf("%w: %w", ErrDeletePending, e)
}

// DeletePendingError reports a Delete that marked the family as being
// deleted (or found it marked) and stopped before finishing: the context
// ended, or the store kept failing. The family is deleted as far as every
// reader and writer is concerned, no writer can add to it, and Delete
// again (with or without the parent's ETag, by anyone) finishes it. It
// matches ErrDeletePending, and Err (errors.Is(err, store.ErrThrottled),
// context.Canceled, ...).
type DeletePendingError struct {
	Table, PartitionKey, RowKey string
	// Deleted is how many rows of the family this call deleted, counted
	// from the transactions whose success it learned (from the service's
	// answer, or from the store's read-back of a lost answer).
	Deleted int
	// Remaining is how many rows of the family were left when it was last
	// read or written, the marked parent included; -1 when not known.
	Remaining int
	// Err is why the call stopped.
	Err error
}

func (e *DeletePendingError) Error() string {
	left := "an unknown number of rows remain"
	if e.Remaining >= 0 {
		left = fmt.Sprintf("%d rows remain, the marked parent included", e.Remaining)
	}
	return fmt.Sprintf("onetomany: delete of the family of (%q, %q) in table %s is pending: this call deleted %d rows and %s; no writer can add to the family, and Delete again finishes it: %v",
		e.PartitionKey, e.RowKey, e.Table, e.Deleted, left, e.Err)
}

// Unwrap returns why the call stopped.
func (e *DeletePendingError) Unwrap() error { return e.Err }

// Is matches ErrDeletePending.
func (e *DeletePendingError) Is(target error) bool { return target == ErrDeletePending }
