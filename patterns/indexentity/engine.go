package indexentity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// change is one list change an entity write implies: the value it leaves
// and the value it takes ("" for none). A step carries the changes of
// one write.
type change struct {
	List string `json:"l"`
	Old  string `json:"o,omitempty"`
	New  string `json:"n,omitempty"`
}

// errNothing ends a delete by key of a missing entity without writing.
var errNothing = errors.New("indexentity: nothing to do")

// writeEventual runs a write of an InBlobs or SeparatePartition table:
// the entity and an engine operation naming the lists it leaves and
// takes, in one transaction of the entity's partition (eventual.Engine's
// Write, which fences the partition). The step that applies the
// operation reads the entity itself, so it brings the lists to the
// entity's state whenever it runs. A write that loses to another writer
// of the partition is tried again after a jittered pause.
func (x *Table[T]) writeEventual(ctx context.Context, w write[T]) error {
	var last error
	for try := 1; try <= x.o.Attempts; try++ {
		if try > 1 {
			if err := x.pause(ctx, try-1); err != nil {
				return err
			}
		}
		res, err := x.o.Engine.Write(ctx, x.name, w.pk, func(tx *eventual.Tx) error {
			cur, err := getCur(ctx, x.table, w.pk, w.rk)
			if err != nil {
				return err
			}
			if done, err := checkCur(x.name, &w, cur); err != nil {
				return err
			} else if done {
				return errNothing
			}
			olds, err := x.decodeCur(cur)
			if err != nil {
				return err
			}
			var news []string
			switch {
			case w.kind == wDelete || w.kind == wDeleteKey:
				err = tx.Delete("entity", w.rk, cur.ETag)
			case cur == nil:
				news = x.valuesOf(w.v)
				err = tx.Insert("entity", w.e)
			default:
				news = x.valuesOf(w.v)
				err = tx.Update("entity", w.e, store.Replace, cur.ETag)
			}
			if err != nil {
				return err
			}
			var changes []change
			for i := range x.specs {
				if old, nu := valueAt(olds, i), valueAt(news, i); old != nu {
					changes = append(changes, change{List: x.specs[i].name, Old: old, New: nu})
				}
			}
			if len(changes) == 0 {
				return nil
			}
			data, err := json.Marshal(changes)
			if err != nil {
				return err
			}
			return tx.Then(ctx, w.rk, eventual.Custom(x.handler, x.name, store.Entity{}, data))
		})
		switch {
		case err == nil:
			return x.doneEventual(ctx, w, res)
		case errors.Is(err, errNothing):
			return nil
		case errors.Is(err, partition.ErrConflict) || errors.Is(err, store.ErrTransient):
			last = err
			continue
		}
		return err
	}
	return x.contended(w, last)
}

// doneEventual hands the entity's new ETag back: from the commit's
// answer, or, when the answer was lost and the fence proved the commit,
// from a read of the entity if it still holds this commit's version.
func (x *Table[T]) doneEventual(ctx context.Context, w write[T], res *partition.Result) error {
	if w.v == nil || w.kind == wDelete || w.kind == wDeleteKey {
		return nil
	}
	if len(res.ETags) > 0 {
		return mapper.SetETag(w.v, res.ETags[0])
	}
	cur, err := getCur(ctx, x.table, w.pk, w.rk)
	if err != nil || cur == nil || eventual.VersionOf(cur) != res.Version {
		// Written, and changed since: the caller reads it again to update it.
		return mapper.SetETag(w.v, "")
	}
	return mapper.SetETag(w.v, cur.ETag)
}

// step is the engine step of a write: it brings the lists the write left
// and took to the state of the entity as it is now.
//
// Each list change is a guarded set operation on the one index entity (or
// blob) that holds the id: an entry records the entity's version it was
// written from, an add writes only over an older entry, and a removal
// removes only an entry no newer than the entity state it read, each
// conditional on the ETag it read. A step that runs late or twice reads
// the entity's current state and so never re-adds an id its entity left,
// nor drops one a later write added. An add that raced a later write of
// the entity (read the entity, the entity changed and that write's step
// ran, then the add landed) is caught by reading the entity again after
// the writes: if its version moved, the step starts over from the new
// state.
func (x *Table[T]) step(ctx context.Context, op eventual.Operation, s eventual.Step) error {
	changes, err := x.changesOf(s)
	if err != nil {
		return err
	}
	if op.Source == nil {
		return refuse("step of %s: the operation names no entity", x.name)
	}
	k := Key{PartitionKey: op.Source.PartitionKey, RowKey: op.Source.RowKey}
	src := x.st.Table(op.Source.Table)
	var last error
	for try := 1; try <= x.o.Attempts; try++ {
		if try > 1 {
			if err := x.pause(ctx, try-1); err != nil {
				return err
			}
		}
		cur, err := getCur(ctx, src, k.PartitionKey, k.RowKey)
		if err != nil {
			return err
		}
		values, err := x.decodeCur(cur)
		if err != nil {
			return err
		}
		var version int64
		if cur != nil {
			version = eventual.VersionOf(cur)
		}
		added := false
		for _, c := range changes {
			sp, err := x.spec(c.List)
			if err != nil {
				return err
			}
			i := x.specIndex(sp)
			for _, value := range []string{c.Old, c.New} {
				if value == "" {
					continue
				}
				ref, err := x.refOf(c.List, value, "")
				if err != nil {
					return err
				}
				want := cur != nil && valueAt(values, i) == value
				a, err := x.sync(ctx, ref, k, want, version, cur == nil, op.Version)
				added = added || a
				if err != nil {
					return err
				}
			}
		}
		if !added {
			return nil
		}
		again, err := getCur(ctx, src, k.PartitionKey, k.RowKey)
		if err != nil {
			return err
		}
		if again != nil && eventual.VersionOf(again) == version {
			return nil
		}
		last = fmt.Errorf("entity (%q, %q) changed while its lists were updated", k.PartitionKey, k.RowKey)
	}
	return contention(fmt.Sprintf("step of (%q, %q)", k.PartitionKey, k.RowKey), last)
}

// checkStep refuses a step no worker could run: before the entity's write
// commits, and again before the step runs.
func (x *Table[T]) checkStep(s eventual.Step) error {
	_, err := x.changesOf(s)
	return err
}

// changesOf reads a step's list changes.
func (x *Table[T]) changesOf(s eventual.Step) ([]change, error) {
	var changes []change
	if err := json.Unmarshal(s.Data, &changes); err != nil {
		return nil, refuse("step of %s: unreadable list changes (%v)", x.name, err)
	}
	for _, c := range changes {
		if _, err := x.spec(c.List); err != nil {
			return nil, err
		}
	}
	return changes, nil
}

func (x *Table[T]) specIndex(s *Spec[T]) int {
	for i := range x.specs {
		if &x.specs[i] == s {
			return i
		}
	}
	return -1
}

// sync sets the entry of k in list ref: present (written from version)
// when want, absent otherwise. A missing entity removes only entries no
// newer than the operation (opVersion), since a later write may have
// created it again and listed it. It reports whether it sent an add.
func (x *Table[T]) sync(ctx context.Context, ref listRef, k Key, want bool, version int64, missing bool, opVersion int64) (sentAdd bool, err error) {
	var last error
	for try := 1; try <= x.o.Attempts; try++ {
		if try > 1 {
			if err := x.pause(ctx, try-1); err != nil {
				return sentAdd, err
			}
		}
		seg, err := x.lists.segmentFor(ctx, ref, k)
		if err != nil {
			return sentAdd, err
		}
		e, found := seg.find(k)
		var next []entry
		if want {
			if found && e.version >= version {
				return sentAdd, nil
			}
			next = seg.with(entry{Key: k, version: version})
			sentAdd = true
		} else {
			guard := version
			if missing {
				guard = opVersion
			}
			if !found || e.version > guard {
				return sentAdd, nil
			}
			next = seg.without(k)
		}
		err = x.lists.write(ctx, ref, seg, next)
		if err == nil {
			return sentAdd, nil
		}
		if !retryable(err) {
			return sentAdd, fmt.Errorf("indexentity: %s: %w", ref, err)
		}
		last = err
	}
	return sentAdd, contention(fmt.Sprintf("%s kept changing", ref), last)
}
