package indexentity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// The entity's head row (SamePartition). Every write of an entity is one
// transaction on a partition.Head of its own, at headKey(rk): the head
// row, which records whether the entity exists and the value it is
// listed under in each list, the entity, and the index entities of the
// values it leaves and takes. The head's commit loop (partition.Head.Run)
// reads the head, builds the transaction, commits and decides: a writer
// of the entity that got in first makes the write read again, and a
// commit whose answer was lost is resolved by the head, once, never sent
// again. The index entities are shared by every entity of their value,
// so no entity's head fences them: each is written conditional on the
// ETag it was read with (or inserted), and its refusal is a race the loop
// retries (RunOptions.Race).
//
// The head is a row of its own, not the entity's: a delete must leave
// the head in place (its version and writers decide a lost answer, and
// the entity's next writers go on from them), and a row left where the
// entity was would read as an entity. It sits outside the entities'
// prefix (New refuses a prefix starting with headMark) and the lists'
// keys, which start with a list name, so reads of either never meet it.
const (
	// headPrefix names the head's own two properties: TkHeadVersion and
	// TkHeadWriters.
	headPrefix = "TkHead"
	// liveProperty is true on the head of an entity that exists, false
	// once it was deleted; a head without it (one the loop created only
	// to shut a lost commit out) records nothing of the entity.
	liveProperty = "TkLive"
	// valueProperty prefixes the properties of the head that hold the
	// value the entity is listed under, by list name (none for "").
	valueProperty = "TkList_"
	// headMark starts every head row's RowKey.
	headMark = "~"
)

// headKey returns the RowKey of the head row of the entity whose RowKey
// is rk.
func headKey(rk string) string { return headMark + rk }

// headState is what an attempt read of the entity: whether it exists and
// the value it is listed under in each list (nil when it does not exist).
type headState struct {
	live   bool
	values []string
}

// listAction is a write of an index entity in an entity's transaction.
type listAction struct {
	label string
	act   store.Action
}

// listLabel prefixes the label of every index entity's row in a
// transaction: what listRace knows them by.
const listLabel = "list "

// listRace declares a refusal of an index entity a race: another
// entity's writer changed it (412), created it (409) or deleted it (404)
// since this attempt read it. The entity's own row is the caller's.
func listRace(row partition.Row, err error) bool {
	return strings.HasPrefix(row.Label, listLabel) && conflict(err)
}

// errAbsent ends a DeleteKey that finds no entity.
var errAbsent = errors.New("indexentity: the entity does not exist")

// writeSame runs a write of a SamePartition table through the entity's
// head: the entity, its head and the index entities of its old and new
// values in one entity group transaction.
func (x *Table[T]) writeSame(ctx context.Context, w write[T]) error {
	tl := x.lists.(*tableLists)
	hd, err := partition.NewHead(x.table, w.pk, headKey(w.rk), x.heads)
	if err != nil {
		return fmt.Errorf("indexentity: entity (%q, %q): %w", w.pk, w.rk, err)
	}
	var (
		lists []listAction
		stop  error // the write cannot apply (or, errAbsent, need not)
		reads int
	)
	read := func(ctx context.Context) (partition.Fence, error) {
		reads++
		f, s, err := x.readHead(ctx, hd, &w, reads == 1)
		if err != nil {
			return f, err
		}
		lists, stop = nil, decide(x.name, &w, s.live)
		if stop == nil {
			lists, err = x.listActions(ctx, tl, &w, s)
		}
		return f, err
	}
	res, err := hd.Run(ctx, func(_ context.Context, tx *partition.Txn) error {
		if stop != nil {
			return stop
		}
		return x.build(tx, &w, lists)
	}, &partition.RunOptions{Read: read, Race: listRace})
	var ae *partition.AttemptsError
	switch {
	case err == nil:
		return x.done(w, res)
	case err == errAbsent:
		return nil
	case err == stop:
		return err
	case errors.As(err, &ae) && ae.Raced:
		return x.contended(w, ae.Err)
	}
	return err
}

// readHead reads what the entity's head says of it. An insert's first
// attempt reads nothing: it takes the entity for a new one, whose head
// does not exist yet; when the head exists the commit is refused on it,
// nothing applied, and the next attempt reads it. A head that records
// nothing of the entity (there is none, or the loop created it only to
// shut a lost commit out) leaves it to the entity's row: an entity
// written before its head existed, or none.
func (x *Table[T]) readHead(ctx context.Context, hd *partition.Head, w *write[T], first bool) (partition.Fence, headState, error) {
	if w.kind == wInsert && first {
		return hd.Absent(), headState{}, nil
	}
	e, err := x.table.Get(ctx, w.pk, hd.RowKey(), nil)
	var f partition.Fence
	switch {
	case store.EntityNotFound(err):
		f = hd.Absent()
	case err != nil:
		return f, headState{}, err
	default:
		if f, err = hd.FenceOf(&e); err != nil {
			return f, headState{}, err
		}
		if st, ok := x.stateOf(&e); ok {
			return f, st, nil
		}
	}
	cur, err := getCur(ctx, x.table, w.pk, w.rk)
	if err != nil {
		return f, headState{}, err
	}
	values, err := x.decodeCur(cur)
	return f, headState{live: cur != nil, values: values}, err
}

// stateOf decodes what a head row records of its entity; ok is false
// when it records nothing.
func (x *Table[T]) stateOf(e *store.Entity) (st headState, ok bool) {
	live, ok := e.Properties[liveProperty].(bool)
	if !ok || !live {
		return headState{}, ok
	}
	st = headState{live: true, values: make([]string, len(x.specs))}
	for i := range x.specs {
		st.values[i], _ = e.Properties[valueProperty+x.specs[i].name].(string)
	}
	return st, true
}

// headProps are the head row's properties after a write that leaves the
// entity with values (nil: deleted).
func (x *Table[T]) headProps(values []string) map[string]any {
	m := make(map[string]any, 1+len(values))
	m[liveProperty] = values != nil
	for i, v := range values {
		if v != "" {
			m[valueProperty+x.specs[i].name] = v
		}
	}
	return m
}

// decide refuses a write that cannot apply to the entity as its head
// recorded it (live: it exists), before anything is sent: a
// *partition.DuplicateError for an insert of an existing entity, a
// *partition.ChangedError (Missing) for an update or delete of one that
// does not exist; errAbsent for a DeleteKey that has nothing to do.
func decide[T any](table string, w *write[T], live bool) error {
	row := partition.Row{Label: "entity", Index: -1, Kind: store.ActionInsert, RowKey: w.rk}
	switch {
	case w.kind == wInsert && live:
		return &partition.DuplicateError{Table: table, Partition: w.pk, Row: row,
			Err: client(store.CodeEntityAlreadyExists, 409, "indexentity: entity (%q, %q) exists already", w.pk, w.rk)}
	case (w.kind == wUpdate || w.kind == wDelete) && !live:
		row.Kind = store.ActionUpdateReplace
		if w.kind == wDelete {
			row.Kind = store.ActionDelete
		}
		return &partition.ChangedError{Table: table, Partition: w.pk, Row: row, Missing: true,
			Err: client(store.CodeResourceNotFound, 404, "indexentity: entity (%q, %q) does not exist", w.pk, w.rk)}
	case w.kind == wDeleteKey && !live:
		return errAbsent
	}
	return nil
}

// newValues are the list values the write leaves the entity with: nil
// for a delete.
func (x *Table[T]) newValues(w *write[T]) []string {
	if w.kind == wDelete || w.kind == wDeleteKey {
		return nil
	}
	return x.valuesOf(w.v)
}

// listActions reads the index entities of the values the entity leaves
// and takes and returns their changes, each conditional on the ETag it
// was read with (or an insert of a new one).
func (x *Table[T]) listActions(ctx context.Context, tl *tableLists, w *write[T], st headState) ([]listAction, error) {
	news := x.newValues(w)
	k := Key{PartitionKey: w.pk, RowKey: w.rk}
	var out []listAction
	for i := range x.specs {
		name := x.specs[i].name
		old, nu := valueAt(st.values, i), valueAt(news, i)
		if old == nu {
			continue
		}
		for _, side := range []struct {
			value string
			add   bool
		}{{old, false}, {nu, true}} {
			if side.value == "" {
				continue
			}
			ref, err := x.refOf(name, side.value, w.pk)
			if err != nil {
				return nil, err
			}
			seg, err := tl.segmentFor(ctx, ref, k)
			if err != nil {
				return nil, err
			}
			if _, listed := seg.find(k); listed == side.add {
				continue // already as it should be
			}
			next := seg.without(k)
			if side.add {
				next = seg.with(entry{Key: k})
			}
			acts, err := tl.actions(ref, seg, next)
			if err != nil {
				return nil, err
			}
			for _, a := range acts {
				out = append(out, listAction{label: listLabel + name, act: a})
			}
		}
	}
	return out, nil
}

// build adds an attempt's rows to its transaction: the entity's write
// (conditional on the caller's ETag for Update and Delete; the head
// fences it against the entity's other writers), the head's record of
// the entity, and the index entities' changes.
func (x *Table[T]) build(tx *partition.Txn, w *write[T], lists []listAction) error {
	var a store.Action
	switch w.kind {
	case wInsert:
		a = store.Action{Kind: store.ActionInsert, Entity: w.e}
	case wUpdate:
		a = store.Action{Kind: store.ActionUpdateReplace, Entity: w.e, IfMatch: w.etag}
	case wUpsert:
		a = store.Action{Kind: store.ActionUpsertReplace, Entity: w.e}
	case wDelete:
		a = store.Action{Kind: store.ActionDelete, Entity: store.Entity{RowKey: w.rk}, IfMatch: w.etag}
	case wDeleteKey:
		a = store.Action{Kind: store.ActionDelete, Entity: store.Entity{RowKey: w.rk}, IfMatch: store.ETagAny}
	}
	if err := tx.SetHead(x.headProps(x.newValues(w))); err != nil {
		return err
	}
	if err := tx.Add("entity", a); err != nil {
		return err
	}
	for _, l := range lists {
		if err := tx.Add(l.label, l.act); err != nil {
			return err
		}
	}
	return nil
}

// done hands the entity's new ETag back: the entity's row is the
// transaction's first. When the answer was lost and the head proved the
// write applied, the ETag is unknown and v's field is emptied: read the
// entity before writing it again under an ETag.
func (x *Table[T]) done(w write[T], res *partition.Result) error {
	if w.v == nil || w.kind == wDelete || w.kind == wDeleteKey {
		return nil
	}
	etag := store.ETag("")
	if len(res.ETags) > 0 {
		etag = res.ETags[0]
	}
	return mapper.SetETag(w.v, etag)
}
