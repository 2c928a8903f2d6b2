package encryption

import (
	"context"
	"slices"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
)

// NewTable returns t as an encrypting table: every write encrypts the
// properties cfg names (Insert, Update, Upsert, Transact and, when t is a
// store.TypedTable, the typed Write, whose PropertySource is encrypted as
// it writes), and every read decrypts them (Get, Query, GetInto,
// QueryInto). The result is a store.TypedTable exactly when t is one, so
// the mapper keeps its typed lane through it.
//
// Three requests are refused before they are sent, with an error
// matching store.ErrInvalidInput: a query whose $filter names an
// encrypted property (the service holds only its ciphertext), a merge
// (Update or Upsert with store.Merge, or the merge actions) that carries
// an encrypted property (its content key would differ from the one the
// stored entity's metadata wraps; write such entities with
// store.Replace), and a write of a reserved metadata property.
//
// A read of an entity whose encrypted property fails to decrypt fails
// with an error matching ErrDecrypt.
func NewTable(t store.Table, cfg Config) (store.Table, error) {
	c, err := NewCodec(cfg)
	if err != nil {
		return nil, err
	}
	return c.Table(t), nil
}

// Table returns t as an encrypting table running c (see NewTable).
func (c *Codec) Table(t store.Table) store.Table {
	if tt, ok := driver.Typed(t); ok {
		return &typedTable{table{inner: t, c: c}, tt}
	}
	return &table{inner: t, c: c}
}

type table struct {
	inner store.Table
	c     *Codec
}

func (t *table) Name() string { return t.inner.Name() }

// selectFor adds the metadata properties to a projection, so that the
// selected encrypted properties can be decrypted.
func (t *table) selectFor(sel []string) []string {
	if len(sel) == 0 {
		return sel
	}
	out := slices.Clone(sel)
	for _, n := range [...]string{MetadataProperty, LegacyMetadataProperty, LegacyPropertiesProperty} {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (t *table) getOptions(opts *store.GetOptions) *store.GetOptions {
	if opts == nil || len(opts.Select) == 0 {
		return opts
	}
	return &store.GetOptions{Select: t.selectFor(opts.Select)}
}

func (t *table) Get(ctx context.Context, pk, rk string, opts *store.GetOptions) (store.Entity, error) {
	e, err := t.inner.Get(ctx, pk, rk, t.getOptions(opts))
	if err != nil {
		return e, err
	}
	return t.c.decryptOwned(ctx, t.inner.Name(), e)
}

func (t *table) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	enc, err := t.c.encryptEntity(ctx, t.inner.Name(), e, false)
	if err != nil {
		return "", err
	}
	return t.inner.Insert(ctx, enc)
}

func (t *table) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	enc, err := t.c.encryptEntity(ctx, t.inner.Name(), e, mode == store.Merge)
	if err != nil {
		return "", err
	}
	return t.inner.Update(ctx, enc, mode, ifMatch)
}

func (t *table) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	enc, err := t.c.encryptEntity(ctx, t.inner.Name(), e, mode == store.Merge)
	if err != nil {
		return "", err
	}
	return t.inner.Upsert(ctx, enc, mode)
}

func (t *table) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	return t.inner.Delete(ctx, pk, rk, ifMatch)
}

// checkQuery refuses a filter on an encrypted or reserved property and
// returns q with the metadata added to its projection.
func (t *table) checkQuery(q store.Query) (store.Query, error) {
	if q.Filter != "" {
		f, err := filter.Parse(q.Filter)
		if err != nil {
			return q, err
		}
		for _, p := range f.Properties() {
			if t.c.encrypted(p) || reserved(p) {
				return q, invalid("the filter names property %q, which is encrypted: the service holds only its ciphertext, so no filter on it can match as meant (filter on another property and test the decrypted values)", p)
			}
		}
	}
	q.Select = t.selectFor(q.Select)
	return q, nil
}

func (t *table) Query(ctx context.Context, q store.Query) (store.Page, error) {
	q, err := t.checkQuery(q)
	if err != nil {
		return store.Page{}, err
	}
	p, err := t.inner.Query(ctx, q)
	if err != nil {
		return p, err
	}
	for i, e := range p.Entities {
		if p.Entities[i], err = t.c.decryptOwned(ctx, t.inner.Name(), e); err != nil {
			return store.Page{}, err
		}
	}
	return p, nil
}

// encryptAction returns a with its properties encrypted.
func (t *table) encryptAction(ctx context.Context, a store.Action) (store.Action, error) {
	if a.Kind == store.ActionDelete {
		return a, nil
	}
	if a.Source != nil {
		a.Source = t.c.wrapSource(ctx, t.inner.Name(), a)
		return a, nil
	}
	merge := a.Kind == store.ActionUpdateMerge || a.Kind == store.ActionUpsertMerge
	var err error
	a.Entity, err = t.c.encryptEntity(ctx, t.inner.Name(), a.Entity, merge)
	return a, err
}

func (t *table) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	enc := make([]store.Action, len(actions))
	for i, a := range actions {
		var err error
		if enc[i], err = t.encryptAction(ctx, a); err != nil {
			return nil, store.WithIndex(err, i)
		}
	}
	return t.inner.Transact(ctx, enc)
}

type typedTable struct {
	table
	tt store.TypedTable
}

func (t *typedTable) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	a, err := t.encryptAction(ctx, a)
	if err != nil {
		return "", err
	}
	return t.tt.Write(ctx, a)
}

func (t *typedTable) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	d := t.c.newReader(ctx, t.inner.Name(), r)
	defer d.release()
	if err := t.tt.GetInto(ctx, pk, rk, t.getOptions(opts), d); err != nil {
		return err
	}
	return d.flush()
}

func (t *typedTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	q, err := t.checkQuery(q)
	if err != nil {
		return "", 0, err
	}
	var d *decReader
	defer func() {
		if d != nil {
			d.release()
		}
	}()
	cont, n, err := t.tt.QueryInto(ctx, q, func() store.EntityReader {
		if d != nil {
			if err := d.flush(); err != nil {
				return errReader{err}
			}
			d.r = next()
		} else {
			d = t.c.newReader(ctx, t.inner.Name(), next())
		}
		return d
	})
	if err != nil {
		return "", 0, err
	}
	if d != nil {
		if err := d.flush(); err != nil {
			return "", 0, err
		}
	}
	return cont, n, nil
}

// errReader fails the first member handed to it, so that a backend stops
// the page with err.
type errReader struct{ err error }

func (e errReader) SetPartitionKey(string) error     { return e.err }
func (e errReader) SetRowKey(string) error           { return e.err }
func (e errReader) SetTimestamp(time.Time) error     { return e.err }
func (e errReader) SetETag(store.ETag) error         { return e.err }
func (e errReader) SetString(string, string) error   { return e.err }
func (e errReader) SetBinary(string, []byte) error   { return e.err }
func (e errReader) SetBool(string, bool) error       { return e.err }
func (e errReader) SetInt32(string, int32) error     { return e.err }
func (e errReader) SetInt64(string, int64) error     { return e.err }
func (e errReader) SetDouble(string, float64) error  { return e.err }
func (e errReader) SetTime(string, time.Time) error  { return e.err }
func (e errReader) SetGUID(string, store.GUID) error { return e.err }
