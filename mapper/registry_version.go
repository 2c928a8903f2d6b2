package mapper

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// ErrNoMigration matches the error for a row of an older version of a
// kind that no chain of migrations brings to the newest version registered.
var ErrNoMigration = errors.New("mapper: no migration to the newest version")

// migration turns a value of one version of a kind into the next.
type migration struct {
	to *kindType
	fn func(reflect.Value) (reflect.Value, error)
}

// Migrate gives r the function that turns a value of From, a version of a
// kind, into a value of To, a newer version of the same kind; both must be
// registered in r, as property kinds (Kind.Version). Decode then reads a
// row of From as the newest version of the kind, applying the migrations
// one after the other (From to To, To to the next, ...). fn maps the data
// fields; the keys, the ETag and the Timestamp of the migrated value are
// set from the row afterwards, so that an update of it is conditional on
// the row that was read. Register the types and their migrations before
// use. Migrate fails, naming the types, when either is unregistered, when
// they are versions of different kinds, when To is not newer, or when
// From has a migration already.
func Migrate[From, To any](r *Registry, fn func(From) (To, error)) error {
	ft, tt := reflect.TypeFor[From](), reflect.TypeFor[To]()
	if fn == nil {
		return &Error{Type: ft, Msg: fmt.Sprintf("Migrate to %s: the function is nil", tt)}
	}
	from, to := r.byType[ft], r.byType[tt]
	switch {
	case from == nil:
		return &Error{Type: ft, Msg: fmt.Sprintf("Migrate to %s: %s is not registered", tt, ft)}
	case to == nil:
		return &Error{Type: tt, Msg: fmt.Sprintf("Migrate from %s: %s is not registered", ft, tt)}
	case r.prop == "":
		return &Error{Type: ft, Msg: "Migrate: versions need a property registry: a prefix registry tells kinds by RowKey alone"}
	case from.base != to.base:
		return &Error{Type: ft, Msg: fmt.Sprintf("Migrate to %s: %s is kind %q and %s kind %q: a migration stays within one kind", tt, ft, from.base, tt, to.base)}
	case to.version <= from.version:
		return &Error{Type: ft, Msg: fmt.Sprintf("Migrate to %s: version %d is not newer than %s's version %d", tt, to.version, ft, from.version)}
	}
	if m := r.migrations[ft]; m != nil {
		return &Error{Type: ft, Msg: fmt.Sprintf("Migrate to %s: %s has a migration already, to %s", tt, ft, m.to.typ)}
	}
	r.migrations[ft] = &migration{to: to, fn: func(v reflect.Value) (reflect.Value, error) {
		out, err := fn(v.Interface().(From))
		if err != nil {
			return reflect.Value{}, err
		}
		p := reflect.New(tt).Elem()
		p.Set(reflect.ValueOf(out))
		return p, nil
	}}
	return nil
}

// migrate brings v, decoded from e as kind k, to the newest version l.
func (r *Registry) migrate(e *store.Entity, k *kindType, v reflect.Value, l *kindType) (any, error) {
	for k != l {
		m := r.migrations[k.typ]
		if m == nil {
			return nil, fmt.Errorf("%w: row (%s, %s) is %s version %d (%s), the newest registered is version %d (%s): give Migrate a function from %s",
				ErrNoMigration, quote(e.PartitionKey), quote(e.RowKey), k.base, k.version, k.typ, l.version, l.typ, k.typ)
		}
		next, err := m.fn(v)
		if err != nil {
			return nil, fmt.Errorf("mapper: migrating row (%s, %s) from %s to %s: %w", quote(e.PartitionKey), quote(e.RowKey), k.typ, m.to.typ, err)
		}
		k, v = m.to, next
	}
	if err := k.c.decodeMeta(e, v); err != nil {
		return nil, err
	}
	return v.Interface(), nil
}

// UpgradeReport counts what RegistryTable.Upgrade did.
type UpgradeReport struct {
	// Read is how many rows of the registered kinds were read.
	Read int
	// Upgraded is how many rows of an older version were rewritten as the
	// newest.
	Upgraded int
	// Changed is how many older rows changed between the read and the
	// rewrite (their ETag no longer matched) and were left for the next
	// run.
	Changed int
}

// Upgrade rewrites every row matching where that is an older version of
// its kind as the newest version (read, migrate, replace if the row still
// has the ETag read), so that Repositories of the newest type, which read
// only their own version's rows, see them too. A row that changed in
// between is counted and left for the next run; any other failure stops
// the run and is returned with the counts so far. Readers through the
// registry need no upgrade: Decode migrates on read.
func (t *RegistryTable) Upgrade(ctx context.Context, where ...Cond[any]) (UpgradeReport, error) {
	var rep UpgradeReport
	c := and(where)
	if err := c.Err(); err != nil {
		return rep, err
	}
	var old []filter.Cond
	for _, k := range t.r.kinds {
		if t.r.prop != "" && t.r.latest[k.base] != k {
			old = append(old, filter.Prop(t.r.prop).Eq(k.kind))
		}
	}
	if len(old) == 0 {
		return rep, nil
	}
	f := filter.And(c.c, filter.Or(old...))
	if err := f.Err(); err != nil {
		return rep, err
	}
	for e, err := range store.All(ctx, t.table, store.Query{Filter: f.String()}) {
		if err != nil {
			return rep, err
		}
		rep.Read++
		v, err := t.r.Decode(e)
		if err != nil {
			return rep, err
		}
		ne, err := t.r.Encode(v)
		if err != nil {
			return rep, err
		}
		_, err = t.table.Update(ctx, ne, store.Replace, e.ETag)
		switch {
		case errors.Is(err, store.ErrPreconditionFailed), store.EntityNotFound(err):
			rep.Changed++
		case err != nil:
			return rep, err
		default:
			rep.Upgraded++
		}
	}
	return rep, nil
}
