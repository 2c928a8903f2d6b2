package memstore

import (
	"context"
	"sync"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// table holds one table's entities: packed records in an arena, a B-tree
// of their refs in key order for ranges, and a hash index of their refs
// for point reads. None of the three holds a Go pointer per entity, so the
// garbage collector's work does not grow with the table.
type table struct {
	name  string // as created
	mu    sync.RWMutex
	arena arena
	tree  btree
	index index
}

func newTable(name string) *table {
	t := &table{name: name, index: newIndex()}
	t.tree.a = &t.arena
	return t
}

// get finds a record by key without allocating; nil when missing.
func (t *table) get(pk, rk string) record {
	var buf [256]byte
	k := append(append(append(buf[:0], pk...), 0), rk...)
	if x := t.index.get(&t.arena, unsafeString(k)); x != 0 {
		return t.arena.get(x)
	}
	return nil
}

// put stores r, replacing any record with its key.
func (t *table) put(r record) {
	x := t.arena.add(r)
	stored := t.arena.get(x)
	if old := t.index.set(&t.arena, stored.key(), x); old != 0 {
		t.arena.free(old)
	}
	t.tree.put(x)
	t.maybeCompact()
}

// remove deletes the record with the key.
func (t *table) remove(pk, rk string) {
	if x := t.tree.remove(pk, rk); x != 0 {
		t.index.delete(&t.arena, t.arena.get(x).key())
		t.arena.free(x)
		t.maybeCompact()
	}
}

// maybeCompact copies the live records into fresh chunks once garbage
// outweighs them, repoints the tree at the copies and rebuilds the index.
// The walk is in key order, so neighbours stay neighbours in memory.
func (t *table) maybeCompact() {
	if !t.arena.wantsCompaction() {
		return
	}
	fresh := &arena{minGarbage: t.arena.minGarbage}
	idx := newIndex()
	if t.tree.root != nil {
		t.tree.root.remap(func(x ref) ref {
			y := fresh.add(t.arena.get(x))
			idx.set(fresh, fresh.get(y).key(), y)
			return y
		})
	}
	t.arena = *fresh
	t.index = idx
}

// tableHandle is the store.Table a Store hands out. It resolves the table
// on every call.
type tableHandle struct {
	s    *Store
	name string
	key  string // strings.ToLower(name), the tables map's key
}

var _ store.Table = (*tableHandle)(nil)

// Name implements store.Table.
func (h *tableHandle) Name() string { return h.name }

// begin runs the checks every entity read starts with.
func (h *tableHandle) begin(ctx context.Context, op Operation) (*table, error) {
	t, before, after, err := h.beginWrite(ctx, op)
	if err == nil {
		err = before
	}
	if err == nil {
		err = after
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// beginWrite runs the checks every entity write starts with and returns
// the operation's injected fault: before fails it now, after once it took
// effect.
func (h *tableHandle) beginWrite(ctx context.Context, op Operation) (t *table, before, after error, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, nil, err
	}
	if t, err = h.s.lookupKey(h.name, h.key); err != nil {
		return nil, nil, nil, err
	}
	before, after = h.s.faultFor(op, h.name)
	return t, before, after, nil
}

// Get implements store.Table.
func (h *tableHandle) Get(ctx context.Context, pk, rk string, opts *store.GetOptions) (store.Entity, error) {
	sel, err := driver.ValidateGet(pk, rk, opts)
	if err != nil {
		return store.Entity{}, err
	}
	t, err := h.begin(ctx, OpGet)
	if err == nil {
		err = h.s.admitGet(h.name, pk)
	}
	if err != nil {
		driver.ReportTryErr(ctx, err)
		return store.Entity{}, err
	}
	t.mu.RLock()
	r := t.get(pk, rk)
	t.mu.RUnlock()
	// A record's bytes never change, so it is decoded outside the lock.
	if r == nil {
		err := notFound(h.name, pk, rk)
		driver.ReportTryErr(ctx, err)
		return store.Entity{}, err
	}
	driver.ReportTryErr(ctx, nil)
	return r.entity(sel), nil
}

func notFound(table, pk, rk string) *store.Error {
	return store.Errorf(store.CodeResourceNotFound, 404, "entity (PartitionKey %q, RowKey %q) does not exist in table %q", pk, rk, table)
}

// Insert implements store.Table.
func (h *tableHandle) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	return h.write(ctx, OpInsert, store.Action{Kind: store.ActionInsert, Entity: e})
}

// Update implements store.Table.
func (h *tableHandle) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	kind := store.ActionUpdateMerge
	if mode == store.Replace {
		kind = store.ActionUpdateReplace
	}
	return h.write(ctx, OpUpdate, store.Action{Kind: kind, Entity: e, IfMatch: ifMatch})
}

// Upsert implements store.Table.
func (h *tableHandle) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	kind := store.ActionUpsertMerge
	if mode == store.Replace {
		kind = store.ActionUpsertReplace
	}
	return h.write(ctx, OpUpsert, store.Action{Kind: kind, Entity: e})
}

// Delete implements store.Table.
func (h *tableHandle) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	_, err := h.write(ctx, OpDelete, store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch})
	return err
}

// write validates and applies one action outside a transaction.
func (h *tableHandle) write(ctx context.Context, op Operation, a store.Action) (store.ETag, error) {
	if a.Kind == store.ActionDelete {
		if err := store.ValidateKeys(a.Entity.PartitionKey, a.Entity.RowKey); err != nil {
			return "", err
		}
	} else if err := store.ValidateEntity(&a.Entity); err != nil {
		return "", err
	} else {
		// A Timestamp property is accepted and ignored, as the service
		// ignores it.
		a.Entity.Properties = driver.WithoutIgnored(a.Entity.Properties)
	}
	if a.Kind.NeedsIfMatch() {
		if err := store.ValidateETag(a.IfMatch); err != nil {
			return "", err
		}
	}
	return h.sendOne(ctx, op, a, nil)
}

// sendOne sends one checked action; p, when set, holds its properties
// packed from its Source.
func (h *tableHandle) sendOne(ctx context.Context, op Operation, a store.Action, p *packer) (store.ETag, error) {
	return etagOf(h.send(ctx, op, []store.Action{a}, func(t *table) ([]store.ActionResult, error) {
		etag, err := h.applyOne(t, &a, p)
		return []store.ActionResult{{ETag: etag}}, err
	}))
}

// etagOf returns the ETag of a single write's results.
func etagOf(results []store.ActionResult, err error) (store.ETag, error) {
	if err != nil || len(results) == 0 {
		return "", err
	}
	return results[0].ETag, nil
}

// applyOne applies one action under the table's lock.
func (h *tableHandle) applyOne(t *table, a *store.Action, p *packer) (store.ETag, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts := h.s.tick().UnixNano()
	r, remove, err := apply(h.name, t.get(a.Entity.PartitionKey, a.Entity.RowKey), a, p, ts)
	if err != nil {
		return "", err
	}
	if remove {
		t.remove(a.Entity.PartitionKey, a.Entity.RowKey)
		return "", nil
	}
	t.put(r)
	return r.etag(), nil
}

// apply computes the effect of one action on the current record cur (nil
// when missing): the new record, or remove for a delete. It changes nothing.
// p, when set, holds the properties of an insert or replace packed from
// its Source (a merge with a Source comes as a map: it merges with cur).
func apply(tableName string, cur record, a *store.Action, p *packer, ts int64) (next record, remove bool, err error) {
	pk, rk := a.Entity.PartitionKey, a.Entity.RowKey
	if a.Kind.NeedsIfMatch() {
		if cur == nil {
			return nil, false, notFound(tableName, pk, rk)
		}
		if a.IfMatch != store.ETagAny && a.IfMatch != cur.etag() {
			return nil, false, store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
				"entity (PartitionKey %q, RowKey %q) has ETag %s, not the If-Match %s: it changed since it was read", pk, rk, cur.etag(), a.IfMatch)
		}
	}
	props := a.Entity.Properties
	switch a.Kind {
	case store.ActionDelete:
		return nil, true, nil
	case store.ActionInsert:
		if cur != nil {
			return nil, false, store.Errorf(store.CodeEntityAlreadyExists, 409,
				"entity (PartitionKey %q, RowKey %q) already exists in table %q", pk, rk, tableName)
		}
	case store.ActionUpdateMerge, store.ActionUpsertMerge:
		if cur != nil {
			props = cur.merged(props)
			merged := store.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
			if err := store.ValidateEntity(&merged); err != nil {
				return nil, false, err
			}
		}
	}
	if p != nil {
		return newPackedRecord(pk, rk, ts, p), false, nil
	}
	return newRecord(pk, rk, ts, props), false, nil
}
