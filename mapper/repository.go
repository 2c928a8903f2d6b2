package mapper

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// ErrNoETag is returned by a conditional write of a value that carries no
// ETag: its type has no etag field, or the field is empty because the
// value was never read or written. Use the Unconditional form to
// overwrite regardless of the stored version.
var ErrNoETag = errors.New("mapper: no ETag for a conditional write")

// Repository is a typed view of one table whose entities map to T, a
// struct type. It is safe for concurrent use. A T that cannot be mapped
// (a bad tag, an unsupported field) makes every call fail with the
// *Error naming the field.
type Repository[T any] struct {
	table store.Table
	// typed is table's typed lane (store.TypedTable), nil without one.
	typed store.TypedTable
	c     *codec
	err   error
	opts  repoOptions
}

// Option configures a Repository.
type Option func(*repoOptions)

type repoOptions struct {
	noSelect bool
	pageSize int
}

// WithoutSelect makes reads return every property instead of asking the
// service for T's fields only. A T with an extra field never selects.
func WithoutSelect() Option { return func(o *repoOptions) { o.noSelect = true } }

// WithPageSize sets $top for the pages Query requests (1 to 1,000); the
// default is the service maximum.
func WithPageSize(n int) Option { return func(o *repoOptions) { o.pageSize = n } }

// NewRepository returns a repository of T over table name of st. It does
// no I/O; create the table with st.CreateTableIfNotExists.
func NewRepository[T any](st store.Store, table string, opts ...Option) *Repository[T] {
	r := &Repository[T]{table: st.Table(table)}
	r.typed, _ = driver.Typed(r.table)
	for _, o := range opts {
		o(&r.opts)
	}
	r.c, r.err = codecFor(reflect.TypeFor[T]())
	if r.err == nil {
		if err := store.ValidateTop(r.opts.pageSize); err != nil {
			r.err = fmt.Errorf("mapper: WithPageSize: %w", err)
		}
	}
	return r
}

// Table returns the underlying table.
func (r *Repository[T]) Table() store.Table { return r.table }

// Err reports whether T can be mapped: nil, or the *Error naming the
// offending field. Every other method returns the same error.
func (r *Repository[T]) Err() error { return r.err }

// selectNames is the $select of a read: T's properties, or nil for all.
func (r *Repository[T]) selectNames() []string {
	if r.opts.noSelect || r.c.extra != nil || len(r.c.selectNames) == 0 {
		return nil
	}
	return r.c.selectNames
}

// Get reads the entity with keys (pk, rk). A missing entity is an error
// matching store.ErrNotFound.
func (r *Repository[T]) Get(ctx context.Context, pk, rk string) (T, error) {
	var v T
	if r.err != nil {
		return v, r.err
	}
	if r.typed != nil {
		err := r.getTyped(ctx, pk, rk, reflect.ValueOf(&v).Elem())
		return v, err
	}
	e, err := r.table.Get(ctx, pk, rk, &store.GetOptions{Select: r.selectNames()})
	if err != nil {
		return v, err
	}
	err = r.c.decodeEntity(&e, reflect.ValueOf(&v).Elem())
	return v, err
}

// Reader is NewReader with the repository's mapping of T: a
// store.EntityReader that reads one entity into *v (zeroed first) as Get
// does, and finish, which ends the read and returns its error (a row of
// another kind matches ErrWrongKind). It is for reads Get does not make,
// such as a row under another key that holds a T.
func (r *Repository[T]) Reader(v *T) (rd store.EntityReader, finish func() error, err error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	if v == nil {
		return nil, nil, &Error{Type: r.c.typ, Msg: "Reader of a nil pointer"}
	}
	rr := newReader(r.c, reflect.ValueOf(v).Elem())
	return rr, rr.finish, nil
}

// getTyped reads through the typed lane straight into rv, with no
// projection: the reader drops what T does not map (T without an extra
// field), and a T with one selects everything anyway. A type with a kind
// is checked as the members stream by (the RowKey's prefix, the
// discriminator's value), and a row of another kind leaves rv zero.
func (r *Repository[T]) getTyped(ctx context.Context, pk, rk string, rv reflect.Value) error {
	rd := newReader(r.c, rv)
	if err := r.typed.GetInto(ctx, pk, rk, nil, rd); err != nil {
		return err
	}
	err := rd.finish()
	if err != nil && errors.Is(err, ErrWrongKind) {
		rv.SetZero()
	}
	return err
}

// GetByKey reads the entity whose keys *key has: its key fields, or what
// its TableKeys method computes from the fields that make the key, so no
// key arithmetic is written twice. Only the key fields of key are used.
// A missing entity is an error matching store.ErrNotFound; a row of
// another kind one matching ErrWrongKind.
//
//	o, err := orders.GetByKey(ctx, &Order{Customer: "c42", Placed: when, ID: "o7"})
func (r *Repository[T]) GetByKey(ctx context.Context, key *T) (T, error) {
	var v T
	_, rv, err := r.encodeKeys(key)
	if err != nil {
		return v, err
	}
	pk, rk, err := r.c.keysOf(rv)
	if err != nil {
		return v, err
	}
	return r.Get(ctx, pk, rk)
}

// DeleteByKey removes the entity whose keys *key has, whatever its
// version (If-Match *). Use Delete to delete only the version read.
func (r *Repository[T]) DeleteByKey(ctx context.Context, key *T) error {
	_, rv, err := r.encodeKeys(key)
	if err != nil {
		return err
	}
	pk, rk, err := r.c.keysOf(rv)
	if err != nil {
		return err
	}
	return r.table.Delete(ctx, pk, rk, store.ETagAny)
}

// encode maps *v to an entity.
func (r *Repository[T]) encode(v *T) (store.Entity, reflect.Value, error) {
	if r.err != nil {
		return store.Entity{}, reflect.Value{}, r.err
	}
	if v == nil {
		return store.Entity{}, reflect.Value{}, &Error{Type: r.c.typ, Msg: "nil pointer"}
	}
	rv := reflect.ValueOf(v).Elem()
	e, err := r.c.encodeEntity(rv)
	return e, rv, err
}

// Insert adds *v as a new entity and stores the new ETag in v's etag
// field. An existing key is an error matching store.ErrAlreadyExists.
func (r *Repository[T]) Insert(ctx context.Context, v *T) error {
	return r.write(ctx, store.ActionInsert, v, false)
}

// ifMatch returns the ETag for a conditional write of rv.
func (r *Repository[T]) ifMatch(rv reflect.Value) (store.ETag, error) { return r.c.ifMatch(rv) }

// Update merges or replaces the stored entity with *v if it still has the
// ETag held in v's etag field (optimistic concurrency), and stores the new
// ETag in v. A stale ETag is an error matching store.ErrPreconditionFailed;
// a value without an ETag is ErrNoETag. With store.Replace, properties T
// does not know are deleted unless T has an extra field.
func (r *Repository[T]) Update(ctx context.Context, v *T, mode store.UpdateMode) error {
	return r.write(ctx, updateKind(mode), v, true)
}

// UpdateUnconditional merges or replaces the stored entity whatever its
// version (If-Match *), and stores the new ETag in v.
func (r *Repository[T]) UpdateUnconditional(ctx context.Context, v *T, mode store.UpdateMode) error {
	return r.write(ctx, updateKind(mode), v, false)
}

// Upsert inserts *v or merges/replaces the existing entity, and stores
// the new ETag in v.
func (r *Repository[T]) Upsert(ctx context.Context, v *T, mode store.UpdateMode) error {
	return r.write(ctx, upsertKind(mode), v, false)
}

// write applies one insert, update or upsert of *v; conditional makes an
// update carry v's ETag as If-Match (else If-Match *). Over a typed table
// the struct is written straight into the backend's request; otherwise it
// becomes a store.Entity first.
func (r *Repository[T]) write(ctx context.Context, kind store.ActionKind, v *T, conditional bool) (err error) {
	ctx, fin := store.Observe(ctx, r.table, store.Operation{Name: writeName(kind), Table: tableName(r.table)})
	defer func() { fin.Finish(err, 0) }()
	return r.send(ctx, kind, v, conditional)
}

// writeName names a repository write for the instrumentation.
func writeName(kind store.ActionKind) string {
	switch kind {
	case store.ActionInsert:
		return "mapper.Insert"
	case store.ActionUpsertMerge, store.ActionUpsertReplace:
		return "mapper.Upsert"
	case store.ActionDelete:
		return "mapper.Delete"
	}
	return "mapper.Update"
}

// tableName is t's name, or "" for none.
func tableName(t store.Table) string {
	if t == nil {
		return ""
	}
	return t.Name()
}

func (r *Repository[T]) send(ctx context.Context, kind store.ActionKind, v *T, conditional bool) error {
	if r.typed == nil {
		return r.writeEntity(ctx, kind, v, conditional)
	}
	if r.err != nil {
		return r.err
	}
	if v == nil {
		return &Error{Type: r.c.typ, Msg: "nil pointer"}
	}
	rv := reflect.ValueOf(v).Elem()
	a, err := r.action(kind, rv, conditional)
	if err != nil {
		return err
	}
	etag, err := r.typed.Write(ctx, a)
	if err != nil {
		return err
	}
	return r.c.setMeta(rv, etag)
}

// action is the typed write of rv: its keys, its If-Match and rv itself as
// the source of its properties.
func (r *Repository[T]) action(kind store.ActionKind, rv reflect.Value, conditional bool) (store.Action, error) {
	pk, rk, err := r.c.keysOf(rv)
	if err != nil {
		return store.Action{}, err
	}
	a := store.Action{Kind: kind, Entity: store.Entity{PartitionKey: pk, RowKey: rk}}
	if kind != store.ActionDelete {
		a.Source = source{r.c, rv}
	}
	if kind.NeedsIfMatch() {
		a.IfMatch = store.ETagAny
		if conditional {
			if a.IfMatch, err = r.ifMatch(rv); err != nil {
				return store.Action{}, err
			}
		}
	}
	return a, nil
}

// writeEntity is write over a table without a typed lane.
func (r *Repository[T]) writeEntity(ctx context.Context, kind store.ActionKind, v *T, conditional bool) error {
	e, rv, err := r.encode(v)
	if err != nil {
		return err
	}
	var etag store.ETag
	switch kind {
	case store.ActionInsert:
		etag, err = r.table.Insert(ctx, e)
	case store.ActionUpsertMerge, store.ActionUpsertReplace:
		mode := store.Merge
		if kind == store.ActionUpsertReplace {
			mode = store.Replace
		}
		etag, err = r.table.Upsert(ctx, e, mode)
	default:
		mode := store.Merge
		if kind == store.ActionUpdateReplace {
			mode = store.Replace
		}
		ifMatch := store.ETagAny
		if conditional {
			if ifMatch, err = r.ifMatch(rv); err != nil {
				return err
			}
		}
		etag, err = r.table.Update(ctx, e, mode, ifMatch)
	}
	if err != nil {
		return err
	}
	return r.c.setMeta(rv, etag)
}

// Delete removes the entity of *v if it still has the ETag held in v's
// etag field. A stale ETag is an error matching store.ErrPreconditionFailed.
func (r *Repository[T]) Delete(ctx context.Context, v *T) (err error) {
	ctx, fin := store.Observe(ctx, r.table, store.Operation{Name: "mapper.Delete", Table: tableName(r.table)})
	defer func() { fin.Finish(err, 0) }()
	_, rv, err := r.encodeKeys(v)
	if err != nil {
		return err
	}
	etag, err := r.ifMatch(rv)
	if err != nil {
		return err
	}
	pk, rk, err := r.c.keysOf(rv)
	if err != nil {
		return err
	}
	return r.table.Delete(ctx, pk, rk, etag)
}

// DeleteKey removes the entity with keys (pk, rk) whatever its version.
func (r *Repository[T]) DeleteKey(ctx context.Context, pk, rk string) (err error) {
	if r.err != nil {
		return r.err
	}
	ctx, fin := store.Observe(ctx, r.table, store.Operation{Name: "mapper.Delete", Table: tableName(r.table)})
	defer func() { fin.Finish(err, 0) }()
	return r.table.Delete(ctx, pk, rk, store.ETagAny)
}

// encodeKeys checks v without encoding its properties (for deletes).
func (r *Repository[T]) encodeKeys(v *T) (store.Entity, reflect.Value, error) {
	if r.err != nil {
		return store.Entity{}, reflect.Value{}, r.err
	}
	if v == nil {
		return store.Entity{}, reflect.Value{}, &Error{Type: r.c.typ, Msg: "nil pointer"}
	}
	rv := reflect.ValueOf(v).Elem()
	var e store.Entity
	var err error
	e.PartitionKey, e.RowKey, err = r.c.keysOf(rv)
	return e, rv, err
}
