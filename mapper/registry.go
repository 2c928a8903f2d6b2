package mapper

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrUnknownKind matches the error for an entity whose discriminator no
// registered type claims.
var ErrUnknownKind = errors.New("mapper: unknown entity kind")

// Registry maps the entity kinds of a heterogeneous table (the design
// guide's "work with heterogeneous entity types" pattern) to Go types, so
// that one query returns employees and departments as their own types.
// The kind is told by a discriminator: either a string property every
// entity carries (NewPropertyRegistry("EntityType")), or a RowKey prefix
// ("emp_", "dept_": NewPrefixRegistry), which also groups the entities of
// one kind together in a partition.
//
// Register every type before use; a Registry is then safe for concurrent
// use.
type Registry struct {
	prop   string // discriminator property; "" for RowKey prefixes
	byKind map[string]*kindType
	byType map[reflect.Type]*kindType
	kinds  []*kindType // registration order
	// latest is the newest version registered of each kind (by base).
	latest map[string]*kindType
	// migrations maps a type to the migration to the next version of
	// its kind.
	migrations map[reflect.Type]*migration
}

type kindType struct {
	kind    string // the stored marker: a prefix, or a discriminator value with its version
	base    string // the discriminator value without the version (= kind for prefixes)
	version int    // the layout version (1 when the type declares none)
	typ     reflect.Type
	c       *codec
}

// NewPropertyRegistry returns a registry that tells kinds by the string
// property prop: the registry writes it on every entity it encodes.
func NewPropertyRegistry(prop string) (*Registry, error) {
	if err := store.ValidatePropertyName(prop); err != nil {
		return nil, fmt.Errorf("mapper: discriminator property: %w", err)
	}
	if store.ReservedProperty(prop) {
		return nil, &Error{Msg: fmt.Sprintf("discriminator property %q starts with %q (store.ReservedPrefix), which tablekit keeps for its own properties", prop, store.ReservedPrefix)}
	}
	return &Registry{prop: prop, byKind: map[string]*kindType{}, byType: map[reflect.Type]*kindType{},
		latest: map[string]*kindType{}, migrations: map[reflect.Type]*migration{}}, nil
}

// NewPrefixRegistry returns a registry that tells kinds by a RowKey
// prefix: an entity's RowKey must start with its type's prefix.
func NewPrefixRegistry() *Registry {
	return &Registry{byKind: map[string]*kindType{}, byType: map[reflect.Type]*kindType{},
		latest: map[string]*kindType{}, migrations: map[reflect.Type]*migration{}}
}

// Register maps kind (a discriminator value, or a RowKey prefix) to T. It
// fails when T cannot be mapped, when T or kind is registered already,
// when a prefix is empty or one prefix starts another (an entity would
// match both), or when T has a field for the discriminator property that
// is not a string.
//
// The kind must be T's own (see Kind), so that every Repository of T keeps
// it too: for a property registry T must declare Kind{Property: the
// registry's property, Value: kind} (a Replace through a Repository of a
// type that does not would drop the discriminator); for a prefix registry,
// a Prefix T declares must be kind.
//
// Several versions of one kind (types declaring the same Value and
// different Versions) may be registered; rows of each are told apart by
// their stored marker (Kind.Marker), and Decode reads every version as the
// newest through the migrations given to Migrate.
func Register[T any](r *Registry, kind string) error {
	t := reflect.TypeFor[T]()
	c, err := codecFor(t)
	if err != nil {
		return err
	}
	if err := r.agrees(t, c, kind); err != nil {
		return err
	}
	base, version := kind, 1
	if r.prop != "" && c.kind.Version >= 2 {
		kind, version = c.kind.Marker(), c.kind.Version
	}
	if k, dup := r.byType[t]; dup {
		return &Error{Type: t, Msg: fmt.Sprintf("registered already, as kind %q", k.kind)}
	}
	if k, dup := r.byKind[kind]; dup {
		return &Error{Type: t, Msg: fmt.Sprintf("kind %q is registered already, for %s", kind, k.typ)}
	}
	if r.prop == "" {
		if kind == "" {
			return &Error{Type: t, Msg: "the RowKey prefix is empty, so it would claim every entity"}
		}
		if err := store.ValidateKeys("", kind); err != nil {
			return &Error{Type: t, Msg: fmt.Sprintf("prefix %q cannot start a RowKey", kind), Err: err}
		}
		for _, k := range r.kinds {
			if strings.HasPrefix(kind, k.kind) || strings.HasPrefix(k.kind, kind) {
				return &Error{Type: t, Msg: fmt.Sprintf("prefix %q overlaps prefix %q of %s: a RowKey could start with both", kind, k.kind, k.typ)}
			}
		}
	} else if f := c.byName[r.prop]; f != nil && f.kind != kString {
		return f.errorf("the discriminator property %q must be a string field, not %s", r.prop, f.typ)
	}
	k := &kindType{kind: kind, base: base, version: version, typ: t, c: c}
	r.byKind[kind] = k
	r.byType[t] = k
	r.kinds = append(r.kinds, k)
	if l := r.latest[base]; l == nil || l.version < version {
		r.latest[base] = k
	}
	return nil
}

// agrees checks that T's declared kind is the one it is registered as.
func (r *Registry) agrees(t reflect.Type, c *codec, kind string) error {
	k := c.kind
	if r.prop != "" {
		if k == nil || k.Property == "" {
			return &Error{Type: t, Msg: fmt.Sprintf("declare the kind on the type, so that every Repository[%s] writes the discriminator too: "+
				"func (%s) TableKind() mapper.Kind { return mapper.Kind{Property: %q, Value: %q} }", t, t.Name(), r.prop, kind)}
		}
		if k.Property != r.prop || k.Value != kind {
			return &Error{Type: t, Msg: fmt.Sprintf("registered as %s = %q, but the type declares %s", r.prop, kind, k)}
		}
		return nil
	}
	if k != nil && k.Prefix != "" && k.Prefix != kind {
		return &Error{Type: t, Msg: fmt.Sprintf("registered with RowKey prefix %q, but the type declares %s", kind, k)}
	}
	if k != nil && k.Prefix == "" {
		return &Error{Type: t, Msg: fmt.Sprintf("registered with RowKey prefix %q in a prefix registry, but the type declares no prefix (%s)", kind, k)}
	}
	return nil
}

// typeOf returns the registration of v's type (v a registered struct or
// a pointer to one).
// writeTarget is typeOf for a write, whose value must be a non-nil
// pointer (its ETag is stored back); op names the write in the error.
func (r *Registry) writeTarget(op string, v any) (*kindType, reflect.Value, error) {
	if rv := reflect.ValueOf(v); rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, reflect.Value{}, &Error{Type: reflect.TypeOf(v), Msg: op + ": want a non-nil pointer to a registered struct"}
	}
	return r.typeOf(v)
}

func (r *Registry) typeOf(v any) (*kindType, reflect.Value, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	} else if rv.IsValid() {
		p := reflect.New(rv.Type()).Elem()
		p.Set(rv)
		rv = p
	}
	if !rv.IsValid() {
		return nil, rv, &Error{Msg: "cannot encode nil: want a registered struct or a pointer to one"}
	}
	k := r.byType[rv.Type()]
	if k == nil {
		return nil, rv, &Error{Type: rv.Type(), Msg: fmt.Sprintf("not registered: call mapper.Register[%s] first", rv.Type())}
	}
	return k, rv, nil
}

// Encode maps v (a registered struct or pointer to one) to an entity
// carrying its discriminator.
func (r *Registry) Encode(v any) (store.Entity, error) {
	k, rv, err := r.typeOf(v)
	if err != nil {
		return store.Entity{}, err
	}
	return r.encode(k, rv)
}

func (r *Registry) encode(k *kindType, rv reflect.Value) (store.Entity, error) {
	e, err := k.c.encodeEntity(rv)
	if err != nil {
		return e, err
	}
	if r.prop != "" {
		e.Properties[r.prop] = k.kind
	}
	return e, r.checkPrefix(k, e.RowKey)
}

// checkPrefix refuses, in a prefix registry, a RowKey outside k's prefix.
func (r *Registry) checkPrefix(k *kindType, rk string) error {
	if r.prop == "" && !strings.HasPrefix(rk, k.kind) {
		return &Error{Type: k.typ, Msg: fmt.Sprintf("RowKey %s does not start with its kind's prefix %q", quote(rk), k.kind)}
	}
	return nil
}

// kindOf tells the kind of e.
func (r *Registry) kindOf(e *store.Entity) (*kindType, error) {
	if r.prop != "" {
		s, _ := e.Properties[r.prop].(string)
		if k := r.byKind[s]; k != nil {
			return k, nil
		}
		return nil, fmt.Errorf("%w: entity (%s, %s) has %s = %#v, which no registered type claims",
			ErrUnknownKind, quote(e.PartitionKey), quote(e.RowKey), r.prop, e.Properties[r.prop])
	}
	for _, k := range r.kinds {
		if strings.HasPrefix(e.RowKey, k.kind) {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: RowKey %s of partition %s starts with no registered prefix",
		ErrUnknownKind, quote(e.RowKey), quote(e.PartitionKey))
}

// Decode returns e as a value of its registered type (a T, not a *T):
// use a type switch. A row of an older version of a kind is returned as
// the newest version registered, through the migrations given to Migrate
// (an error naming the missing one when there is none). An unknown kind
// is an error matching ErrUnknownKind.
func (r *Registry) Decode(e store.Entity) (any, error) {
	k, err := r.kindOf(&e)
	if err != nil {
		return nil, err
	}
	p := reflect.New(k.typ)
	if err := k.c.decodeEntity(&e, p.Elem()); err != nil {
		return nil, err
	}
	if l := r.latest[k.base]; l != k {
		return r.migrate(&e, k, p.Elem(), l)
	}
	return p.Elem().Interface(), nil
}

// Cond returns the condition that selects the entities of kind: the
// discriminator property equal to it (to any registered version's marker
// when kind is a kind's value), or the RowKey range of the prefix.
func (r *Registry) Cond(kind string) filter.Cond {
	if r.prop == "" {
		return filter.RK.HasPrefix(kind)
	}
	var conds []filter.Cond
	for _, k := range r.kinds {
		if k.base == kind && k.kind != kind {
			conds = append(conds, filter.Prop(r.prop).Eq(k.kind))
		}
	}
	if len(conds) == 0 {
		return filter.Prop(r.prop).Eq(kind)
	}
	return filter.Or(append([]filter.Cond{filter.Prop(r.prop).Eq(kind)}, conds...)...)
}

// Query returns every entity of tbl matching where (the zero Cond for
// all), each decoded as its registered type, across every page.
//
// Deprecated: bind the registry to its table with On and use
// RegistryTable.Query, which takes the Repository's condition type and
// requests only the registered kinds. An entity
// of an unknown kind, or one that does not decode, yields an error and the
// sequence goes on if the loop continues; a failed request ends it.
func (r *Registry) Query(ctx context.Context, tbl store.Table, where filter.Cond) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		if err := where.Err(); err != nil {
			yield(nil, err)
			return
		}
		q := store.Query{Filter: where.String()}
		for {
			page, err := tbl.Query(ctx, q)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range page.Entities {
				if !yield(r.Decode(e)) {
					return
				}
			}
			if page.Continuation == "" {
				return
			}
			q.Continuation = page.Continuation
		}
	}
}

// Insert inserts v, a pointer to a registered struct, with its
// discriminator, and stores the new ETag in v's etag field.
func (r *Registry) Insert(ctx context.Context, tbl store.Table, v any) error {
	return r.write(v, func(e store.Entity, _ store.ETag) (store.ETag, error) { return tbl.Insert(ctx, e) })
}

// Upsert inserts or merges/replaces v, a pointer to a registered struct,
// and stores the new ETag in v's etag field.
func (r *Registry) Upsert(ctx context.Context, tbl store.Table, v any, mode store.UpdateMode) error {
	return r.write(v, func(e store.Entity, _ store.ETag) (store.ETag, error) { return tbl.Upsert(ctx, e, mode) })
}

func (r *Registry) write(v any, do func(store.Entity, store.ETag) (store.ETag, error)) error {
	k, rv, err := r.writeTarget("write", v)
	if err != nil {
		return err
	}
	e, err := r.encode(k, rv)
	if err != nil {
		return err
	}
	etag, err := do(e, "")
	if err != nil {
		return err
	}
	return k.c.setMeta(rv, etag)
}
