// Package index reads the design guide's intra-partition secondary
// index: an entity found by a value of one of its properties (an email, a
// last name) as fast as by its id, through a copy of it kept in its own
// partition under a RowKey made of the index's name and the value.
//
// The indexes, their copies and every write of them are the entity
// model's (package model): declare them with model.Unique and
// model.Index (optionally projected with Feature.Project), write with the
// model (Insert, Update, Upsert, Delete, Move), check and mend with
// Model.Check and Model.Repair. A View only reads them, in the pattern's
// vocabulary:
//
//	staff, err := model.Define(st, "Employees", &model.Options{Engine: eng},
//		model.Unique("email", func(e *Employee) string { return e.Email }),
//		model.Index("lastname", func(e *Employee) string { return e.LastName }).Project("FirstName"))
//	byValue, err := index.New(staff, nil)
//	err = staff.Insert(ctx, &e)                              // entity and copies, one transaction
//	e, err := byValue.Find(ctx, "Sales", "email", "ann@x")   // one point read
//	for e, err := range byValue.FindAll(ctx, "Sales", "lastname", "Jones") { ... }
//
// docs/patterns/index.md has the rows, the costs and the failure cases.
package index

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Options tune a View; nil takes the defaults.
type Options struct {
	// Indexes names the partition indexes (model.Unique, model.Index) the
	// view reads; default every partition index of the model. New refuses
	// a name the model does not declare as one.
	Indexes []string
}

// View reads the partition indexes of a model by value. It has no write
// of its own: write through the model, which keeps the copies. It is
// safe for concurrent use.
type View[T any] struct {
	m     *model.Model[T]
	idx   map[string]model.IndexInfo // the indexes the view reads
	names []string
	all   map[string]model.IndexInfo // every index of the model
}

// New returns the view of m's partition indexes. It refuses (with an
// error matching store.ErrInvalidInput) a nil model, a model that
// declares no partition index, and an Options.Indexes name that is not
// one of the model's partition indexes.
func New[T any](m *model.Model[T], opts *Options) (*View[T], error) {
	if m == nil {
		return nil, refuse("the model is nil")
	}
	v := &View[T]{m: m, idx: map[string]model.IndexInfo{}, all: map[string]model.IndexInfo{}}
	var part []string
	for _, ix := range m.Indexes() {
		v.all[ix.Name] = ix
		if !ix.Global {
			part = append(part, ix.Name)
		}
	}
	if len(part) == 0 {
		return nil, refuse("the model of table %s declares no partition index (model.Unique or model.Index): nothing for the view to read", m.Table())
	}
	want := part
	if opts != nil && opts.Indexes != nil {
		want = opts.Indexes
		if len(want) == 0 {
			return nil, refuse("Options.Indexes is empty: name at least one of the partition indexes (%s), or leave it nil for all", strings.Join(part, ", "))
		}
	}
	for _, n := range want {
		ix, ok := v.all[n]
		switch {
		case !ok:
			return nil, refuse("Options.Indexes: the model declares no index %q (its partition indexes: %s)", n, strings.Join(part, ", "))
		case ix.Global:
			return nil, globalRefusal(n)
		case v.idx[n].Name != "":
			return nil, refuse("Options.Indexes names %q twice", n)
		}
		v.idx[n] = ix
		v.names = append(v.names, n)
	}
	return v, nil
}

// Model returns the model the view reads: write through it.
func (v *View[T]) Model() *model.Model[T] { return v.m }

// Indexes returns the names of the indexes the view reads.
func (v *View[T]) Indexes() []string { return slices.Clone(v.names) }

// index returns the partition index name of the view.
func (v *View[T]) index(name string) (model.IndexInfo, error) {
	if ix, ok := v.idx[name]; ok {
		return ix, nil
	}
	if ix, ok := v.all[name]; ok && ix.Global {
		return model.IndexInfo{}, globalRefusal(name)
	}
	return model.IndexInfo{}, refuse("no partition index %q in the view (its indexes: %s)", name, strings.Join(v.names, ", "))
}

// Find returns the entity of partition pk holding value in unique index
// name: model.FindIn, one point read of its copy (the entity without its
// ETag), or two through a projected index (the entity read from its own
// row, with its ETag). Nothing holding the value is an error matching
// store.ErrNotFound; a copy written without the model one matching
// model.ErrBypassed.
func (v *View[T]) Find(ctx context.Context, pk, name, value string) (*T, error) {
	ix, err := v.index(name)
	if err != nil {
		return nil, err
	}
	if !ix.Unique {
		return nil, refuse("index %s is not unique: use FindAll", name)
	}
	return v.m.FindIn(ctx, pk, name, value)
}

// FindAll yields the entities of partition pk holding value in index
// name (unique or not), by id: model.EachIn, one range query read page
// by page (and, through a projected index, one point read per entity).
func (v *View[T]) FindAll(ctx context.Context, pk, name, value string) iter.Seq2[*T, error] {
	if _, err := v.index(name); err != nil {
		return refused[T](err)
	}
	return v.m.EachIn(ctx, pk, name, value)
}

// Range yields the entities of partition pk whose value in index name
// lies in [from, to) ("" as to: no upper bound), in value order (as the
// service orders keys: by UTF-16 code units), then by id: model.RangeIn.
func (v *View[T]) Range(ctx context.Context, pk, name, from, to string) iter.Seq2[*T, error] {
	if _, err := v.index(name); err != nil {
		return refused[T](err)
	}
	return v.m.RangeIn(ctx, pk, name, from, to)
}

// Prefix yields the entities of partition pk whose value in index name
// starts with prefix, in value order, then by id: model.PrefixIn.
func (v *View[T]) Prefix(ctx context.Context, pk, name, prefix string) iter.Seq2[*T, error] {
	if _, err := v.index(name); err != nil {
		return refused[T](err)
	}
	return v.m.PrefixIn(ctx, pk, name, prefix)
}

// refused yields err once.
func refused[T any](err error) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) { yield(nil, err) }
}

// globalRefusal refuses a global index, whose copies are not in the
// entity's partition.
func globalRefusal(name string) error {
	return refuse("index %s is global (its copies are in the index table, not in the entity's partition): read it with patterns/xindex or model.Find and model.FindAll", name)
}

// refuse builds a refusal of the view's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "index: "+format, args...)
	e.Source = store.SourceClient
	return e
}
