package driver

import (
	"time"

	"github.com/tablekit/tablekit/store"
)

// Typed returns t's typed lane, t as a store.TypedTable, when t has one.
// It is the one probe of the lane: the mapper and the patterns call it to
// choose the lane, and a wrapper calls it on the table it wraps to decide
// whether the table it returns offers the lane. A wrapper must return a
// store.TypedTable exactly when Typed reports one for the table it wraps;
// a wrapper that embeds store.Table and declares only some methods hides
// the lane, and every caller then takes the Entity lane without a sign.
// store/intercept builds wrappers that keep it.
func Typed(t store.Table) (store.TypedTable, bool) {
	tt, ok := t.(store.TypedTable)
	return tt, ok
}

// ReadEntity hands e to r: keys, Timestamp and ETag (when set), then its
// properties (store.ReadValue). A backend whose own read yields an Entity
// feeds a reader with it.
func ReadEntity(e *store.Entity, r store.EntityReader) error {
	if err := r.SetPartitionKey(e.PartitionKey); err != nil {
		return err
	}
	if err := r.SetRowKey(e.RowKey); err != nil {
		return err
	}
	if !e.Timestamp.IsZero() {
		if err := r.SetTimestamp(e.Timestamp); err != nil {
			return err
		}
	}
	if e.ETag != "" {
		if err := r.SetETag(e.ETag); err != nil {
			return err
		}
	}
	for k, v := range e.Properties {
		if err := store.ReadValue(r, k, v); err != nil {
			return err
		}
	}
	return nil
}

// EntityBuilder is a store.EntityReader that builds a store.Entity: the
// reader of a backend or wrapper that wants the map after all (a Get
// served by GetInto, a wrapper that rewrites what it reads).
type EntityBuilder struct {
	Entity store.Entity
}

func (b *EntityBuilder) set(name string, v any) error {
	if b.Entity.Properties == nil {
		b.Entity.Properties = make(map[string]any, 8)
	}
	b.Entity.Properties[string([]byte(name))] = v
	return nil
}

// SetPartitionKey implements store.EntityReader.
func (b *EntityBuilder) SetPartitionKey(pk string) error { b.Entity.PartitionKey = pk; return nil }

// SetRowKey implements store.EntityReader.
func (b *EntityBuilder) SetRowKey(rk string) error { b.Entity.RowKey = rk; return nil }

// SetTimestamp implements store.EntityReader.
func (b *EntityBuilder) SetTimestamp(t time.Time) error { b.Entity.Timestamp = t; return nil }

// SetETag implements store.EntityReader.
func (b *EntityBuilder) SetETag(etag store.ETag) error { b.Entity.ETag = etag; return nil }

// SetString implements store.EntityReader.
func (b *EntityBuilder) SetString(name, v string) error { return b.set(name, v) }

// SetBinary implements store.EntityReader.
func (b *EntityBuilder) SetBinary(name string, v []byte) error { return b.set(name, v) }

// SetBool implements store.EntityReader.
func (b *EntityBuilder) SetBool(name string, v bool) error { return b.set(name, v) }

// SetInt32 implements store.EntityReader.
func (b *EntityBuilder) SetInt32(name string, v int32) error { return b.set(name, v) }

// SetInt64 implements store.EntityReader.
func (b *EntityBuilder) SetInt64(name string, v int64) error { return b.set(name, v) }

// SetDouble implements store.EntityReader.
func (b *EntityBuilder) SetDouble(name string, v float64) error { return b.set(name, v) }

// SetTime implements store.EntityReader.
func (b *EntityBuilder) SetTime(name string, v time.Time) error { return b.set(name, v) }

// SetGUID implements store.EntityReader.
func (b *EntityBuilder) SetGUID(name string, v store.GUID) error { return b.set(name, v) }
