package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// The entity's head row. Every write of an entity is one transaction on
// a partition.Head of its own, at HeadKey(rk): the head row (which holds
// whether the entity exists and the RowKeys of its copies, beside the
// head's default TkHeadVersion and TkHeadWriters), the entity
// and its copies. The head's commit loop (partition.Head.Run) reads the
// head, builds the transaction, commits and decides: a writer that got in
// first makes the write read again and try again, and a commit whose
// answer was lost is resolved exactly by the head, never sent again. The
// head sits outside the entities' prefix and the copies' keys, so that
// reads of the entities (Get, the Repository) never see it; after a
// Delete it stays, marking the entity gone, so that the entity's next
// writers go on from its version and history.
const (
	// liveProperty is true on the head of an entity that exists.
	liveProperty = "TkLive"
	// copyProperty prefixes the properties of the head that hold the
	// RowKey of each copy, by index name.
	copyProperty = "TkCopy_"
	// headMark starts every head row's RowKey.
	headMark = "~"
)

// HeadKey returns the RowKey of the head row of the entity whose RowKey
// is rk: "~" followed by rk.
func HeadKey(rk string) string { return headMark + rk }

// IsHeadKey reports whether rk is the RowKey of an entity's head row.
func IsHeadKey(rk string) bool { return strings.HasPrefix(rk, headMark) }

// state is an entity's head as an attempt read it.
type state struct {
	live   bool
	copies map[string]string // index name -> the copy's RowKey
}

// errAbsent ends a write that finds nothing to do (DeleteKey of a
// missing entity).
var errAbsent = errors.New("index: the entity does not exist")

// Insert adds *v and its index copies in one transaction, and stores the
// entity's new ETag in v. An existing entity, or a unique value another
// entity holds, is a *partition.DuplicateError (partition.ErrDuplicate,
// store.ErrAlreadyExists; IndexName and Value set for a value). Nothing
// is written on a refusal. The insert is sent without a read first: the
// entity's head is inserted with it, so when the head exists already the
// transaction is refused on it and the insert reads the head and tries
// again on what it holds.
func (x *Table[T]) Insert(ctx context.Context, v *T) error {
	var (
		acts []store.Action
		cks  []copyKey[T]
		err  error
	)
	if _, typed := driver.Typed(x.table); typed && v != nil {
		acts, cks, err = x.typedInserts(v)
	} else {
		acts, cks, err = x.inserts(v)
	}
	if err != nil {
		return err
	}
	pk, rk := acts[0].Entity.PartitionKey, acts[0].Entity.RowKey
	res, err := x.write(ctx, pk, rk, true, func(st *state, tx *partition.Txn) error {
		if st.live {
			return x.duplicate(pk, rk)
		}
		if err := tx.SetHead(headProps(cks)); err != nil {
			return err
		}
		if err := tx.Add("entity", acts[0]); err != nil {
			return err
		}
		for i, ck := range cks {
			if err := tx.Add("index "+ck.spec.name, acts[1+i]); err != nil {
				return err
			}
		}
		return nil
	})
	return x.done(v, res, err)
}

// inserts returns the insert of v and of its copies as entity actions.
func (x *Table[T]) inserts(v *T) ([]store.Action, []copyKey[T], error) {
	e, err := encode(v)
	if err != nil {
		return nil, nil, err
	}
	cks, cs, err := x.copies(v, &e)
	if err != nil {
		return nil, nil, err
	}
	acts := make([]store.Action, 1, 1+len(cs))
	acts[0] = store.Action{Kind: store.ActionInsert, Entity: e}
	for _, c := range cs {
		acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: c})
	}
	return acts, cks, nil
}

// Update replaces the stored entity with *v if it still has the ETag in
// v's etag field (a *partition.ChangedError otherwise, matching
// partition.ErrChanged and store.ErrPreconditionFailed; mapper.ErrNoETag
// without one), moves the copies whose values changed and refreshes the
// others, all in one transaction, and stores the new ETag in v.
func (x *Table[T]) Update(ctx context.Context, v *T) error {
	etag := mapper.ETagOf(v)
	if etag == "" {
		return fmt.Errorf("index: update: %w", mapper.ErrNoETag)
	}
	return x.replace(ctx, v, etag, "update")
}

// Upsert writes *v whatever is stored (creating it, or replacing it and
// moving its copies), and stores the new ETag in v. It reads the entity's
// head first and tries again when another writer changes it in between.
func (x *Table[T]) Upsert(ctx context.Context, v *T) error {
	return x.replace(ctx, v, store.ETagAny, "upsert")
}

// replace writes *v over the stored entity, conditional on ifMatch (an
// ETag, or store.ETagAny for Upsert, which creates a missing entity), with
// its copies moved.
func (x *Table[T]) replace(ctx context.Context, v *T, ifMatch store.ETag, op string) error {
	e, err := encode(v)
	if err != nil {
		return err
	}
	cks, cs, err := x.copies(v, &e)
	if err != nil {
		return err
	}
	res, err := x.write(ctx, e.PartitionKey, e.RowKey, false, func(st *state, tx *partition.Txn) error {
		entity := store.Action{Kind: store.ActionUpsertReplace, Entity: e}
		if ifMatch != store.ETagAny {
			if !st.live {
				return x.changed(e, op, true, x.gone(e))
			}
			entity = store.Action{Kind: store.ActionUpdateReplace, Entity: e, IfMatch: ifMatch}
		}
		if err := tx.SetHead(headProps(cks)); err != nil {
			return err
		}
		if err := tx.Add("entity", entity); err != nil {
			return err
		}
		if err := deleteCopies(tx, st, e.PartitionKey, cks); err != nil {
			return err
		}
		for i, ck := range cks {
			kind := store.ActionInsert // a new value: refused if taken
			if st.live && st.copies[ck.spec.name] == ck.rk {
				kind = store.ActionUpsertReplace // the same value: refresh
			}
			if err := tx.Add("index "+ck.spec.name, store.Action{Kind: kind, Entity: cs[i]}); err != nil {
				return err
			}
		}
		return nil
	})
	if ifMatch == store.ETagAny && errors.Is(err, partition.ErrConflict) {
		return contended(op, e, err)
	}
	return x.done(v, res, err)
}

// deleteCopies adds the deletes of the copies the head lists and keep
// does not.
func deleteCopies[T any](tx *partition.Txn, st *state, pk string, keep []copyKey[T]) error {
	if !st.live {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(st.copies)) {
		rk := st.copies[name]
		if slices.ContainsFunc(keep, func(ck copyKey[T]) bool { return ck.rk == rk }) {
			continue
		}
		if err := tx.Delete("index "+name, rk, store.ETagAny); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes *v's entity and its copies if the entity still has the
// ETag in v's etag field.
func (x *Table[T]) Delete(ctx context.Context, v *T) error {
	etag := mapper.ETagOf(v)
	if etag == "" {
		return fmt.Errorf("index: delete: %w", mapper.ErrNoETag)
	}
	e, err := encode(v)
	if err != nil {
		return err
	}
	_, err = x.remove(ctx, e.PartitionKey, e.RowKey, etag)
	return err
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

// gone is the refusal of a write conditional on the ETag of an entity
// that does not exist.
func (x *Table[T]) gone(e store.Entity) *store.Error {
	se := store.Errorf(store.CodeResourceNotFound, 404, "index: entity (%q, %q) does not exist", e.PartitionKey, e.RowKey)
	se.Source = store.SourceClient
	return se
}

// duplicate is the refusal of an insert of an entity that exists.
func (x *Table[T]) duplicate(pk, rk string) error {
	se := store.Errorf(store.CodeEntityAlreadyExists, 409, "index: entity (%q, %q) exists already", pk, rk)
	se.Source = store.SourceClient
	return &partition.DuplicateError{Table: x.table.Name(), Partition: pk,
		Row: partition.Row{Label: "entity", Kind: store.ActionInsert, RowKey: rk}, Err: se}
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
	if err := store.ValidateKeys(pk, rk); err != nil {
		return err
	}
	absent, err := x.remove(ctx, pk, rk, store.ETagAny)
	if absent {
		return nil
	}
	if errors.Is(err, partition.ErrConflict) {
		return contended("delete", store.Entity{PartitionKey: pk, RowKey: rk}, err)
	}
	return err
}

// remove deletes the entity (pk, rk), conditional on ifMatch, and its
// copies, and marks its head gone. absent reports an unconditional delete
// that found no entity.
func (x *Table[T]) remove(ctx context.Context, pk, rk string, ifMatch store.ETag) (absent bool, err error) {
	e := store.Entity{PartitionKey: pk, RowKey: rk}
	_, err = x.write(ctx, pk, rk, false, func(st *state, tx *partition.Txn) error {
		if !st.live {
			if ifMatch == store.ETagAny {
				return errAbsent
			}
			return x.changed(e, "delete", true, x.gone(e))
		}
		if err := tx.SetHead(map[string]any{liveProperty: false}); err != nil {
			return err
		}
		if err := tx.Delete("entity", rk, ifMatch); err != nil {
			return err
		}
		return deleteCopies[T](tx, st, pk, nil)
	})
	if err == errAbsent {
		return true, nil
	}
	return false, err
}

// write runs one write of the entity (pk, rk) through its head's commit
// loop. plan builds an attempt's transaction from the head's state as
// read. An insert (fresh) begins without a read, from a head that does
// not exist yet.
func (x *Table[T]) write(ctx context.Context, pk, rk string, fresh bool, plan func(st *state, tx *partition.Txn) error) (*partition.Result, error) {
	hd, err := partition.NewHead(x.table, pk, HeadKey(rk), x.heads)
	if err != nil {
		return nil, fmt.Errorf("index: entity (%q, %q): %w", pk, rk, err)
	}
	var (
		st  state
		own error
	)
	run := &partition.RunOptions{}
	run.Read = func(ctx context.Context) (partition.Fence, error) {
		e, err := x.table.Get(ctx, pk, hd.RowKey(), nil)
		if store.EntityNotFound(err) {
			st = state{}
			return hd.Absent(), nil
		}
		if err != nil {
			return partition.Fence{}, err
		}
		st = headState(&e)
		return hd.FenceOf(&e)
	}
	if fresh {
		f := hd.Absent()
		run.Start = &f
	}
	res, err := hd.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
		own = plan(&st, tx)
		return own
	}, run)
	if err != nil && err != own {
		err = x.explain(err)
	}
	return res, err
}

// headState decodes what the head row e says of its entity.
func headState(e *store.Entity) state {
	st := state{copies: map[string]string{}}
	st.live, _ = e.Properties[liveProperty].(bool)
	for name, v := range e.Properties {
		if idx, ok := strings.CutPrefix(name, copyProperty); ok {
			if rk, ok := v.(string); ok {
				st.copies[idx] = rk
			}
		}
	}
	return st
}

// headProps are the head row's properties for an entity with copies cks.
func headProps[T any](cks []copyKey[T]) map[string]any {
	m := make(map[string]any, 1+len(cks))
	m[liveProperty] = true
	for _, ck := range cks {
		m[copyProperty+ck.spec.name] = ck.rk
	}
	return m
}

// explain names the index and the value of a copy whose insert met
// another entity's copy (a taken unique value).
func (x *Table[T]) explain(err error) error {
	var de *partition.DuplicateError
	if !errors.As(err, &de) || de.IndexName != "" || !strings.HasPrefix(de.Label, "index ") {
		return err
	}
	d := *de
	d.IndexName, d.Value = strings.TrimPrefix(de.Label, "index "), valueOfCopy(de.RowKey)
	return &d
}

// done stores the entity's new ETag in v after a write that applied: the
// first data row's. When the answer was lost and the head proved the
// write applied, the ETag is unknown and v's field is emptied: read the
// entity before writing it again.
func (x *Table[T]) done(v *T, res *partition.Result, err error) error {
	if err != nil || v == nil {
		return err
	}
	etag := store.ETag("")
	if len(res.ETags) > 0 {
		etag = res.ETags[0]
	}
	return mapper.SetETag(v, etag)
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
