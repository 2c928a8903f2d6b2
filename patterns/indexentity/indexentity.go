// Package indexentity is the design guide's index entities pattern: for
// each value of a non-unique property (every employee whose last name is
// Jones), the keys of the entities that hold it, so that a lookup by that
// value reads the keys and then the entities, instead of scanning the
// table.
//
// It is a view on an entity model (package model), which keeps the keys
// on every write of the entity:
//
//   - model.List: one list per value in the entity's partition (the
//     guide's option 2), in segments written in the entity's own
//     transaction: always exact, a lookup scoped to one partition;
//   - model.GlobalIndex: one row per entity in the value's partition of
//     the index table (the guide's option 3 with a row per entity rather
//     than a list), written by the engine, read-your-writes: a lookup
//     across partitions.
//
// In use:
//
//	staff, err := model.Define(st, "Employees", &model.Options{Engine: eng},
//		model.List("lastname", func(e *Employee) string { return e.LastName }))
//	byName, err := indexentity.New(staff, nil)
//	err = staff.Insert(ctx, &e) // the entity and its list, one transaction
//	for e, err := range byName.FindAll(ctx, "Sales", "lastname", "Jones") { ... }
//
// docs/patterns/indexentity.md has the rows, the costs and the failure
// cases.
package indexentity

import (
	"context"
	"iter"
	"reflect"

	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Options tune a View; nil takes the defaults.
type Options struct {
	// Concurrency is how many entities FindAll reads at once (default 8,
	// at most 64).
	Concurrency int
	// PageSize is how many keys FindAll reads the entities of before it
	// yields them (default 100, at most 1,000).
	PageSize int
}

// Defaults and bounds of Options.
const (
	DefaultConcurrency = 8
	MaxConcurrency     = 64
	DefaultPageSize    = 100
	MaxPageSize        = 1000
)

// View finds the entities of a model by the value they hold in one of its
// Lists or global indexes. It has no writes of its own: write through the
// model (Insert, Update, Upsert, Delete, Move). It is safe for
// concurrent use.
type View[T any] struct {
	m       *model.Model[T]
	o       Options
	lists   map[string]bool
	globals map[string]bool
}

// New returns the view of m's Lists and global indexes. It refuses, with
// an error matching store.ErrInvalidInput, a nil model, a model that
// declares neither a List nor a GlobalIndex, and options out of range.
func New[T any](m *model.Model[T], opts *Options) (*View[T], error) {
	if m == nil || reflect.ValueOf(m).IsNil() {
		return nil, refuse("the model is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Concurrency < 0 || o.Concurrency > MaxConcurrency:
		return nil, refuse("Options.Concurrency %d: want 0 (the default, %d) to %d", o.Concurrency, DefaultConcurrency, MaxConcurrency)
	case o.PageSize < 0 || o.PageSize > MaxPageSize:
		return nil, refuse("Options.PageSize %d: want 0 (the default, %d) to %d", o.PageSize, DefaultPageSize, MaxPageSize)
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultPageSize
	}
	v := &View[T]{m: m, o: o, lists: map[string]bool{}, globals: map[string]bool{}}
	for _, n := range m.ListNames() {
		v.lists[n] = true
	}
	for _, ix := range m.Indexes() {
		if ix.Global {
			v.globals[ix.Name] = true
		}
	}
	if len(v.lists)+len(v.globals) == 0 {
		return nil, refuse("the model of table %s declares no List (model.List) nor global index (model.GlobalIndex): nothing to look up", m.Table())
	}
	return v, nil
}

// Keys returns the keys of the entities listed under value in list, in
// key order: for a model List, the entities of partition pk, from the
// list's segments (one range query), exact as of the last write; for a
// global index (pass pk ""), the entities of every partition, from the
// index's rows (one range query, no entity read), which may still name an
// entity that left the value until the engine has run (FindAll leaves it
// out). Each key is the entity's partition (PartitionKey) and its id, the
// struct's rk field (RowKey). An empty value is never listed.
func (v *View[T]) Keys(ctx context.Context, pk, list, value string) ([]store.Key, error) {
	if ctx == nil {
		return nil, refuse("the context is nil")
	}
	switch {
	case v.lists[list]:
		ids, err := v.m.ListIDs(ctx, list, pk, value)
		if err != nil {
			return nil, err
		}
		out := make([]store.Key, len(ids))
		for i, id := range ids {
			out[i] = store.Key{PartitionKey: pk, RowKey: id}
		}
		return out, nil
	case v.globals[list]:
		if pk != "" {
			return nil, refuse("%s is a global index, which covers every partition: pass the partition \"\", not %q", list, pk)
		}
		return v.m.GlobalKeys(ctx, list, value)
	}
	return nil, refuse("the model declares no List nor global index named %q", list)
}

// FindAll returns the entities listed under value in list, in key order
// (see Keys for the partition): it reads the keys, then the entities,
// Options.PageSize keys at a time with Options.Concurrency point reads
// (model.GetHolding) at once, yielding each page in order before reading the
// next. An entity that is gone, or no longer holds value when it is read
// (a write since the keys were read, a global index the engine has not
// caught up with), is left out: FindAll never yields an entity that does
// not hold the value. A failed read yields its error and ends the
// sequence.
func (v *View[T]) FindAll(ctx context.Context, pk, list, value string) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		ks, err := v.Keys(ctx, pk, list, value)
		if err != nil {
			yield(nil, err)
			return
		}
		for start := 0; start < len(ks); start += v.o.PageSize {
			page, err := v.m.GetHolding(ctx, list, value, ks[start:min(start+v.o.PageSize, len(ks))], v.o.Concurrency)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range page {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// refuse builds a refusal of the view's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "indexentity: "+format, args...)
	e.Source = store.SourceClient
	return e
}
