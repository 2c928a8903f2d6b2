package model

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Project makes the copies of index f hold only the properties props of
// the entity (and the keys and the model's own Tk... properties: the
// entity's id, its version, the digest): smaller rows, so a write
// carries less and a partition transaction stays far from its size
// limit. It applies to the four kinds of index (Unique, Index,
// GlobalUnique, GlobalIndex); Define refuses it on another feature, a
// property T does not map, and a property named twice. Project() with no
// property keeps keys-only copies.
//
// A lookup through a projected index in the entity's partition (FindIn,
// FindAllIn, EachIn, RangeIn, PrefixIn) reads the copy, then the entity
// from its own row, and returns the entity as stored now, with its ETag:
// one more point read per entity found. A lookup through a global index
// reads the entity anyway (Find, FindAll). Check judges a projected copy
// against the projected properties of its entity, and Repair writes it
// projected. An encrypted property named stays encrypted in the copy, as
// in the entity.
func (f Feature[T]) Project(props ...string) Feature[T] {
	f.proj = append([]string{}, props...) // non-nil: projected, even when empty
	return f
}

// checkProjection refuses a projection Define cannot take: on a feature
// that is not an index, of a property T does not map, or naming one
// twice.
func checkProjection[T any](f *Feature[T]) error {
	if f.proj == nil {
		return nil
	}
	if f.kind != featIndex {
		return refuse("%s: Project applies to an index (Unique, Index, GlobalUnique, GlobalIndex), not to this feature", f.name)
	}
	names, err := mapper.PropertyNames[T]()
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	for i, p := range f.proj {
		if !slices.Contains(names, p) {
			var zero T
			return refuse("index %s projects %q, which is not a property of %T (its properties: %s)", f.name, p, zero, strings.Join(names, ", "))
		}
		if slices.Contains(f.proj[:i], p) {
			return refuse("index %s projects %q twice", f.name, p)
		}
	}
	return nil
}

// carried returns a new map of the properties a copy of index f holds of
// an entity whose own properties are props: all of them, or those of f's
// projection that props holds.
func carried[T any](f *Feature[T], props map[string]any) map[string]any {
	if f.proj == nil {
		out := make(map[string]any, len(props)+4)
		for k, v := range props {
			out[k] = v
		}
		return out
	}
	out := make(map[string]any, len(f.proj)+4)
	for _, p := range f.proj {
		if v, ok := props[p]; ok {
			out[p] = v
		}
	}
	return out
}

// copySum is the digest (as Check computes it, every property included)
// that a copy of index f of an entity whose own properties are props
// holds: sum, the entity's own, when f does not project.
func copySum[T any](f *Feature[T], props map[string]any, sum string) string {
	if f.proj == nil {
		return sum
	}
	return digest(carried(f, props), nil)
}

// lookup returns the entity copy c of index f in partition pk stands
// for: the copy itself (copyOf) when f does not project, else the entity
// read from its own row (through). nil with no error: the copy was read
// before a write that took the value away.
func (m *Model[T]) lookup(ctx context.Context, pk string, f *Feature[T], c *store.Entity) (*T, error) {
	if f.proj == nil {
		return m.copyOf(pk, f, c)
	}
	return m.through(ctx, pk, f, c)
}

// through reads the entity a projected copy c names and returns it (with
// its ETag) when it holds the value c's key names. A copy the model did
// not write as it stands, one newer than its entity, one at its entity's
// version that its entity does not give, and one naming an entity that
// is not there (read twice: a delete between the two reads is not
// taken for it) are a *BypassError. nil with no error: the entity was
// written since the copy was read and no longer holds the value.
func (m *Model[T]) through(ctx context.Context, pk string, f *Feature[T], c *store.Entity) (*T, error) {
	id, err := m.copyStamp(pk, c)
	if err != nil {
		return nil, err
	}
	bad := func(reason string) error {
		return &BypassError{Table: m.table, PartitionKey: pk, RowKey: c.RowKey, Reason: reason}
	}
	v, row, err := m.get(ctx, pk, id)
	if store.EntityNotFound(err) {
		again, gerr := m.st.Table(m.table).Get(ctx, pk, c.RowKey, nil)
		switch {
		case store.EntityNotFound(gerr):
			return nil, nil // removed with its entity since the first read
		case gerr != nil:
			return nil, gerr
		case again.ETag != c.ETag:
			return nil, nil // rewritten since: the next read sees it
		}
		return nil, bad(fmt.Sprintf("the copy names entity %q, which is not there", id))
	}
	if err != nil {
		return nil, err
	}
	cv, ev := eventual.VersionOf(c), eventual.VersionOf(&row)
	holds := false
	if val := f.value(v); val != "" {
		k, err := localKey(f, val, id)
		holds = err == nil && k == c.RowKey
	}
	switch {
	case ev < cv:
		return nil, bad(fmt.Sprintf("the copy is at version %d, its entity %q at %d", cv, id, ev))
	case ev == cv && !holds:
		return nil, bad(fmt.Sprintf("the copy of entity %q does not hold the value its key names", id))
	case ev == cv && m.sumOf(carried(f, own(row.Properties))) != c.Properties[SumProperty]:
		return nil, bad(fmt.Sprintf("the copy does not hold entity %q's projected properties at its version", id))
	case !holds:
		return nil, nil
	}
	return v, nil
}

// copyStamp checks what the model stamps on every copy in the entity's
// partition (the entity's id, a version, a digest its properties give)
// and returns the id.
func (m *Model[T]) copyStamp(pk string, c *store.Entity) (string, error) {
	id, _ := c.Properties[IDProperty].(string)
	s, _ := c.Properties[SumProperty].(string)
	reason := ""
	switch {
	case id == "":
		reason = "the copy names no entity"
	case eventual.VersionOf(c) <= 0:
		reason = "the copy carries no version"
	case s == "":
		reason = "the copy carries no " + SumProperty
	case s != m.sumOf(own(c.Properties)):
		reason = "the copy's properties changed since the model wrote them"
	default:
		return id, nil
	}
	return "", &BypassError{Table: m.table, PartitionKey: pk, RowKey: c.RowKey, Reason: reason}
}

// scanIn yields the entities of the copies of index f in partition pk
// whose RowKeys lie in rng, in RowKey order (value, then id), each
// checked as lookup checks it; a copy a write took the value from since
// it was read is skipped.
func (m *Model[T]) scanIn(ctx context.Context, pk string, f *Feature[T], rng keys.Range) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		c := filter.PK.Eq(pk).And(filter.RK.InRange(rng))
		if err := c.Err(); err != nil {
			yield(nil, fmt.Errorf("model: %w", err))
			return
		}
		for row, err := range store.All(ctx, m.st.Table(m.table), store.Query{Filter: c.String()}) {
			if err != nil {
				yield(nil, err)
				return
			}
			v, err := m.lookup(ctx, pk, f, &row)
			if v == nil && err == nil {
				continue
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// refused yields err once.
func refused[T any](err error) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) { yield(nil, err) }
}

// partIndex is index name of the partition, for a read of ctx.
func (m *Model[T]) partIndex(ctx context.Context, name string) (*Feature[T], error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	return m.index(name, false)
}

// EachIn yields the entities of partition pk holding value in index name
// of the partition (unique or not), by id: FindAllIn as an iterator, one
// range query read page by page.
func (m *Model[T]) EachIn(ctx context.Context, pk, name, value string) iter.Seq2[*T, error] {
	f, err := m.partIndex(ctx, name)
	if err != nil {
		return refused[T](err)
	}
	var rng keys.Range
	if f.unique {
		rk, err := localKey(f, value, "")
		if err != nil {
			return refused[T](refuse("index %s: value %q: %v", name, value, err))
		}
		rng = keys.Range{Lower: rk, Upper: rk, HasUpper: true, UpperIncluded: true}
	} else if rng, err = keys.PrefixOf("i", f.name, value); err != nil {
		return refused[T](refuse("index %s: value %q: %v", name, value, err))
	}
	return m.scanIn(ctx, pk, f, rng)
}

// kindOf is the first part of the RowKeys of index f's copies in the
// entity's partition.
func kindOf[T any](f *Feature[T]) string {
	if f.unique {
		return "u"
	}
	return "i"
}

// RangeIn yields the entities of partition pk whose value in index name
// of the partition (unique or not) lies in [from, to) ("" as to: no
// upper bound), in value order, then by id: one range query of the
// copies, read page by page, each checked as FindIn checks it (through
// a projected index, one more point read per entity). Values compare as
// the service compares keys: by UTF-16 code units, so "B" comes before
// "a" and "é" after "z".
func (m *Model[T]) RangeIn(ctx context.Context, pk, name, from, to string) iter.Seq2[*T, error] {
	f, err := m.partIndex(ctx, name)
	if err != nil {
		return refused[T](err)
	}
	rng, err := valuesIn(kindOf(f), f.name, from, to)
	if err != nil {
		return refused[T](refuse("index %s: %v", name, err))
	}
	return m.scanIn(ctx, pk, f, rng)
}

// PrefixIn yields the entities of partition pk whose value in index name
// of the partition starts with prefix ("": every value), in value order,
// then by id, read and checked as RangeIn reads them.
func (m *Model[T]) PrefixIn(ctx context.Context, pk, name, prefix string) iter.Seq2[*T, error] {
	f, err := m.partIndex(ctx, name)
	if err != nil {
		return refused[T](err)
	}
	rng, err := valuePrefix(kindOf(f), f.name, prefix)
	if err != nil {
		return refused[T](refuse("index %s: prefix %q: %v", name, prefix, err))
	}
	return m.scanIn(ctx, pk, f, rng)
}

// valuesIn is the range of the keys Join(kind, name, value, ...) whose
// value lies in [from, to) ("" as to: no upper bound). Join's tuple
// order puts (kind, name, from) at or before the key of every value >=
// from (and whatever follows it), and (kind, name, to) after the keys of
// every value < to and at or before every key of to. Both RangeIn (the
// copies in the partition, by RowKey) and CopiesRange (the global
// copies, one partition per value) read through it.
func valuesIn(kind, name, from, to string) (keys.Range, error) {
	lo, err := keys.Join(kind, name, from)
	if err != nil {
		return keys.Range{}, fmt.Errorf("from %q: %w", from, err)
	}
	rng := keys.Range{Lower: lo}
	if to == "" {
		all, err := keys.PrefixOf(kind, name)
		rng.Upper, rng.HasUpper = all.Upper, all.HasUpper
		return rng, err
	}
	if rng.Upper, err = keys.Join(kind, name, to); err != nil {
		return keys.Range{}, fmt.Errorf("to %q: %w", to, err)
	}
	rng.HasUpper = true
	return rng, nil
}

// valuePrefix is the range of the keys Join(kind, name, value, ...)
// whose value starts with prefix. Escaping maps a value character by
// character, with a code that is prefix-free and never holds the parts'
// separator, so those values are the keys starting with the escaped
// prefix after (kind, name): none of them reaches into the part after
// the value. Join(kind, name, "") is (kind, name) and the separator, so
// the prefix "" is every value.
func valuePrefix(kind, name, prefix string) (keys.Range, error) {
	k, err := keys.Join(kind, name, prefix)
	if err != nil {
		return keys.Range{}, err
	}
	return keys.PrefixRange(k), nil
}
