package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// GlobalKeys returns the keys of the entities that the rows of global
// index name hold for value, without reading or decoding any entity:
// one range query of the value's partition in the index table (more
// pages past 1,000 rows) selecting only the properties that name the
// entity. Each key is the entity's partition (PartitionKey) and its id,
// the struct's rk field (RowKey), sorted, each once. An empty value, or
// one no row holds, is an empty list.
//
// The rows are the index as the engine has left it: a key may name an
// entity that left the value (its copy not removed yet) or whose write
// has not committed (the claim a write sends beside its transaction), so
// check each entity read by it (ValueOf), as FindAll does.
func (m *Model[T]) GlobalKeys(ctx context.Context, name, value string) ([]store.Key, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	f, err := m.index(name, true)
	if err != nil {
		return nil, err
	}
	if value == "" {
		return nil, nil // never indexed
	}
	p, err := keys.Join("x", f.name, value)
	if err != nil {
		return nil, refuse("index %s: value %q: %v", name, value, err)
	}
	if err := store.ValidateKeys(p, ""); err != nil {
		return nil, fmt.Errorf("model: index %s: %w", name, err)
	}
	q := store.Query{Filter: filter.PK.Eq(p).String(),
		Select: []string{SourceTableProperty, SourcePartitionProperty, SourceRowProperty}}
	var out []store.Key
	for row, err := range store.All(ctx, m.st.Table(f.table), q) {
		if err != nil {
			return nil, err
		}
		o := owner(&row)
		id := idOf(o.RowKey)
		if o.Table != m.table || id == "" {
			continue // a row of another model sharing the index table
		}
		out = append(out, store.Key{PartitionKey: o.PartitionKey, RowKey: id})
	}
	slices.SortFunc(out, func(a, b store.Key) int {
		if c := strings.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return strings.Compare(a.RowKey, b.RowKey)
	})
	return slices.Compact(out), nil
}

// GetHolding reads the entities at ks (each its partition and id, as
// ListIDs and GlobalKeys name them), at most concurrency point reads at
// once (0 or less: 8), and returns, in the order of ks, those that exist
// and hold value in the List or index declared as name: a reader that
// found the keys through a list or an index leaves out an entity that a
// write moved off the value, or deleted, since. A failed read fails the
// call.
func (m *Model[T]) GetHolding(ctx context.Context, name, value string, ks []store.Key, concurrency int) ([]*T, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	f, err := m.valueFeature(name)
	if err != nil {
		return nil, err
	}
	if concurrency <= 0 {
		concurrency = listReads
	}
	out := make([]*T, len(ks))
	errs := make([]error, len(ks))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, k := range ks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			v, err := m.Get(ctx, k.PartitionKey, k.RowKey)
			switch {
			case store.EntityNotFound(err):
			case err != nil:
				errs[i] = err
			case f.value(v) == value:
				out[i] = v
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(v *T) bool { return v == nil }), nil
}

// valueFeature is the List or index declared as name.
func (m *Model[T]) valueFeature(name string) (*Feature[T], error) {
	if f := m.byName[name]; f != nil && f.kind == featIndex {
		return f, nil
	}
	if f, err := m.list(name); err == nil {
		return f, nil
	}
	return nil, refuse("no list or index named %q is declared", name)
}

// ValueOf returns the value v holds in the List or index declared as
// name: what its value function gives, "" for none. A reader that found
// an entity through a list or an index checks with it that the entity
// still holds the value it was looked up by.
func (m *Model[T]) ValueOf(name string, v *T) (string, error) {
	if v == nil {
		return "", refuse("the entity is nil")
	}
	f, err := m.valueFeature(name)
	if err != nil {
		return "", err
	}
	return f.value(v), nil
}

// ListNames returns the names of the declared Lists, in declaration order.
func (m *Model[T]) ListNames() []string {
	out := make([]string, len(m.lists))
	for i, f := range m.lists {
		out[i] = f.name
	}
	return out
}
