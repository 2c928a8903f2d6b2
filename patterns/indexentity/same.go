package indexentity

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// writeSame runs a write of a SamePartition table: the entity and the
// index entities of its old and new values in one entity group
// transaction, each index entity conditional on the ETag it was read
// with. When another writer changed one of them first, it reads again
// and retries after a jittered pause, up to Options.Attempts times.
func (x *Table[T]) writeSame(ctx context.Context, w write[T]) error {
	tl := x.lists.(*tableLists)
	var last error
	for try := 1; try <= x.o.Attempts; try++ {
		if try > 1 {
			if err := x.pause(ctx, try-1); err != nil {
				return err
			}
		}
		var cur *store.Entity
		if w.kind != wInsert {
			c, err := getCur(ctx, x.table, w.pk, w.rk)
			if errors.Is(err, store.ErrTransient) {
				last = err // a failed read: nothing was written yet
				continue
			}
			if err != nil {
				return err
			}
			cur = c
		}
		if done, err := checkCur(x.name, &w, cur); done || err != nil {
			return err
		}
		acts, err := x.sameActions(ctx, tl, &w, cur)
		if errors.Is(err, store.ErrTransient) {
			last = err
			continue
		}
		if err != nil {
			return err
		}
		res, err := x.table.Transact(ctx, acts)
		if err == nil {
			return x.done(w, res[0].ETag)
		}
		if errors.Is(err, store.ErrUnknownOutcome) {
			// The transaction is atomic: the entity's row tells whether it
			// applied.
			r, rs, rerr := store.Resolve(context.WithoutCancel(ctx), x.table, acts[:1])
			switch r {
			case store.Applied:
				return x.done(w, rs[0].ETag)
			case store.NotApplied:
				last = err
				continue
			}
			if rerr != nil {
				return fmt.Errorf("%w (reading the entity back failed: %v)", err, rerr)
			}
			return err
		}
		if errors.Is(err, store.ErrTransient) {
			last = err
			continue
		}
		i := store.Index(err)
		if i == 0 {
			if (w.kind == wUpsert || w.kind == wDeleteKey) && conflict(err) {
				last = err // the entity changed between the read and the write
				continue
			}
			var se *store.Error
			if errors.As(err, &se) {
				c := *se
				c.Index = -1
				return refusal(x.name, &w, &c)
			}
			return err
		}
		if i > 0 && i < len(acts) && conflict(err) {
			last = err // another writer changed the index entity first
			continue
		}
		return fmt.Errorf("indexentity: %s of (%q, %q) with the index entities of its lists: %w", w.kind, w.pk, w.rk, err)
	}
	return x.contended(w, last)
}

// done hands the entity's new ETag back.
func (x *Table[T]) done(w write[T], etag store.ETag) error {
	if w.v == nil || w.kind == wDelete || w.kind == wDeleteKey {
		return nil
	}
	return mapper.SetETag(w.v, etag)
}

// sameActions builds the transaction of a SamePartition write: the
// entity's action first, then the changes of the index entities of the
// values it leaves and the values it takes.
func (x *Table[T]) sameActions(ctx context.Context, tl *tableLists, w *write[T], cur *store.Entity) ([]store.Action, error) {
	var acts []store.Action
	switch {
	case w.kind == wDelete || w.kind == wDeleteKey:
		acts = append(acts, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: w.pk, RowKey: w.rk}, IfMatch: cur.ETag})
	case cur == nil:
		acts = append(acts, store.Action{Kind: store.ActionInsert, Entity: w.e})
	default:
		acts = append(acts, store.Action{Kind: store.ActionUpdateReplace, Entity: w.e, IfMatch: cur.ETag})
	}
	olds, err := x.decodeCur(cur)
	if err != nil {
		return nil, err
	}
	var news []string
	if w.kind != wDelete && w.kind != wDeleteKey {
		news = x.valuesOf(w.v)
	}
	k := Key{PartitionKey: w.pk, RowKey: w.rk}
	for i := range x.specs {
		name := x.specs[i].name
		old, nu := valueAt(olds, i), valueAt(news, i)
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
			_, listed := seg.find(k)
			if listed == side.add {
				continue // already as it should be
			}
			next := seg.without(k)
			if side.add {
				next = seg.with(entry{Key: k})
			}
			more, err := tl.actions(ref, seg, next)
			if err != nil {
				return nil, err
			}
			acts = append(acts, more...)
		}
	}
	return acts, nil
}
