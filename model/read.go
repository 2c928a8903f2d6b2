package model

import (
	"context"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// notFound is the model's answer for a key or value nothing holds: it
// matches store.ErrNotFound.
func notFound(format string, args ...any) error {
	return clientErr(store.CodeResourceNotFound, 404, "model: "+format, args...)
}

// Get reads entity (pk, id), with its ETag in v's etag field (when v has
// one). A missing entity is an error matching store.ErrNotFound.
func (m *Model[T]) Get(ctx context.Context, pk, id string) (*T, error) {
	v, _, err := m.get(ctx, pk, id)
	return v, err
}

func (m *Model[T]) get(ctx context.Context, pk, id string) (*T, store.Entity, error) {
	if ctx == nil {
		return nil, store.Entity{}, refuse("the context is nil")
	}
	ek, err := entityKey(id)
	if err != nil {
		return nil, store.Entity{}, refuse("id %q: %v", id, err)
	}
	row, err := m.st.Table(m.table).Get(ctx, pk, ek, nil)
	if err != nil {
		return nil, row, err
	}
	if moving(&row) {
		// A reservation holds no entity yet; a marker holds the entity in
		// flight until it arrived.
		t, ok := movedTo(&row)
		if !ok {
			return nil, row, notFound("entity (%q, %q) is reserved by a move, not arrived", pk, id)
		}
		if arrived, err := m.arrived(ctx, t); err != nil || arrived {
			if err == nil {
				err = notFound("entity (%q, %q) moved to %s", pk, id, t)
			}
			return nil, row, err
		}
	}
	if err := m.intact(&row); err != nil {
		return nil, row, err
	}
	v, err := decodeProps[T](pk, id, own(row.Properties), row.ETag)
	return v, row, err
}

// arrived reports whether a moved entity arrived at t.
func (m *Model[T]) arrived(ctx context.Context, t eventual.Ref) (bool, error) {
	row, found, err := t.Read(ctx, m.st)
	if err != nil || !found {
		return false, err
	}
	_, resv := row.Properties[MovingFromProperty]
	return !resv, nil
}

func (m *Model[T]) index(name string, global bool) (*Feature[T], error) {
	f := m.byName[name]
	if f == nil || f.kind != featIndex {
		return nil, refuse("no index %q is declared", name)
	}
	if f.global != global {
		if global {
			return nil, refuse("index %s is in the entity's partition: use FindIn or FindAllIn with the partition", name)
		}
		return nil, refuse("index %s is global: use Find or FindAll", name)
	}
	return f, nil
}

// FindIn returns the entity of partition pk holding value in unique
// index name of the partition: one point read of its copy, which the
// model writes in the entity's own transaction, so it is never behind a
// model write. The entity comes without an ETag (Get it for a
// conditional write); through a projected index (Project) it is read
// from its own row, with its ETag, one more point read. A copy not
// written by the model as it stands is a *BypassError (ErrBypassed); a
// change made to the entity row itself around the model shows in Get and
// Check, not here (through a projected index, here too).
func (m *Model[T]) FindIn(ctx context.Context, pk, name, value string) (*T, error) {
	f, err := m.index(name, false)
	if err != nil {
		return nil, err
	}
	if !f.unique {
		return nil, refuse("index %s is not unique: use FindAllIn", name)
	}
	rk, err := localKey(f, value, "")
	if err != nil {
		return nil, refuse("index %s: value %q: %v", name, value, err)
	}
	for range maxRounds {
		row, err := m.st.Table(m.table).Get(ctx, pk, rk, nil)
		if store.EntityNotFound(err) {
			return nil, notFound("no entity of partition %q holds %s %q", pk, name, value)
		}
		if err != nil {
			return nil, err
		}
		// nil: the entity gave the value up since its copy was read (a
		// projected index): read the copy again.
		if v, err := m.lookup(ctx, pk, f, &row); v != nil || err != nil {
			return v, err
		}
	}
	return nil, errContended
}

// FindAllIn returns the entities of partition pk holding value in index
// name of the partition, by id: one range query of their copies, checked
// and returned as FindIn does (EachIn yields them one by one).
func (m *Model[T]) FindAllIn(ctx context.Context, pk, name, value string) ([]*T, error) {
	var out []*T
	for v, err := range m.EachIn(ctx, pk, name, value) {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Find returns the entity holding value in globally unique index name.
// It reads the row at the value (a copy, or the claim a write makes
// before it commits), then the entity that row names, and returns the
// entity as stored now (with its ETag) when it holds the value: a write
// is found as soon as it returns, before the engine wrote its copy, and a
// copy left behind by an entity that gave the value up is never returned.
// Nothing holding the value is an error matching store.ErrNotFound. Two
// point reads.
func (m *Model[T]) Find(ctx context.Context, name, value string) (*T, error) {
	f, err := m.index(name, true)
	if err != nil {
		return nil, err
	}
	if !f.unique {
		return nil, refuse("index %s is not unique: use FindAll", name)
	}
	a, err := m.globalAt(f, value, "", "")
	if err != nil {
		return nil, refuse("index %s: value %q: %v", name, value, err)
	}
	row, err := m.st.Table(f.table).Get(ctx, a.pk, a.rk, nil)
	if store.EntityNotFound(err) {
		return nil, notFound("no entity holds %s %q", name, value)
	}
	if err != nil {
		return nil, err
	}
	v, ok, err := m.verify(ctx, f, &row, a)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("no entity holds %s %q (the row there is %s's, which no longer holds it)", name, value, owner(&row))
	}
	return v, nil
}

// FindAll returns the entities holding value in global index name, as
// stored now: every row of the value's partition (copies, and the claim
// a write sends beside its transaction and waits for before it returns)
// names an entity, each read and kept only if it holds the value. One
// range query and one point read per entity.
func (m *Model[T]) FindAll(ctx context.Context, name, value string) ([]*T, error) {
	f, err := m.index(name, true)
	if err != nil {
		return nil, err
	}
	if f.unique {
		v, err := m.Find(ctx, name, value)
		if store.EntityNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*T{v}, nil
	}
	p, err := keys.Join("x", f.name, value)
	if err != nil {
		return nil, refuse("index %s: value %q: %v", name, value, err)
	}
	c := filter.PK.Eq(p)
	var out []*T
	seen := map[eventual.Ref]bool{}
	for row, err := range store.All(ctx, m.st.Table(f.table), store.Query{Filter: c.String()}) {
		if err != nil {
			return nil, err
		}
		o := owner(&row)
		if seen[o] {
			continue
		}
		seen[o] = true
		v, ok, err := m.verify(ctx, f, &row, at{row.PartitionKey, row.RowKey})
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// verify reads the entity index row ir names and reports whether it maps
// to the row at a. An entity in flight (a move) is read where it was
// until it arrived: through its marker, or through the claim its arrival
// made (PrevProperty); once arrived, only the destination's rows find it.
func (m *Model[T]) verify(ctx context.Context, f *Feature[T], ir *store.Entity, a at) (*T, bool, error) {
	v, _, ok, err := m.reach(ctx, f, ir, a)
	return v, ok, err
}

// reach is verify, with the entity row read (its version: the copy
// lookups' Stale).
func (m *Model[T]) reach(ctx context.Context, f *Feature[T], ir *store.Entity, a at) (*T, *store.Entity, bool, error) {
	o := owner(ir)
	if o.Table == "" || o.RowKey == "" {
		return nil, nil, false, nil
	}
	row, found, err := o.Read(ctx, m.st)
	if err != nil {
		return nil, nil, false, err
	}
	if found && !moving(&row) {
		v, ok, err := m.holder(f, o, &row, a)
		return v, &row, ok, err
	}
	if found {
		t, ok := movedTo(&row)
		if !ok {
			found = false // a reservation: the entity has not arrived
		} else if arrived, err := m.arrived(ctx, t); err != nil || arrived {
			return nil, nil, false, err
		} else {
			v, ok, err := m.holder(f, o, &row, a)
			return v, &row, ok, err
		}
	}
	p, _ := ir.Properties[PrevProperty].(string)
	if p == "" {
		return nil, nil, false, nil
	}
	pr, err := parseRef(p)
	if err != nil {
		return nil, nil, false, nil
	}
	prow, pfound, err := pr.Read(ctx, m.st)
	if err != nil || !pfound {
		return nil, nil, false, err
	}
	if t, ok := movedTo(&prow); !ok || t != o {
		return nil, nil, false, nil
	}
	v, ok, err := m.holder(f, pr, &prow, a)
	return v, &prow, ok, err
}

// holder decodes the entity row of o (in m's table) and reports whether
// it maps to a.
func (m *Model[T]) holder(f *Feature[T], o eventual.Ref, row *store.Entity, a at) (*T, bool, error) {
	if o.Table != m.table {
		return nil, false, nil
	}
	id := idOf(o.RowKey)
	if err := m.intact(row); err != nil {
		return nil, false, err
	}
	v, err := decodeProps[T](o.PartitionKey, id, own(row.Properties), row.ETag)
	if err != nil {
		return nil, false, err
	}
	val := f.value(v)
	if val == "" {
		return nil, false, nil
	}
	now, err := m.globalAt(f, val, o.PartitionKey, id)
	return v, err == nil && now == a, nil
}

// Entry is one row of an entity's change log.
type Entry[T any] struct {
	// Op is "insert", "update", "delete" or "move" (the arrival of a
	// moved entity; the entries after it are its history before the move),
	// or "repair" (Repair wrote the entity again, its state unchanged).
	Op string
	// Version is the partition version of the write.
	Version int64
	// Entity is the state the write left (nil for a delete).
	Entity *T
}

// Log returns the last n entries of entity (pk, id)'s change log, newest
// first: one range query (a page of n rows).
func (m *Model[T]) Log(ctx context.Context, pk, id string, n int) ([]Entry[T], error) {
	if !m.log {
		return nil, refuse("no log is declared")
	}
	if n <= 0 {
		return nil, nil
	}
	rng, err := keys.PrefixOf("l", id)
	if err != nil {
		return nil, refuse("id %q: %v", id, err)
	}
	c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
	var out []Entry[T]
	for row, err := range store.All(ctx, m.st.Table(m.table), store.Query{Filter: c.String(), Top: n}) {
		if err != nil {
			return nil, err
		}
		e := Entry[T]{Version: logVersion(&row)}
		e.Op, _ = row.Properties[OpProperty].(string)
		if e.Op != "delete" {
			if e.Entity, err = decodeProps[T](pk, id, own(row.Properties), ""); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
		if len(out) == n {
			break
		}
	}
	return out, nil
}
